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

// listEntity is how Spaces are listed.
var listEntity = &listquery.Entity{
	Name: EntityType, From: "space", Columns: "space.*",
	IDColumn: "space.space_id", OrgColumn: "space.organization_id",
}

// Service carries out Space operations for the caller in the request's context.
type Service struct {
	Store *store.Store
}

// WriteOptions are the query parameters every write takes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
}

// List returns the Spaces of the caller's organization that the caller may view.
func (s *Service) List(ctx context.Context) ([]Space, error) {
	p := authz.Caller(ctx)
	rows, err := listquery.Run[db.Space](ctx, s.Store.Pool, listquery.Query{Entity: listEntity, OrganizationID: p.OrganizationID})
	if err != nil {
		return nil, err
	}
	out := make([]Space, 0, len(rows))
	for i := range rows {
		sp, err := fromRow(&rows[i])
		if err != nil {
			return nil, err
		}
		if authz.Allowed(p, authz.View, sp.target()) {
			out = append(out, sp)
		}
	}
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
	return s.write(ctx, id, dryRun, func(cur Space) (int64, Fields, error) {
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
	})
}

// write is the one update path of PUT and PATCH: load, compute the new fields, check, store, emit.
func (s *Service) write(ctx context.Context, id uuid.UUID, dryRun bool, change func(Space) (int64, Fields, error)) (Space, error) {
	p := authz.Caller(ctx)
	var out Space
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		cur, err := load(ctx, tx.Q, id)
		if err != nil {
			return err
		}
		if err := authz.Check(ctx, authz.Edit, cur.target()); err != nil {
			return err
		}
		version, f, err := change(cur)
		if err != nil {
			return err
		}
		f = f.normalized()
		if err := f.validate(); err != nil {
			return err
		}
		if !cur.Permissions.Equal(f.Permissions) {
			if err := authz.Check(ctx, authz.Manage, cur.target()); err != nil {
				return err
			}
		}
		if err := entity.CheckVersion(EntityType, id, version, cur.Version); err != nil {
			return err
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
			return apierr.StaleVersion(EntityType, id.String(), version, cur.Version+1)
		}
		if err != nil {
			return entity.SlugClash(err, EntityType, f.Slug)
		}
		if out, err = fromRow(row); err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Updated))
		return nil
	})
	return out, err
}

// Delete removes a Space. It is refused while the Space has DeleteGates or holds entities.
func (s *Service) Delete(ctx context.Context, id uuid.UUID, dryRun bool) error {
	p := authz.Caller(ctx)
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		cur, err := load(ctx, tx.Q, id)
		if err != nil {
			return err
		}
		if err := authz.Check(ctx, authz.Delete, cur.target()); err != nil {
			return err
		}
		if err := entity.CheckDeleteGates(EntityType, id, cur.Slug, cur.DeleteGates); err != nil {
			return err
		}
		if _, err := tx.Q.SpaceDelete(ctx, db.SpaceDeleteParams{OrganizationID: p.OrganizationID, SpaceID: id}); err != nil {
			return store.TranslateDelete(err, EntityType, id.String())
		}
		tx.Emit(cur.changeEvent(entity.Deleted))
		return nil
	})
}

func (s Space) changeEvent(c entity.Change) event.Event {
	return entity.ChangeEvent("space", EntityType, c, s.OrganizationID, s.ID, s.Slug, s.Version,
		&entity.SpaceRef{ID: s.ID, Slug: s.Slug})
}
