// Package space holds the rules of the Space family: the container of Units, Targets and the other
// Space-resident entities. It is the template of a family: domain type, row conversion, list entity,
// and a Service whose writes go through store.WithTx and whose checks go through authz.
package space

import (
	"context"
	"encoding/json"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Space's type name on the wire and in errors and events.
const EntityType = "Space"

// Space is a stored Space.
type Space struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	HiddenReason   string
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Fields
}

// Fields are what a write sets. Their JSON form (the wire names) is what a merge patch applies to.
type Fields struct {
	Slug        string       `json:"Slug"`
	DisplayName string       `json:"DisplayName"`
	Permissions authz.Grants `json:"Permissions"`
	ComponentID *uuid.UUID   `json:"ComponentID"`
	entity.Meta
}

func (s Space) target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: s.ID.String(), Grants: s.Permissions}
}

func (f Fields) normalized() Fields {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	return f
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.Space) (Space, error) {
	s := Space{
		ID: r.SpaceID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, ComponentID: r.ComponentID},
	}
	var err error
	if s.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return s, err
	}
	if s.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return s, err
	}
	s.Fields = s.Fields.normalized()
	return s, nil
}

// Service carries out Space operations for the caller in the request's context.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
}

// WriteOptions are the query parameters every write takes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
}

// List returns a page of the Spaces of the caller's organization; those the caller may not view are
// left out (so a page may hold fewer than limit).
func (s *Service) List(ctx context.Context, path string, params listquery.Params) (listquery.Page[Space], error) {
	p := authz.Caller(ctx)
	page, err := listquery.Run[db.Space](ctx, s.Store.Pool, s.Tokens,
		listquery.Query{Entity: ListEntity, OrganizationID: p.OrganizationID, Path: path, Params: params})
	if err != nil {
		return listquery.Page[Space]{}, err
	}
	out, err := listquery.MapPage(page, fromRow)
	if err != nil {
		return out, err
	}
	visible := out.Items[:0]
	for _, sp := range out.Items {
		if authz.Allowed(p, authz.View, sp.target()) {
			visible = append(visible, sp)
		}
	}
	out.Items = visible
	return out, nil
}

// Get returns one Space of the caller's organization.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Space, error) {
	sp, err := load(ctx, s.Store.Q(), id)
	if err != nil {
		return Space{}, err
	}
	return sp, authz.Check(ctx, authz.View, sp.target())
}

// load reads a Space of the caller's organization; one of another organization is NotFound.
func load(ctx context.Context, q *db.Queries, id uuid.UUID) (Space, error) {
	p := authz.Caller(ctx)
	row, err := q.SpaceGetByID(ctx, db.SpaceGetByIDParams{OrganizationID: p.OrganizationID, SpaceID: id})
	if store.IsNoRows(err) {
		return Space{}, apierr.NotFound(EntityType, id.String())
	}
	if err != nil {
		return Space{}, store.Translate(err)
	}
	return fromRow(row)
}

// Create makes a Space. With AllowExists, an existing Space of the same Slug is returned instead.
func (s *Service) Create(ctx context.Context, f Fields, opts WriteOptions) (Space, error) {
	p := authz.Caller(ctx)
	f = f.normalized()
	if err := f.validate(); err != nil {
		return Space{}, err
	}
	org := authz.OrganizationTarget(p.OrganizationID)
	if err := authz.Check(ctx, authz.CreateChildren, org); err != nil {
		return Space{}, err
	}
	if len(f.Permissions) > 0 {
		if err := authz.Check(ctx, authz.Manage, org); err != nil {
			return Space{}, err
		}
	}
	var out Space
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		existing, err := tx.Q.SpaceGetBySlug(ctx, db.SpaceGetBySlugParams{OrganizationID: p.OrganizationID, Slug: f.Slug})
		switch {
		case err == nil && opts.AllowExists:
			out, err = fromRow(existing)
			if err != nil {
				return err
			}
			return authz.Check(ctx, authz.View, out.target())
		case err == nil:
			return apierr.AlreadyExists(EntityType, f.Slug)
		case !store.IsNoRows(err):
			return err
		}
		row, err := tx.Q.SpaceInsert(ctx, db.SpaceInsertParams{
			SpaceID: uuid.New(), OrganizationID: p.OrganizationID, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			ComponentID: f.ComponentID,
		})
		if err != nil {
			return entity.SlugClash(err, EntityType, f.Slug)
		}
		if out, err = fromRow(row); err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Created))
		return nil
	})
	return out, err
}

// Update replaces a Space's fields; version must be the stored one.
func (s *Service) Update(ctx context.Context, id uuid.UUID, version int64, f Fields, dryRun bool) (Space, error) {
	if err := entity.RequireVersion(version); err != nil {
		return Space{}, err
	}
	return s.write(ctx, id, dryRun, func(Space) (int64, Fields, error) { return version, f, nil })
}

// Patch applies an RFC 7386 merge patch to a Space's fields; a Version in the patch is checked.
func (s *Service) Patch(ctx context.Context, id uuid.UUID, patch json.RawMessage, dryRun bool) (Space, error) {
	return s.write(ctx, id, dryRun, mergePatch(patch))
}

// mergePatch is the change of a merge patch.
func mergePatch(patch json.RawMessage) changeFunc {
	return func(cur Space) (int64, Fields, error) {
		var sent struct{ Version *int64 }
		if err := json.Unmarshal(patch, &sent); err != nil {
			return 0, Fields{}, apierr.UserInput("the body is not a JSON object")
		}
		version := cur.Version
		if sent.Version != nil {
			version = *sent.Version
		}
		doc, err := json.Marshal(cur.Fields)
		if err != nil {
			return 0, Fields{}, err
		}
		merged, err := jsonpatch.MergePatch(doc, patch)
		if err != nil {
			return 0, Fields{}, apierr.UserInput("the merge patch cannot be applied: " + err.Error())
		}
		var f Fields
		if err := json.Unmarshal(merged, &f); err != nil {
			return 0, Fields{}, apierr.UserInput("the patched Space is not valid: " + err.Error())
		}
		return version, f, nil
	}
}

// write runs the one update path of PUT and PATCH in its own transaction.
func (s *Service) write(ctx context.Context, id uuid.UUID, dryRun bool, change changeFunc) (Space, error) {
	var out Space
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var err error
		out, err = update(ctx, tx, id, change)
		return err
	})
	return out, err
}

// changeFunc computes a write's Version (the one the client sent) and new fields from the stored Space.
type changeFunc func(Space) (int64, Fields, error)

// update loads, changes, checks, stores and emits, in tx.
func update(ctx context.Context, tx *store.Tx, id uuid.UUID, change changeFunc) (Space, error) {
	p := authz.Caller(ctx)
	cur, err := load(ctx, tx.Q, id)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(ctx, authz.Edit, cur.target()); err != nil {
		return cur, err
	}
	version, f, err := change(cur)
	if err != nil {
		return cur, err
	}
	f = f.normalized()
	if err := f.validate(); err != nil {
		return cur, err
	}
	if !cur.Permissions.Equal(f.Permissions) {
		if err := authz.Check(ctx, authz.Manage, cur.target()); err != nil {
			return cur, err
		}
	}
	if err := entity.CheckVersion(EntityType, id, version, cur.Version); err != nil {
		return cur, err
	}
	row, err := tx.Q.SpaceUpdate(ctx, db.SpaceUpdateParams{
		OrganizationID: p.OrganizationID, SpaceID: id, Version: cur.Version,
		Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		ComponentID: f.ComponentID,
	})
	if store.IsNoRows(err) {
		// Another write committed between the read and the update.
		return cur, apierr.StaleVersion(EntityType, id.String(), version, cur.Version+1)
	}
	if err != nil {
		return cur, entity.SlugClash(err, EntityType, f.Slug)
	}
	out, err := fromRow(row)
	if err != nil {
		return out, err
	}
	tx.Emit(out.changeEvent(entity.Updated))
	return out, nil
}

// Delete removes a Space. It is refused while the Space has DeleteGates or holds entities.
func (s *Service) Delete(ctx context.Context, id uuid.UUID, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		_, err := remove(ctx, tx, id)
		return err
	})
}

// remove deletes a Space in tx and returns what it was.
func remove(ctx context.Context, tx *store.Tx, id uuid.UUID) (Space, error) {
	p := authz.Caller(ctx)
	cur, err := load(ctx, tx.Q, id)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(ctx, authz.Delete, cur.target()); err != nil {
		return cur, err
	}
	if err := entity.CheckDeleteGates(EntityType, id, cur.Slug, cur.DeleteGates); err != nil {
		return cur, err
	}
	if _, err := tx.Q.SpaceDelete(ctx, db.SpaceDeleteParams{OrganizationID: p.OrganizationID, SpaceID: id}); err != nil {
		return cur, store.TranslateDelete(err, EntityType, id.String())
	}
	tx.Emit(cur.changeEvent(entity.Deleted))
	return cur, nil
}

func (s Space) changeEvent(c entity.Change) event.Event {
	return entity.ChangeEvent("space", EntityType, c, s.OrganizationID, s.ID, s.Slug, s.Version,
		&entity.SpaceRef{ID: s.ID, Slug: s.Slug})
}

// BulkPatch applies one merge patch to every Space the selection picks, each in its own savepoint.
func (s *Service) BulkPatch(ctx context.Context, path string, sel listquery.Params, patch json.RawMessage, dryRun bool) ([]entity.BulkItem[Space], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Space, error) {
		return update(ctx, tx, ref.ID, mergePatch(patch))
	})
}

// BulkDelete deletes every Space the selection picks, each in its own savepoint.
func (s *Service) BulkDelete(ctx context.Context, path string, sel listquery.Params, dryRun bool) ([]entity.BulkItem[Space], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Space, error) {
		return remove(ctx, tx, ref.ID)
	})
}

// selector picks the Spaces of a bulk operation through the list path, in tx.
func (s *Service) selector(path string, sel listquery.Params) entity.Selector {
	return func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		p := authz.Caller(ctx)
		limit := entity.MaxBulk
		sel.Limit = &limit
		page, err := listquery.Run[db.Space](ctx, tx, s.Tokens,
			listquery.Query{Entity: ListEntity, OrganizationID: p.OrganizationID, Path: path, Params: sel})
		if err != nil {
			return nil, err
		}
		if page.Continue != "" {
			return nil, entity.TooManySelected(EntityType)
		}
		refs := make([]entity.Ref, len(page.Items))
		for i, r := range page.Items {
			refs[i] = entity.Ref{ID: r.SpaceID, Slug: r.Slug}
		}
		return refs, nil
	}
}
