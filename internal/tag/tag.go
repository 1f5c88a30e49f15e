// Package tag holds the rules of Tags: named markers in a Space that are put on Revisions of Units.
// A Revision's Tags map holds the TagIDs on it; deleting a Tag takes it off every Revision.
package tag

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
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

// authzTarget: Tags carry no Permissions of their own; the role decides.
func (t Tag) authzTarget() authz.Target {
	return authz.Target{EntityType: EntityType, ID: t.ID.String()}
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

// Service carries out Tag operations.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
}

// WriteOptions are the query parameters every write takes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
}

func load(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID, id uuid.UUID, lock bool) (Tag, error) {
	var row *db.Tag
	var err error
	if lock {
		row, err = q.TagGetByIDForUpdate(ctx, db.TagGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TagID: id})
	} else {
		row, err = q.TagGetByID(ctx, db.TagGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TagID: id})
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		if _, serr := space.Parent(ctx, sc, q, spaceID); serr != nil {
			return Tag{}, serr
		}
		return Tag{}, apierr.NotFound(EntityType, id.String())
	}
	if err != nil {
		return Tag{}, err
	}
	return fromRow(row)
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

// List returns a page of Tags (of one Space when spaceID is set).
func (s *Service) List(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params) (listquery.Page[Tag], error) {
	q := listquery.Query{Entity: ListEntity, OrganizationID: sc.OrganizationID, Path: path, Params: params}
	if spaceID != nil {
		if _, err := space.Parent(ctx, sc, s.Store.Q(), *spaceID); err != nil {
			return listquery.Page[Tag]{}, err
		}
		q.Scope = []listquery.Condition{{Column: "tag.space_id", Value: *spaceID}}
	}
	page, err := listquery.Run[db.Tag](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[Tag]{}, err
	}
	return listquery.MapPage(page, fromRow)
}

// Get returns one Tag.
func (s *Service) Get(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID) (Tag, error) {
	t, err := load(ctx, sc, s.Store.Q(), spaceID, id, false)
	if err != nil {
		return t, err
	}
	return t, authz.Check(sc, authz.View, t.authzTarget())
}

func (t Tag) changeEvent(c entity.Change, spaceSlug string) event.Event {
	return entity.ChangeEvent("tag", EntityType, c, t.OrganizationID, t.ID, t.Slug, t.Version, &entity.SpaceRef{ID: t.SpaceID, Slug: spaceSlug})
}

// Create makes a Tag in a Space.
func (s *Service) Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f Fields, opts WriteOptions) (Tag, error) {
	f.Meta = f.Meta.Normalized()
	if err := f.validate(); err != nil {
		return Tag{}, err
	}
	var out Tag
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		st, err := space.RowTarget(sp)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.CreateChildren, st); err != nil {
			return err
		}
		bySlug := db.TagGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug}
		var row *db.Tag
		err = tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			row, err = sp.Q.TagInsert(ctx, db.TagInsertParams{TagID: uuid.New(), OrganizationID: sc.OrganizationID, SpaceID: spaceID,
				Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
				DeleteGates: store.EncodeJSON(f.DeleteGates)})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) {
			if !opts.AllowExists {
				return apierr.AlreadyExists(EntityType, f.Slug)
			}
			if row, err = tx.Q.TagGetBySlug(ctx, bySlug); err != nil {
				return err
			}
			out, err = fromRow(row)
			return err
		}
		if err != nil {
			return err
		}
		if out, err = fromRow(row); err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Created, sp.Slug))
		return nil
	})
	return out, err
}

type changeFunc func(Tag) (*int64, Fields, error)

// Update replaces a Tag's fields; version must be the stored one.
func (s *Service) Update(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, version int64, f Fields, dryRun bool) (Tag, error) {
	if err := entity.RequireVersion(version); err != nil {
		return Tag{}, err
	}
	return s.write(ctx, sc, spaceID, id, dryRun, func(Tag) (*int64, Fields, error) { return &version, f, nil })
}

// Patch applies a merge patch to a Tag's fields.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, patch json.RawMessage, dryRun bool) (Tag, error) {
	return s.write(ctx, sc, spaceID, id, dryRun, func(cur Tag) (*int64, Fields, error) {
		version, err := entity.SentVersion(patch)
		if err != nil {
			return nil, Fields{}, err
		}
		merged, err := entity.MergePatch(cur.Fields, patch)
		if err != nil {
			return nil, Fields{}, err
		}
		var f Fields
		if err := json.Unmarshal(merged, &f); err != nil {
			return nil, Fields{}, apierr.UserInput("the patched Tag is not valid: " + err.Error())
		}
		return version, f, nil
	})
}

func (s *Service) write(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, dryRun bool, change changeFunc) (Tag, error) {
	var out Tag
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		cur, err := load(ctx, sc, tx.Q, spaceID, id, true)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Edit, cur.authzTarget()); err != nil {
			return err
		}
		version, f, err := change(cur)
		if err != nil {
			return err
		}
		f.Meta = f.Meta.Normalized()
		if err := f.validate(); err != nil {
			return err
		}
		if err := entity.CheckVersion(EntityType, id, version, cur.Version); err != nil {
			return err
		}
		row, err := tx.Q.TagUpdate(ctx, db.TagUpdateParams{OrganizationID: sc.OrganizationID, TagID: id, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates)})
		if err != nil {
			return entity.SlugClash(err, EntityType, f.Slug)
		}
		if out, err = fromRow(row); err != nil {
			return err
		}
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Updated, sp.Slug))
		return nil
	})
	return out, err
}

// Delete removes a Tag and takes it off every Revision; refused while it has DeleteGates.
func (s *Service) Delete(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		cur, err := load(ctx, sc, tx.Q, spaceID, id, true)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Delete, cur.authzTarget()); err != nil {
			return err
		}
		if err := entity.CheckDeleteGates(EntityType, id, cur.Slug, cur.DeleteGates); err != nil {
			return err
		}
		if err := tx.Q.TagRemoveFromRevisions(ctx, db.TagRemoveFromRevisionsParams{OrganizationID: sc.OrganizationID, TagID: id.String()}); err != nil {
			return err
		}
		n, err := tx.Q.TagDelete(ctx, db.TagDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TagID: id})
		if err != nil {
			return store.TranslateDelete(err, EntityType, id.String())
		}
		if n == 0 {
			return apierr.NotFound(EntityType, id.String())
		}
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		tx.Emit(cur.changeEvent(entity.Deleted, sp.Slug))
		return nil
	})
}
