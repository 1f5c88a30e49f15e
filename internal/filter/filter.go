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
	"time"

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
	ID               uuid.UUID
	OrganizationID   uuid.UUID
	SpaceID          uuid.UUID
	Hash             string
	UpstreamFilterID *uuid.UUID
	BackingUnitID    *uuid.UUID
	HiddenReason     string
	Version          int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Fields
}

// Fields are what a write sets.
type Fields struct {
	Slug          string       `json:"Slug"`
	DisplayName   string       `json:"DisplayName"`
	From          string       `json:"From"`
	Where         string       `json:"Where"`
	WhereData     string       `json:"WhereData"`
	ResourceType  string       `json:"ResourceType"`
	FromSpaceID   *uuid.UUID   `json:"FromSpaceID"`
	IncludeHidden string       `json:"IncludeHidden"`
	Permissions   authz.Grants `json:"Permissions"`
	entity.Meta
}

func (f Filter) authzTarget() authz.Target {
	return authz.Target{EntityType: EntityType, ID: f.ID.String(), Grants: f.Permissions, SpaceID: f.SpaceID}
}

// normalize puts the fields in their stored form and checks them on their own: From names a listed
// entity type and the definition is one its lists accept.
func normalize(f Fields) (Fields, error) {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return f, err
	}
	if err := f.Meta.Validate(); err != nil {
		return f, err
	}
	if err := f.Permissions.Validate("Permissions"); err != nil {
		return f, err
	}
	from := listquery.Lookup(f.From)
	if from == nil {
		return f, apierr.Validation(fmt.Sprintf("From %q is not an entity type that lists take filter= for; use one of: %v", f.From, listquery.Names()),
			apierr.Item{Item: "From", Description: "unknown entity type"})
	}
	return f, listquery.CheckDefinition(from, f.Where, f.WhereData, f.ResourceType, f.IncludeHidden)
}

// check requires a FromSpaceID the write sets to name a Space of the caller's organization.
func check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Filter, f Fields) (Fields, error) {
	if f.FromSpaceID == nil || (cur != nil && cur.FromSpaceID != nil && *cur.FromSpaceID == *f.FromSpaceID) {
		return f, nil
	}
	if _, err := space.Parent(ctx, sc, tx.Q, *f.FromSpaceID); err != nil {
		if apierr.Is(err, apierr.TypeNotFound) {
			return f, apierr.NoSuchReference(space.EntityType, "of your organization", "FromSpaceID")
		}
		return f, err
	}
	return f, nil
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
	f := Filter{
		ID: r.FilterID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, UpstreamFilterID: r.UpstreamFilterID,
		BackingUnitID: r.BackingUnitID, Hash: r.Hash, HiddenReason: r.HiddenReason, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, From: r.FromType, Where: r.WhereExpr, WhereData: r.WhereData,
			ResourceType: r.ResourceType, FromSpaceID: r.FromSpaceID, IncludeHidden: r.IncludeHidden},
	}
	var err error
	if f.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return f, err
	}
	if f.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return f, err
	}
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	return f, nil
}

// ListEntity is how Filters are listed (indexes: migration 000020).
var ListEntity = listquery.Define(&listquery.Entity{
	Name: EntityType, From: "filter", Columns: "filter.*", ID: "FilterID",
	Org: "filter.organization_id", Slug: "Slug", Contains: "filter.search_text", HiddenReason: "filter.hidden_reason",
	Visibility:    &listquery.Visibility{Grants: "filter.permissions", Space: "filter.space_id"},
	ContainsAttrs: []string{"Slug", "DisplayName", "From", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "FilterID", Type: listquery.UUID, SQL: "filter.filter_id", Filterable: true, Orderable: true, Always: true},
		{Name: "SpaceID", Type: listquery.UUID, SQL: "filter.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "filter.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "filter.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "filter.display_name", Filterable: true, Orderable: true},
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
		{Name: "Labels", Type: listquery.StringMap, SQL: "filter.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "filter.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "filter.delete_gates", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "filter.hidden_reason", Filterable: true, Orderable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "filter.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "filter.updated_at", Filterable: true, Orderable: true},
		{Name: "Permissions", Type: listquery.Opaque}, {Name: "Version", Type: listquery.Opaque},
		{Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"}},
})

// Family declares Filters to the entity kit: a Filter lives in a Space and carries Permissions.
var Family = &entity.Family[db.Filter, Filter, Fields]{
	Type: EntityType, Event: "filter", Listing: ListEntity, Parent: space.Of, SpaceColumn: "filter.space_id",
	ReadRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, lock bool) (*db.Filter, error) {
		if lock {
			return q.FilterGetByIDForUpdate(ctx, db.FilterGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, FilterID: id})
		}
		return q.FilterGetByID(ctx, db.FilterGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, FilterID: id})
	},
	ReadBySlug: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID uuid.UUID, slug string) (*db.Filter, error) {
		return q.FilterGetBySlug(ctx, db.FilterGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: slug})
	},
	ReadByIDs: func(ctx context.Context, q *db.Queries, sc authz.Scope, ids []uuid.UUID) ([]*db.Filter, error) {
		return q.FilterListByIDs(ctx, db.FilterListByIDsParams{OrganizationID: sc.OrganizationID, FilterIds: ids})
	},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Filter, error) {
		return q.FilterInsert(ctx, db.FilterInsertParams{
			FilterID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			FromType: f.From, WhereExpr: f.Where, WhereData: f.WhereData, ResourceType: f.ResourceType,
			FromSpaceID: f.FromSpaceID, IncludeHidden: f.IncludeHidden, Hash: definitionHash(f),
		})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Filter, f Fields) (*db.Filter, error) {
		row, err := q.FilterUpdate(ctx, db.FilterUpdateParams{
			OrganizationID: sc.OrganizationID, FilterID: cur.ID, Version: cur.Version, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			FromType: f.From, WhereExpr: f.Where, WhereData: f.WhereData, ResourceType: f.ResourceType,
			FromSpaceID: f.FromSpaceID, IncludeHidden: f.IncludeHidden, Hash: definitionHash(f),
		})
		if store.ViolatesConstraint(err, "view_filter_of_fkey") {
			return nil, apierr.Validation(fmt.Sprintf("From: Views of %s use this Filter; clear their FilterID before it selects %s", cur.From, f.From),
				apierr.Item{Item: "From", Description: "used by Views of " + cur.From})
		}
		return row, err
	},
	DeleteRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Filter) (int64, error) {
		return q.FilterDelete(ctx, db.FilterDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: cur.SpaceID, FilterID: cur.ID})
	},
	MoveRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Filter, toSpaceID uuid.UUID) (*db.Filter, error) {
		return q.FilterMove(ctx, db.FilterMoveParams{OrganizationID: sc.OrganizationID, FilterID: cur.ID, ToSpaceID: toSpaceID})
	},
	SetUpstream: func(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*db.Filter, error) {
		return q.FilterSetUpstream(ctx, db.FilterSetUpstreamParams{OrganizationID: sc.OrganizationID, FilterID: id, UpstreamFilterID: &upstream})
	},
	FromRow: fromRow,
	Ident: func(f Filter) entity.Ident {
		return entity.Ident{ID: f.ID, SpaceID: f.SpaceID, Slug: f.Slug, Version: f.Version, DeleteGates: f.DeleteGates}
	},
	Fields:       func(f Filter) Fields { return f.Fields },
	Slug:         func(f Fields) string { return f.Slug },
	Target:       Filter.authzTarget,
	Grants:       func(f Fields) authz.Grants { return f.Permissions },
	Normalize:    normalize,
	Check:        check,
	DocumentSpec: entity.DocumentSpec{Omit: []string{"Permissions"}, Refs: []entity.DocumentRef{space.DocumentRef("FromSpaceID", "FromSpace")}},
}

// DocumentRef shows a reference to a Filter (field, FilterID) in documents by name (name, Filter): its Slug
// when it is in the document's Space, else <Space Slug>/<Slug>.
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
			sp, err := space.Parent(ctx, sc, c.Queries(), f.SpaceID)
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

// Service carries out Filter operations (the kit's).
type Service = entity.Service[db.Filter, Filter, Fields]

// NewService serves Filters from a store.
func NewService(deps entity.Deps) *Service {
	return entity.NewService(Family, deps)
}

// ListSelecting lists the Filters (of the organization, with the list's parameters) that select the entity
// id of type entityType: those of that type whose definition it meets. The page keeps its continuation,
// so it may hold fewer Filters than its limit and still have successors.
func ListSelecting(ctx context.Context, svc *Service, sc authz.Scope, path string, params listquery.Params, entityType string, id uuid.UUID) (listquery.Page[Filter], error) {
	of := listquery.Lookup(entityType)
	if of == nil {
		return listquery.Page[Filter]{}, apierr.Validation(fmt.Sprintf("entity %q is not an entity type Filters select; use one of: %v", entityType, listquery.Names()),
			apierr.Item{Item: "entity", Description: "unknown entity type"})
	}
	// The selection is part of what the list is: continue tokens are bound to it.
	path += "?entity=" + entityType + "&id=" + id.String()
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
