// Package space holds the rules of the Space family: the container of Units, Targets and the other
// Space-resident entities. It is the template of a family: domain type, row conversion, list entity,
// and a Service whose writes go through store.WithTx and whose checks go through authz.
package space

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
func (s *Service) List(ctx context.Context, sc authz.Scope, path string, params listquery.Params) (listquery.Page[Space], error) {
	page, err := listquery.Run[db.Space](ctx, s.Store.Pool, s.Tokens,
		listquery.Query{Entity: ListEntity, OrganizationID: sc.OrganizationID, Path: path, Params: params})
	if err != nil {
		return listquery.Page[Space]{}, err
	}
	out, err := listquery.MapPage(page, fromRow)
	if err != nil {
		return out, err
	}
	out.Items = authz.Filter(sc, authz.View, out.Items, Space.target)
	return out, nil
}

// Get returns one Space of the caller's organization.
func (s *Service) Get(ctx context.Context, sc authz.Scope, id uuid.UUID) (Space, error) {
	sp, err := load(ctx, sc, s.Store.Q(), id, false)
	if err != nil {
		return Space{}, err
	}
	return sp, authz.Check(sc, authz.View, sp.target())
}

// load reads a Space of the caller's organization; one of another organization is NotFound. Writers
// lock the row, so concurrent writes of one Space happen one after the other.
func load(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID, lock bool) (Space, error) {
	var row *db.Space
	var err error
	if lock {
		row, err = q.SpaceGetByIDForUpdate(ctx, db.SpaceGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: id})
	} else {
		row, err = q.SpaceGetByID(ctx, db.SpaceGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: id})
	}
	if err != nil {
		return Space{}, apierr.NotFoundAs(err, EntityType, id.String())
	}
	return fromRow(row)
}

// Create makes a Space. With AllowExists, an existing Space of the same Slug is returned instead.
func (s *Service) Create(ctx context.Context, sc authz.Scope, f Fields, opts WriteOptions) (Space, error) {
	f = f.normalized()
	if err := f.validate(); err != nil {
		return Space{}, err
	}
	orgTarget := authz.OrganizationTarget(sc.OrganizationID)
	if err := authz.Check(sc, authz.CreateChildren, orgTarget); err != nil {
		return Space{}, err
	}
	if len(f.Permissions) > 0 {
		if err := authz.Check(sc, authz.Manage, orgTarget); err != nil {
			return Space{}, err
		}
	}
	var out Space
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		existing, err := tx.Q.SpaceGetBySlug(ctx, db.SpaceGetBySlugParams{OrganizationID: sc.OrganizationID, Slug: f.Slug})
		switch {
		case err == nil && opts.AllowExists:
			out, err = fromRow(existing)
			if err != nil {
				return err
			}
			return authz.Check(sc, authz.View, out.target())
		case err == nil:
			return apierr.AlreadyExists(EntityType, f.Slug)
		case !apierr.Is(err, apierr.TypeNotFound):
			return err
		}
		if err := checkComponent(f); err != nil {
			return err
		}
		if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", nil, f.Permissions); err != nil {
			return err
		}
		var row *db.Space
		err = tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			row, err = sp.Q.SpaceInsert(ctx, db.SpaceInsertParams{
				SpaceID: uuid.New(), OrganizationID: sc.OrganizationID, Slug: f.Slug, DisplayName: f.DisplayName,
				Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
				DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
				ComponentID: f.ComponentID,
			})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) && opts.AllowExists {
			// A concurrent create of the same Slug won: hand back its Space.
			existing, err := tx.Q.SpaceGetBySlug(ctx, db.SpaceGetBySlugParams{OrganizationID: sc.OrganizationID, Slug: f.Slug})
			if err != nil {
				return err
			}
			out, err = fromRow(existing)
			return err
		}
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
func (s *Service) Update(ctx context.Context, sc authz.Scope, id uuid.UUID, version int64, f Fields, dryRun bool) (Space, error) {
	if err := entity.RequireVersion(version); err != nil {
		return Space{}, err
	}
	return s.write(ctx, sc, id, dryRun, func(Space) (*int64, Fields, error) { return &version, f, nil })
}

// Patch applies an RFC 7386 merge patch to a Space's fields; a Version in the patch is checked.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, id uuid.UUID, patch json.RawMessage, dryRun bool) (Space, error) {
	return s.write(ctx, sc, id, dryRun, mergePatch(patch))
}

// mergePatch is the change of a merge patch.
func mergePatch(patch json.RawMessage) changeFunc {
	return func(cur Space) (*int64, Fields, error) {
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
			return nil, Fields{}, apierr.UserInput("the patched Space is not valid: " + err.Error())
		}
		return version, f, nil
	}
}

// write runs the one update path of PUT and PATCH in its own transaction.
func (s *Service) write(ctx context.Context, sc authz.Scope, id uuid.UUID, dryRun bool, change changeFunc) (Space, error) {
	var out Space
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var err error
		out, err = update(ctx, sc, tx, id, change)
		return err
	})
	return out, err
}

// changeFunc computes a write's Version (the one the client sent, nil for none) and new fields from the
// stored Space.
type changeFunc func(Space) (*int64, Fields, error)

// update loads, changes, checks, stores and emits, in tx.
func update(ctx context.Context, sc authz.Scope, tx *store.Tx, id uuid.UUID, change changeFunc) (Space, error) {
	cur, err := load(ctx, sc, tx.Q, id, true)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Edit, cur.target()); err != nil {
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
		if err := authz.Check(sc, authz.Manage, cur.target()); err != nil {
			return cur, err
		}
		if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", cur.Permissions, f.Permissions); err != nil {
			return cur, err
		}
	}
	if err := entity.CheckVersion(EntityType, id, version, cur.Version); err != nil {
		return cur, err
	}
	if f.ComponentID != nil && (cur.ComponentID == nil || *cur.ComponentID != *f.ComponentID) {
		if err := checkComponent(f); err != nil {
			return cur, err
		}
	}
	row, err := tx.Q.SpaceUpdate(ctx, db.SpaceUpdateParams{
		OrganizationID: sc.OrganizationID, SpaceID: id, Version: cur.Version,
		Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		ComponentID: f.ComponentID,
	})
	if apierr.Is(err, apierr.TypeNotFound) {
		// The row is locked, so this is unreachable unless the schema changes; report it as a conflict.
		return cur, apierr.Conflict("the Space was changed by a concurrent write; read it again").WithEntity(EntityType, id.String(), cur.Slug)
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
func (s *Service) Delete(ctx context.Context, sc authz.Scope, id uuid.UUID, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		_, err := remove(ctx, sc, tx, id)
		return err
	})
}

// remove deletes a Space in tx and returns what it was.
func remove(ctx context.Context, sc authz.Scope, tx *store.Tx, id uuid.UUID) (Space, error) {
	cur, err := load(ctx, sc, tx.Q, id, true)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Delete, cur.target()); err != nil {
		return cur, err
	}
	if err := entity.CheckDeleteGates(EntityType, id, cur.Slug, cur.DeleteGates); err != nil {
		return cur, err
	}
	n, err := tx.Q.SpaceDelete(ctx, db.SpaceDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: id})
	if err != nil {
		return cur, store.TranslateDelete(err, EntityType, id.String())
	}
	if n == 0 {
		return cur, apierr.NotFound(EntityType, id.String())
	}
	tx.Emit(cur.changeEvent(entity.Deleted))
	return cur, nil
}

func (s Space) changeEvent(c entity.Change) event.Event {
	return entity.ChangeEvent("space", EntityType, c, s.OrganizationID, s.ID, s.Slug, s.Version,
		&entity.SpaceRef{ID: s.ID, Slug: s.Slug})
}

// BulkPatch applies one merge patch to every Space the selection picks, each in its own savepoint.
func (s *Service) BulkPatch(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, dryRun bool) ([]entity.BulkItem[Space], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Space, error) {
		return update(ctx, sc, tx, ref.ID, mergePatch(patch))
	})
}

// BulkDelete deletes every Space the selection picks, each in its own savepoint.
func (s *Service) BulkDelete(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, dryRun bool) ([]entity.BulkItem[Space], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Space, error) {
		return remove(ctx, sc, tx, ref.ID)
	})
}

// selector picks the Spaces of a bulk operation through the list path, in tx.
func (s *Service) selector(sc authz.Scope, path string, sel listquery.Params) entity.Selector {
	return func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		limit := entity.MaxBulk
		sel.Limit = &limit
		page, err := listquery.Run[db.Space](ctx, tx, s.Tokens,
			listquery.Query{Entity: ListEntity, OrganizationID: sc.OrganizationID, Path: path, Params: sel})
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

// checkComponent refuses a ComponentID: it must name a Component of the organization, and that family
// does not exist yet, so every one is a reference to a missing entity.
func checkComponent(f Fields) error {
	if f.ComponentID == nil {
		return nil
	}
	return apierr.Validation(fmt.Sprintf("Component %s does not exist in your organization", f.ComponentID),
		apierr.Item{Item: "ComponentID", Description: "no such Component"})
}

// ByIDs loads Spaces of the caller's organization the caller may view, by ID (for include expansions).
func (s *Service) ByIDs(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]Space, error) {
	out := map[uuid.UUID]Space{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.Store.Q().SpaceListByIDs(ctx, db.SpaceListByIDsParams{OrganizationID: sc.OrganizationID, SpaceIds: ids})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		sp, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		if sc.Allows(authz.View, sp.target()) {
			out[sp.ID] = sp
		}
	}
	return out, nil
}
