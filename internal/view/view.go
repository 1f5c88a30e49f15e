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
	"time"

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
	ID             uuid.UUID
	OrganizationID uuid.UUID
	SpaceID        uuid.UUID
	Hash           string
	UpstreamViewID *uuid.UUID
	BackingUnitID  *uuid.UUID
	HiddenReason   string
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Fields
}

// Fields are what a write sets.
type Fields struct {
	Slug             string       `json:"Slug"`
	DisplayName      string       `json:"DisplayName"`
	Of               string       `json:"Of"`
	Columns          []Column     `json:"Columns"`
	FilterID         *uuid.UUID   `json:"FilterID"`
	GroupBy          string       `json:"GroupBy"`
	OrderBy          string       `json:"OrderBy"`
	OrderByDirection string       `json:"OrderByDirection"`
	Permissions      authz.Grants `json:"Permissions"`
	entity.Meta
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

func (v View) authzTarget() authz.Target {
	return authz.Target{EntityType: EntityType, ID: v.ID.String(), Grants: v.Permissions, SpaceID: v.SpaceID}
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

// normalize puts the fields in their stored form and checks them on their own: Of names a listed entity
// type and the columns and order are ones its lists accept.
func normalize(f Fields) (Fields, error) {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	if f.Columns == nil {
		f.Columns = []Column{}
	}
	for i := range f.Columns {
		if d := f.Columns[i].ColumnSource.DataPath; d != nil && d.Path == "" && d.ResourceType == "" {
			f.Columns[i].ColumnSource.DataPath = nil // an empty selector is none
		}
	}
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return f, err
	}
	if err := f.Meta.Validate(); err != nil {
		return f, err
	}
	if err := f.Permissions.Validate("Permissions"); err != nil {
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

// check requires a FilterID the write sets to name a Filter of the caller's organization, visible to it,
// that selects Of.
func check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, _ *View, f Fields) (Fields, error) {
	if f.FilterID == nil {
		return f, nil
	}
	_, err := filter.Referenced(ctx, tx, sc, *f.FilterID, "FilterID", f.Of)
	return f, err
}

// definitionHash is the lowercase hex SHA-256 of what a View shows (Of, Columns, FilterID, GroupBy,
// OrderBy, OrderByDirection), stored as Hash.
func definitionHash(f Fields) string {
	def, _ := json.Marshal([]any{f.Of, f.Columns, f.FilterID, f.GroupBy, f.OrderBy, f.OrderByDirection})
	sum := sha256.Sum256(def)
	return hex.EncodeToString(sum[:])
}

func fromRow(r *db.View) (View, error) {
	v := View{
		ID: r.ViewID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, UpstreamViewID: r.UpstreamViewID,
		BackingUnitID: r.BackingUnitID, Hash: r.Hash, HiddenReason: r.HiddenReason, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, Of: r.OfType, FilterID: r.FilterID, GroupBy: r.GroupBy,
			OrderBy: r.OrderBy, OrderByDirection: r.OrderByDirection},
	}
	var err error
	if v.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return v, err
	}
	if v.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return v, err
	}
	if v.Columns, err = store.DecodeJSON[[]Column](r.Columns); err != nil {
		return v, err
	}
	if v.Columns == nil {
		v.Columns = []Column{}
	}
	v.Meta = v.Meta.Normalized()
	v.Permissions = v.Permissions.Normalized()
	return v, nil
}

// ListEntity is how Views are listed (indexes: migration 000021).
var ListEntity = listquery.Define(&listquery.Entity{
	Name: EntityType, From: "view", Columns: "view.*", ID: "ViewID",
	Org: "view.organization_id", Slug: "Slug", Contains: "view.search_text", HiddenReason: "view.hidden_reason",
	Visibility:    &listquery.Visibility{Grants: "view.permissions", Space: "view.space_id"},
	ContainsAttrs: []string{"Slug", "DisplayName", "Of", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "ViewID", Type: listquery.UUID, SQL: "view.view_id", Filterable: true, Orderable: true, Always: true},
		{Name: "SpaceID", Type: listquery.UUID, SQL: "view.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "view.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "view.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "view.display_name", Filterable: true, Orderable: true},
		// The type the View applies to: select always returns it.
		{Name: "Of", Type: listquery.String, SQL: "view.of_type", Filterable: true, Orderable: true, Always: true},
		{Name: "GroupBy", Type: listquery.String, SQL: "view.group_by", Filterable: true, Orderable: true},
		{Name: "OrderBy", Type: listquery.String, SQL: "view.order_by", Filterable: true, Orderable: true},
		{Name: "OrderByDirection", Type: listquery.String, SQL: "view.order_by_direction", Filterable: true, Orderable: true},
		{Name: "Hash", Type: listquery.String, SQL: "view.hash", Filterable: true, Orderable: true},
		listquery.NullableUUID("FilterID", "view.filter_id"),
		listquery.NullableUUID("UpstreamViewID", "view.upstream_view_id"),
		listquery.NullableUUID("BackingUnitID", "view.backing_unit_id"),
		{Name: "Labels", Type: listquery.StringMap, SQL: "view.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "view.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "view.delete_gates", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "view.hidden_reason", Filterable: true, Orderable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "view.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "view.updated_at", Filterable: true, Orderable: true},
		{Name: "Columns", Type: listquery.Opaque}, {Name: "Permissions", Type: listquery.Opaque},
		{Name: "Version", Type: listquery.Opaque}, {Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"},
		{Name: "FilterID", Field: "Filter"}},
})

// Family declares Views to the entity kit: a View lives in a Space and carries Permissions.
var Family = &entity.Family[db.View, View, Fields]{
	Type: EntityType, Event: "view", Listing: ListEntity, Parent: space.Of, SpaceColumn: "view.space_id",
	ReadRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, lock bool) (*db.View, error) {
		if lock {
			return q.ViewGetByIDForUpdate(ctx, db.ViewGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, ViewID: id})
		}
		return q.ViewGetByID(ctx, db.ViewGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, ViewID: id})
	},
	ReadBySlug: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID uuid.UUID, slug string) (*db.View, error) {
		return q.ViewGetBySlug(ctx, db.ViewGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: slug})
	},
	ReadByIDs: func(ctx context.Context, q *db.Queries, sc authz.Scope, ids []uuid.UUID) ([]*db.View, error) {
		return q.ViewListByIDs(ctx, db.ViewListByIDsParams{OrganizationID: sc.OrganizationID, ViewIds: ids})
	},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.View, error) {
		return q.ViewInsert(ctx, db.ViewInsertParams{
			ViewID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			OfType: f.Of, Columns: store.EncodeJSON(f.Columns), FilterID: f.FilterID, GroupBy: f.GroupBy,
			OrderBy: f.OrderBy, OrderByDirection: f.OrderByDirection, Hash: definitionHash(f),
		})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur View, f Fields) (*db.View, error) {
		return q.ViewUpdate(ctx, db.ViewUpdateParams{
			OrganizationID: sc.OrganizationID, ViewID: cur.ID, Version: cur.Version, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			OfType: f.Of, Columns: store.EncodeJSON(f.Columns), FilterID: f.FilterID, GroupBy: f.GroupBy,
			OrderBy: f.OrderBy, OrderByDirection: f.OrderByDirection, Hash: definitionHash(f),
		})
	},
	DeleteRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur View) (int64, error) {
		return q.ViewDelete(ctx, db.ViewDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: cur.SpaceID, ViewID: cur.ID})
	},
	MoveRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur View, toSpaceID uuid.UUID) (*db.View, error) {
		return q.ViewMove(ctx, db.ViewMoveParams{OrganizationID: sc.OrganizationID, ViewID: cur.ID, ToSpaceID: toSpaceID})
	},
	SetUpstream: func(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*db.View, error) {
		return q.ViewSetUpstream(ctx, db.ViewSetUpstreamParams{OrganizationID: sc.OrganizationID, ViewID: id, UpstreamViewID: &upstream})
	},
	FromRow: fromRow,
	Ident: func(v View) entity.Ident {
		return entity.Ident{ID: v.ID, SpaceID: v.SpaceID, Slug: v.Slug, Version: v.Version, DeleteGates: v.DeleteGates}
	},
	Fields:       func(v View) Fields { return v.Fields },
	Slug:         func(f Fields) string { return f.Slug },
	Target:       View.authzTarget,
	Grants:       func(f Fields) authz.Grants { return f.Permissions },
	Normalize:    normalize,
	Check:        check,
	DocumentSpec: entity.DocumentSpec{Omit: []string{"Permissions"}, Refs: []entity.DocumentRef{filter.DocumentRef("FilterID", "Filter")}},
}

// Service carries out View operations (the kit's).
type Service = entity.Service[db.View, View, Fields]

// NewService serves Views from a store.
func NewService(deps entity.Deps) *Service {
	return entity.NewService(Family, deps)
}
