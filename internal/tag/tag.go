// Package tag holds the rules of Tags: named markers in a Space that are put on Revisions of Units.
// A Revision's Tags map holds the TagIDs on it; deleting a Tag takes it off every Revision.
package tag

import (
	"context"
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

// EntityType is the Tag's type name.
const EntityType = "Tag"

// Tag is a stored Tag.
type Tag struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	SpaceID        uuid.UUID
	HiddenReason   string
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Fields
}

// Fields are what a write sets.
type Fields struct {
	Slug        string `json:"Slug"`
	DisplayName string `json:"DisplayName"`
	entity.Meta
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	return f.Meta.Validate()
}

// authzTarget: Tags carry no Permissions of their own; the role and the grants of their Space decide.
func (t Tag) authzTarget() authz.Target {
	return authz.Target{EntityType: EntityType, ID: t.ID.String(), SpaceID: t.SpaceID}
}

func fromRow(r *db.Tag) (Tag, error) {
	t := Tag{ID: r.TagID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName}}
	var err error
	t.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates)
	return t, err
}

// ListEntity is how Tags are listed.
var ListEntity = listquery.Define(&listquery.Entity{
	Name: EntityType, From: "tag", Columns: "tag.*", ID: "TagID", Org: "tag.organization_id", Slug: "Slug",
	Contains: "tag.search_text", HiddenReason: "tag.hidden_reason",
	Visibility:    &listquery.Visibility{Space: "tag.space_id"},
	ContainsAttrs: []string{"Slug", "DisplayName", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "TagID", Type: listquery.UUID, SQL: "tag.tag_id", Filterable: true, Orderable: true, Always: true},
		{Name: "SpaceID", Type: listquery.UUID, SQL: "tag.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "tag.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "tag.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "tag.display_name", Filterable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "tag.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "tag.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "tag.delete_gates", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "tag.hidden_reason", Filterable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "tag.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "tag.updated_at", Filterable: true},
		{Name: "ChangeOrderID", Type: listquery.Opaque}, {Name: "ChangeSetID", Type: listquery.Opaque},
		{Name: "ReleaseID", Type: listquery.Opaque}, {Name: "Version", Type: listquery.Opaque}, {Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"}},
})

// Family declares Tags to the entity kit: a Tag lives in a Space, carries no Permissions (the role
// decides), and is taken off every Revision when it is deleted.
var Family = &entity.Family[db.Tag, Tag, Fields]{
	Type: EntityType, Event: "tag", Listing: ListEntity, Parent: space.Of, SpaceColumn: "tag.space_id",
	ReadRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, lock bool) (*db.Tag, error) {
		if lock {
			return q.TagGetByIDForUpdate(ctx, db.TagGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TagID: id})
		}
		return q.TagGetByID(ctx, db.TagGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TagID: id})
	},
	ReadBySlug: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID uuid.UUID, slug string) (*db.Tag, error) {
		return q.TagGetBySlug(ctx, db.TagGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: slug})
	},
	ReadByIDs: func(ctx context.Context, q *db.Queries, sc authz.Scope, ids []uuid.UUID) ([]*db.Tag, error) {
		return q.TagListByIDs(ctx, db.TagListByIDsParams{OrganizationID: sc.OrganizationID, TagIds: ids})
	},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Tag, error) {
		return q.TagInsert(ctx, db.TagInsertParams{TagID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates)})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Tag, f Fields) (*db.Tag, error) {
		return q.TagUpdate(ctx, db.TagUpdateParams{OrganizationID: sc.OrganizationID, TagID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates)})
	},
	DeleteRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Tag) (int64, error) {
		return q.TagDelete(ctx, db.TagDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: cur.SpaceID, TagID: cur.ID})
	},
	FromRow: fromRow,
	Ident: func(t Tag) entity.Ident {
		return entity.Ident{ID: t.ID, SpaceID: t.SpaceID, Slug: t.Slug, Version: t.Version, DeleteGates: t.DeleteGates}
	},
	Fields: func(t Tag) Fields { return t.Fields },
	Slug:   func(f Fields) string { return f.Slug },
	Target: Tag.authzTarget,
	Normalize: func(f Fields) (Fields, error) {
		f.Meta = f.Meta.Normalized()
		return f, f.validate()
	},
	// A deleted Tag leaves every Revision it was on.
	BeforeDelete: func(ctx context.Context, tx *store.Tx, sc authz.Scope, cur Tag) error {
		return tx.Q.TagRemoveFromRevisions(ctx, db.TagRemoveFromRevisionsParams{OrganizationID: sc.OrganizationID, TagID: cur.ID.String()})
	},
}

// Service carries out Tag operations (the kit's).
type Service = entity.Service[db.Tag, Tag, Fields]

// NewService serves Tags from a store.
func NewService(deps entity.Deps) *Service {
	return entity.NewService(Family, deps)
}

// LookupForShare returns a Tag of the caller's organization by ID, in any Space, and holds a share lock
// on it until the transaction of q ends: a write putting the Tag on Revisions reads it this way, so a
// concurrent Delete (which takes the Tag off every Revision) waits for it rather than missing its Revisions.
func LookupForShare(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (Tag, error) {
	row, err := q.TagGetInOrganizationForShare(ctx, db.TagGetInOrganizationForShareParams{OrganizationID: sc.OrganizationID, TagID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return Tag{}, apierr.Validation("Tag "+id.String()+" does not exist in your organization", apierr.Item{Item: "TagID", Description: "no such Tag"})
	}
	if err != nil {
		return Tag{}, err
	}
	return fromRow(row)
}
