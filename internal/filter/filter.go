// Package filter holds the rules of Filters: stored selections (a Where, and for Units a WhereData and
// ResourceType) of one entity type, From, kept in a Space. A Filter's definition is checked against
// From's list registry when it is written, so a list that uses it never fails on it.
package filter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Filter's type name.
const EntityType = "Filter"

// Filter is a stored Filter.
type Filter struct {
	entity.Object
	Hash             string
	UpstreamFilterID *uuid.UUID
	BackingUnitID    *uuid.UUID
	Fields
}

// Fields are what a write sets.
type Fields struct {
	entity.Common
	From          string     `json:"From"`
	Where         string     `json:"Where"`
	WhereData     string     `json:"WhereData"`
	ResourceType  string     `json:"ResourceType"`
	FromSpaceID   *uuid.UUID `json:"FromSpaceID"`
	IncludeHidden string     `json:"IncludeHidden"`
}

// definitionHash is the lowercase hex SHA-256 of what a Filter selects (From to IncludeHidden, one per
// line), stored as Hash.
func definitionHash(f Fields) string {
	fromSpace := ""
	if f.FromSpaceID != nil {
		fromSpace = f.FromSpaceID.String()
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{f.From, f.Where, f.WhereData, f.ResourceType, fromSpace, f.IncludeHidden}, "\n")))
	return hex.EncodeToString(sum[:])
}

func fromRow(r *db.Filter) (Filter, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	return Filter{
		Object: entity.Object{ID: r.FilterID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		UpstreamFilterID: r.UpstreamFilterID, BackingUnitID: r.BackingUnitID, Hash: r.Hash,
		Fields: Fields{Common: c, From: r.FromType, Where: r.WhereExpr, WhereData: r.WhereData,
			ResourceType: r.ResourceType, FromSpaceID: r.FromSpaceID, IncludeHidden: r.IncludeHidden},
	}, err
}

// ListEntity is how Filters are listed (indexes: migration 000020).
var ListEntity = listquery.Standard{Table: "filter", ID: "FilterID", InSpace: true, Permissions: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "From", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		// What the Filter selects: select always returns it.
		{Name: "From", Type: listquery.String, SQL: "filter.from_type", Filterable: true, Orderable: true, Always: true},
		{Name: "Where", Type: listquery.String, SQL: "filter.where_expr", Filterable: true, Orderable: true},
		{Name: "WhereData", Type: listquery.String, SQL: "filter.where_data", Filterable: true, Orderable: true},
		{Name: "ResourceType", Type: listquery.String, SQL: "filter.resource_type", Filterable: true, Orderable: true},
		{Name: "IncludeHidden", Type: listquery.String, SQL: "filter.include_hidden", Filterable: true, Orderable: true},
		{Name: "Hash", Type: listquery.String, SQL: "filter.hash", Filterable: true, Orderable: true},
		listquery.NullableUUID("FromSpaceID", "filter.from_space_id"),
		listquery.NullableUUID("UpstreamFilterID", "filter.upstream_filter_id"),
		listquery.NullableUUID("BackingUnitID", "filter.backing_unit_id"),
	},
})

func rowParams(f Fields) db.FilterInsertParams {
	return db.FilterInsertParams{Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		FromType: f.From, WhereExpr: f.Where, WhereData: f.WhereData, ResourceType: f.ResourceType,
		FromSpaceID: f.FromSpaceID, IncludeHidden: f.IncludeHidden, Hash: definitionHash(f)}
}

// Family declares Filters to the entity kit: a Filter lives in a Space and carries Permissions; it is
// checked against the list registry of what it selects when written, and copied and moved in bulk.
var Family = entity.Declare(&entity.Family[db.Filter, Filter, Fields]{
	Type: EntityType, Event: "filter", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Filter, error) {
		p := rowParams(f)
		p.FilterID, p.OrganizationID, p.SpaceID = id, sc.OrganizationID, spaceID
		return q.FilterInsert(ctx, p)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Filter, f Fields) (*db.Filter, error) {
		p := rowParams(f)
		row, err := q.FilterUpdate(ctx, db.FilterUpdateParams{OrganizationID: sc.OrganizationID, FilterID: cur.ID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Labels: p.Labels, Annotations: p.Annotations, DeleteGates: p.DeleteGates,
			Permissions: p.Permissions, FromType: p.FromType, WhereExpr: p.WhereExpr, WhereData: p.WhereData,
			ResourceType: p.ResourceType, FromSpaceID: p.FromSpaceID, IncludeHidden: p.IncludeHidden, Hash: p.Hash})
		if store.ViolatesConstraint(err, "view_filter_of_fkey") {
			return nil, apierr.Validation(fmt.Sprintf("From: Views of %s use this Filter; clear their FilterID before it selects %s", cur.From, f.From),
				apierr.Item{Item: "From", Description: "used by Views of " + cur.From})
		}
		return row, err
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks them on their own: From names a listed
// entity type and the definition is one its lists accept.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = f.Common.Normalized()
	if err := f.Common.Validate(true); err != nil {
		return f, err
	}
	from := listquery.Lookup(f.From)
	if from == nil {
		return f, apierr.Validation(fmt.Sprintf("From %q is not an entity type that lists take filter= for; use one of: %v", f.From, listquery.Names()),
			apierr.Item{Item: "From", Description: "unknown entity type"})
	}
	return f, listquery.CheckDefinition(from, f.Where, f.WhereData, f.ResourceType, f.IncludeHidden)
}

// Check keeps the Triggers that select Units with the Filter (in any Space) able to select them, and
// requires a FromSpaceID the write sets to name a Space of the caller's organization that the caller may
// see into: one it may not is refused exactly as a random ID is, so the answer tells nothing of it.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Filter, f Fields) (Fields, error) {
	if cur != nil && FitsTrigger(f) != nil {
		triggers, err := tx.Q.TriggersUsingFilter(ctx, db.TriggersUsingFilterParams{OrganizationID: sc.OrganizationID, FilterID: cur.ID})
		if err != nil {
			return f, err
		}
		if len(triggers) > 0 {
			t := triggers[0]
			return f, apierr.Validation(fmt.Sprintf("Trigger %s selects Units with this Filter and could not after this change: %s", t.TriggerID, apierr.MessageOf(FitsTrigger(f))),
				apierr.Item{Item: "From", Description: "Trigger " + t.TriggerID.String() + " could not select Units"})
		}
	}
	if f.FromSpaceID == nil || (cur != nil && cur.FromSpaceID != nil && *cur.FromSpaceID == *f.FromSpaceID) {
		return f, nil
	}
	if _, _, err := space.VisibleParent(ctx, sc, tx.Q, *f.FromSpaceID); err != nil {
		if apierr.Is(err, apierr.TypeNotFound) {
			return f, apierr.NoSuchReference(space.EntityType, "of your organization", "FromSpaceID")
		}
		return f, err
	}
	return f, nil
}

// MoveRow puts a Filter in another Space.
func (strategy) MoveRow(ctx context.Context, q *db.Queries, sc authz.Scope, cur Filter, toSpaceID uuid.UUID) (*db.Filter, error) {
	return q.FilterMove(ctx, db.FilterMoveParams{OrganizationID: sc.OrganizationID, FilterID: cur.ID, ToSpaceID: toSpaceID})
}

// SetUpstream records the Filter a copy was made from.
func (strategy) SetUpstream(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*db.Filter, error) {
	return q.FilterSetUpstream(ctx, db.FilterSetUpstreamParams{OrganizationID: sc.OrganizationID, FilterID: id, UpstreamFilterID: &upstream})
}

// DocumentSpec: a Filter's document leaves its Permissions out and shows FromSpaceID as the Space's Slug.
func (strategy) DocumentSpec() entity.DocumentSpec {
	return entity.DocumentSpec{Omit: []string{"Permissions"}, Refs: []entity.DocumentRef{space.DocumentRef("FromSpaceID", "FromSpace")}}
}

// DocumentRef shows a reference to a Filter (field, FilterID) in documents by name (name, Filter): its Slug
// when it is in the document's Space, else <Space Slug>/<Slug>. One the caller may not view, or in a Space
// it may not see into, is shown as it is stored (its ID): a document names nothing invisible.
func DocumentRef(field, name string) entity.DocumentRef {
	return entity.DocumentRef{
		Field: field, Name: name,
		Named: func(ctx context.Context, sc authz.Scope, c store.Conn, spaceID, id uuid.UUID) (string, error) {
			found, err := Family.Visible(ctx, c, sc, []uuid.UUID{id})
			if err != nil {
				return "", err
			}
			f, ok := found[id]
			switch {
			case !ok:
				return id.String(), nil // one the caller may not view is shown as it is stored
			case f.SpaceID == spaceID:
				return f.Slug, nil
			}
			sp, _, err := space.VisibleParent(ctx, sc, c.Queries(), f.SpaceID)
			if apierr.Is(err, apierr.TypeNotFound) {
				return id.String(), nil
			}
			if err != nil {
				return "", err
			}
			return sp.Slug + "/" + f.Slug, nil
		},
		Resolve: func(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, name string) (uuid.UUID, error) {
			f, err := space.Named(ctx, sc, c, Family, spaceID, name)
			return f.ID, err
		},
	}
}

// ListSelecting lists the Filters (of the organization, with the list's parameters) that select the entity
// id of type entityType: those of that type whose definition it meets. The page keeps its continuation,
// so it may hold fewer Filters than its limit and still have successors.
func ListSelecting(ctx context.Context, kit entity.Deps, sc authz.Scope, path string, params listquery.Params, entityType string, id uuid.UUID) (listquery.Page[Filter], error) {
	of := listquery.Lookup(entityType)
	if of == nil {
		return listquery.Page[Filter]{}, apierr.Validation(fmt.Sprintf("entity %q is not an entity type Filters select; use one of: %v", entityType, listquery.Names()),
			apierr.Item{Item: "entity", Description: "unknown entity type"})
	}
	// The selection is part of what the list is: continue tokens are bound to it.
	path += "?entity=" + entityType + "&id=" + id.String()
	svc := entity.NewService(Family, kit)
	page, err := svc.List(ctx, sc, nil, path, params, listquery.Condition{Column: "filter.from_type", Value: entityType})
	if err != nil {
		return page, err
	}
	defs := make([]listquery.FilterDefinition, len(page.Items))
	for i, f := range page.Items {
		defs[i] = Definition(f)
	}
	selects, found, err := listquery.Selecting(ctx, svc.Store.Pool, of, sc, id, defs)
	if err != nil {
		return page, err
	}
	if !found {
		return page, apierr.Validation(fmt.Sprintf("id: no %s %s that you may view", entityType, id), apierr.Item{Item: "id", Description: "no such " + entityType})
	}
	kept := page.Items[:0]
	var data [][]json.RawMessage
	for i, f := range page.Items {
		if selects[i] {
			kept = append(kept, f)
			if page.ViewData != nil {
				data = append(data, page.ViewData[i])
			}
		}
	}
	page.Items, page.ViewData = kept, data
	return page, nil
}

// Definition is the Filter as lists apply it (filter=).
func Definition(f Filter) listquery.FilterDefinition {
	return listquery.FilterDefinition{ID: f.ID, From: f.From, Hash: f.Hash, Where: f.Where, WhereData: f.WhereData,
		ResourceType: f.ResourceType, IncludeHidden: f.IncludeHidden}
}

// FitsTrigger checks that a Trigger can select Units with a Filter: one of Units that selects by their
// attributes only, its WhereData and ResourceType empty (a Trigger selects a Unit as its write begins,
// before its new data).
func FitsTrigger(f Fields) error {
	if f.From != "Unit" {
		return apierr.Validation(fmt.Sprintf("a Trigger's Filter selects Units, not %s", f.From), apierr.Item{Item: "From", Description: "not Unit"})
	}
	if f.WhereData != "" || f.ResourceType != "" {
		return apierr.Validation("a Trigger's Filter selects Units by their attributes; its WhereData and ResourceType must be empty",
			apierr.Item{Item: "WhereData", Description: "selects by data"})
	}
	return nil
}

// Referenced returns the Filter that field of another entity names (a View's FilterID, a Trigger's
// UnitFilterID): a Filter of the caller's organization it may view (else 400 naming field) that selects
// entities of type from (else 400 Validation).
func Referenced(ctx context.Context, c store.Conn, sc authz.Scope, id uuid.UUID, field, from string) (Filter, error) {
	found, err := Family.Visible(ctx, c, sc, []uuid.UUID{id})
	if err != nil {
		return Filter{}, err
	}
	flt, ok := found[id]
	if !ok {
		return Filter{}, apierr.NoSuchReference(EntityType, "of your organization", field)
	}
	if flt.From != from {
		return flt, apierr.Validation(fmt.Sprintf("%s: Filter %s selects %s, not %s", field, flt.ID, flt.From, from),
			apierr.Item{Item: field, Description: "a Filter of " + flt.From})
	}
	return flt, nil
}
