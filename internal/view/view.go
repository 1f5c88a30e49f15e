// Package view holds the rules of Views: stored column layouts over the lists of one entity type, Of,
// kept in a Space. A list naming a View (view=) returns its columns' values on every item, applies its
// Filter and orders by its GroupBy and OrderBy. A View's definition is checked against Of's list registry
// when it is written, so a list that uses it never fails on it.
package view

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the View's type name.
const EntityType = "View"

// View is a stored View.
type View struct {
	entity.Object
	Hash           string
	UpstreamViewID *uuid.UUID
	BackingUnitID  *uuid.UUID
	Fields
}

// Fields are what a write sets.
type Fields struct {
	entity.Common
	Of               string     `json:"Of"`
	Columns          []Column   `json:"Columns"`
	FilterID         *uuid.UUID `json:"FilterID"`
	GroupBy          string     `json:"GroupBy"`
	OrderBy          string     `json:"OrderBy"`
	OrderByDirection string     `json:"OrderByDirection"`
}

// Column is one column of a View; its JSON form is the API's (and the stored one).
type Column struct {
	Name         string       `json:"Name"`
	ColumnSource ColumnSource `json:"ColumnSource"`
}

// ColumnSource says where a column's values come from: exactly one of MetadataAttribute and DataPath.
type ColumnSource struct {
	MetadataAttribute string             `json:"MetadataAttribute"`
	DataPath          *AttributeSelector `json:"DataPath"`
}

// AttributeSelector is a path into a Unit's configuration data, optionally of one resource type.
type AttributeSelector struct {
	Path         string `json:"Path"`
	ResourceType string `json:"ResourceType"`
}

// Definition is the View as lists apply it (without its Filter, which the caller resolves).
func (v View) Definition() listquery.ViewDefinition {
	return listquery.ViewDefinition{ID: v.ID, Of: v.Of, Hash: v.Hash, Columns: columnSources(v.Columns),
		GroupBy: v.GroupBy, OrderBy: v.OrderBy, OrderByDirection: v.OrderByDirection}
}

func columnSources(cols []Column) []listquery.ViewColumnSource {
	out := make([]listquery.ViewColumnSource, len(cols))
	for i, c := range cols {
		out[i] = listquery.ViewColumnSource{Name: c.Name, MetadataAttribute: c.ColumnSource.MetadataAttribute}
		if d := c.ColumnSource.DataPath; d != nil {
			out[i].DataPath, out[i].ResourceType = d.Path, d.ResourceType
		}
	}
	return out
}

// definitionHash is the lowercase hex SHA-256 of what a View shows (Of, Columns, FilterID, GroupBy,
// OrderBy, OrderByDirection), stored as Hash.
func definitionHash(f Fields) string {
	def, _ := json.Marshal([]any{f.Of, f.Columns, f.FilterID, f.GroupBy, f.OrderBy, f.OrderByDirection})
	sum := sha256.Sum256(def)
	return hex.EncodeToString(sum[:])
}

func fromRow(r *db.View) (View, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	v := View{
		Object: entity.Object{ID: r.ViewID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		UpstreamViewID: r.UpstreamViewID, BackingUnitID: r.BackingUnitID, Hash: r.Hash,
		Fields: Fields{Common: c, Of: r.OfType, FilterID: r.FilterID, GroupBy: r.GroupBy, OrderBy: r.OrderBy, OrderByDirection: r.OrderByDirection},
	}
	if err != nil {
		return v, err
	}
	if v.Columns, err = store.DecodeJSON[[]Column](r.Columns); err != nil {
		return v, err
	}
	if v.Columns == nil {
		v.Columns = []Column{}
	}
	return v, nil
}

// ListEntity is how Views are listed (indexes: migration 000021).
var ListEntity = listquery.Standard{Table: "view", ID: "ViewID", InSpace: true, Permissions: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "Of", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		// The type the View applies to: select always returns it.
		{Name: "Of", Type: listquery.String, SQL: "view.of_type", Filterable: true, Orderable: true, Always: true},
		{Name: "GroupBy", Type: listquery.String, SQL: "view.group_by", Filterable: true, Orderable: true},
		{Name: "OrderBy", Type: listquery.String, SQL: "view.order_by", Filterable: true, Orderable: true},
		{Name: "OrderByDirection", Type: listquery.String, SQL: "view.order_by_direction", Filterable: true, Orderable: true},
		{Name: "Hash", Type: listquery.String, SQL: "view.hash", Filterable: true, Orderable: true},
		listquery.NullableUUID("FilterID", "view.filter_id"),
		listquery.NullableUUID("UpstreamViewID", "view.upstream_view_id"),
		listquery.NullableUUID("BackingUnitID", "view.backing_unit_id"),
		listquery.After("UpdatedAt"),
		{Name: "Columns", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "FilterID", Field: "Filter"}},
})

func rowParams(f Fields) db.ViewInsertParams {
	return db.ViewInsertParams{Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		OfType: f.Of, Columns: store.EncodeJSON(f.Columns), FilterID: f.FilterID, GroupBy: f.GroupBy,
		OrderBy: f.OrderBy, OrderByDirection: f.OrderByDirection, Hash: definitionHash(f)}
}

// Family declares Views to the entity kit: a View lives in a Space and carries Permissions; it is checked
// against the list registry of what it shows when written, and copied and moved in bulk.
var Family = entity.Declare(&entity.Family[db.View, View, Fields]{
	Type: EntityType, Event: "view", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.View, error) {
		p := rowParams(f)
		p.ViewID, p.OrganizationID, p.SpaceID = id, sc.OrganizationID, spaceID
		return q.ViewInsert(ctx, p)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur View, f Fields) (*db.View, error) {
		p := rowParams(f)
		return q.ViewUpdate(ctx, db.ViewUpdateParams{OrganizationID: sc.OrganizationID, ViewID: cur.ID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Labels: p.Labels, Annotations: p.Annotations, DeleteGates: p.DeleteGates,
			Permissions: p.Permissions, OfType: p.OfType, Columns: p.Columns, FilterID: p.FilterID, GroupBy: p.GroupBy,
			OrderBy: p.OrderBy, OrderByDirection: p.OrderByDirection, Hash: p.Hash})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks them on their own: Of names a listed entity
// type and the columns and order are ones its lists accept.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = f.Common.Normalized()
	if f.Columns == nil {
		f.Columns = []Column{}
	}
	for i := range f.Columns {
		if d := f.Columns[i].ColumnSource.DataPath; d != nil && d.Path == "" && d.ResourceType == "" {
			f.Columns[i].ColumnSource.DataPath = nil // an empty selector is none
		}
	}
	if err := f.Common.Validate(true); err != nil {
		return f, err
	}
	of := listquery.Lookup(f.Of)
	if of == nil {
		return f, apierr.Validation(fmt.Sprintf("Of %q is not an entity type that lists take view= for; use one of: %v", f.Of, listquery.Names()),
			apierr.Item{Item: "Of", Description: "unknown entity type"})
	}
	def := View{Fields: f}.Definition()
	_, err := listquery.CompileView(of, def)
	return f, err
}

// Check requires a FilterID the write sets to name a Filter of the caller's organization, visible to it,
// that selects Of.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, _ *View, f Fields) (Fields, error) {
	if f.FilterID == nil {
		return f, nil
	}
	_, err := filter.Referenced(ctx, tx, sc, *f.FilterID, "FilterID", f.Of)
	return f, err
}

// MoveRow puts a View in another Space.
func (strategy) MoveRow(ctx context.Context, q *db.Queries, sc authz.Scope, cur View, toSpaceID uuid.UUID) (*db.View, error) {
	return q.ViewMove(ctx, db.ViewMoveParams{OrganizationID: sc.OrganizationID, ViewID: cur.ID, ToSpaceID: toSpaceID})
}

// SetUpstream records the View a copy was made from.
func (strategy) SetUpstream(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*db.View, error) {
	return q.ViewSetUpstream(ctx, db.ViewSetUpstreamParams{OrganizationID: sc.OrganizationID, ViewID: id, UpstreamViewID: &upstream})
}

// DocumentSpec: a View's document leaves its Permissions out and shows its Filter by name.
func (strategy) DocumentSpec() entity.DocumentSpec {
	return entity.DocumentSpec{Omit: []string{"Permissions"}, Refs: []entity.DocumentRef{filter.DocumentRef("FilterID", "Filter")}}
}
