package space

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/store"
)

// Parent reads the Space a nested entity's path names (Units, Targets, Tags, Channels, BridgeWorkers
// live in one), in the caller's organization; any other is NotFound.
func Parent(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (*db.Space, error) {
	row, err := q.SpaceGetByID(ctx, db.SpaceGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: id})
	if err != nil {
		return nil, apierr.NotFoundAs(err, EntityType, id.String())
	}
	return row, nil
}

// ParentByRef is Parent for a path that names the Space by ID or Slug.
func ParentByRef(ctx context.Context, sc authz.Scope, q *db.Queries, ref string) (*db.Space, error) {
	if id, err := uuid.Parse(ref); err == nil {
		return Parent(ctx, sc, q, id)
	}
	row, err := q.SpaceGetBySlug(ctx, db.SpaceGetBySlugParams{OrganizationID: sc.OrganizationID, Slug: ref})
	if err != nil {
		return nil, apierr.NotFoundAs(err, EntityType, ref)
	}
	return row, nil
}

// RowTarget is a Space row as a permission target, for checks on what is created or read in it
// (CreateChildren, ViewChildren, Manage).
func RowTarget(row *db.Space) (authz.Target, error) {
	grants, err := store.DecodeJSON[authz.Grants](row.Permissions)
	return authz.Target{EntityType: EntityType, ID: row.SpaceID.String(), Grants: grants}, err
}

// Of is Parent as the entity kit needs it (entity.ParentFunc): the Space's reference for events and its
// permission target, for the families that live in Spaces.
func Of(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (entity.Parent, error) {
	row, err := Parent(ctx, sc, q, id)
	if err != nil {
		return entity.Parent{}, err
	}
	t, err := RowTarget(row)
	return entity.Parent{Ref: entity.SpaceRef{ID: row.SpaceID, Slug: row.Slug}, Target: t}, err
}

// AuthzTarget is the permission target of Space id, without its grants (entity.PermissionTargets
// decodes them).
func AuthzTarget(id uuid.UUID) authz.Target {
	return authz.Target{EntityType: EntityType, ID: id.String()}
}

// VisibleParent is Parent for what a caller reads or creates inside a Space: a Space the caller may not
// see into (View or ViewChildren on it) is NotFound, as if it did not exist.
func VisibleParent(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (*db.Space, authz.Target, error) {
	row, err := Parent(ctx, sc, q, id)
	if err != nil {
		return nil, authz.Target{}, err
	}
	t, err := RowTarget(row)
	if err == nil && !authz.ViewsInside(sc, t) {
		return nil, t, apierr.NotFound(EntityType, id.String())
	}
	return row, t, err
}

// DocumentRef shows a reference to a Space (field, FromSpaceID) in documents by its Slug (name,
// FromSpace); one the caller may not see into by its ID, as stored, so a document names nothing invisible.
// A name must be the Slug (or ID) of a Space the caller may view.
func DocumentRef(field, name string) entity.DocumentRef {
	return entity.DocumentRef{
		Field: field, Name: name,
		Named: func(ctx context.Context, sc authz.Scope, c store.Conn, _, id uuid.UUID) (string, error) {
			row, _, err := VisibleParent(ctx, sc, c.Queries(), id)
			if apierr.Is(err, apierr.TypeNotFound) {
				return id.String(), nil
			}
			if err != nil {
				return "", err
			}
			return row.Slug, nil
		},
		Resolve: func(ctx context.Context, sc authz.Scope, c store.Conn, _ uuid.UUID, name string) (uuid.UUID, error) {
			row, err := ParentByRef(ctx, sc, c.Queries(), name)
			if err != nil {
				return uuid.Nil, err
			}
			t, err := RowTarget(row)
			if err != nil {
				return uuid.Nil, err
			}
			if !authz.ViewsInside(sc, t) {
				return uuid.Nil, apierr.NotFound(EntityType, name)
			}
			return row.SpaceID, nil
		},
	}
}

// Named reads an entity of a Space-resident family by how people name it: its ID, its Slug in Space
// spaceID, or <Space Slug>/<Slug> in any Space of the organization. A bare Slug with no Space to read it
// in (spaceID is uuid.Nil), and anything missing or that the caller may not view, is NotFound.
func Named[R any, E entity.Entity, F entity.Fields](ctx context.Context, sc authz.Scope, c store.Conn, fam *entity.Family[R, E, F], spaceID uuid.UUID, ref string) (E, error) {
	var zero E
	if id, err := uuid.Parse(ref); err == nil {
		found, err := fam.Visible(ctx, c, sc, []uuid.UUID{id})
		if err != nil {
			return zero, err
		}
		e, ok := found[id]
		if !ok {
			return zero, apierr.NotFound(fam.Type, ref)
		}
		return e, nil
	}
	slug := ref
	if spaceRef, s, qualified := strings.Cut(ref, "/"); qualified {
		row, err := ParentByRef(ctx, sc, c.Queries(), spaceRef)
		if err != nil {
			return zero, err
		}
		spaceID, slug = row.SpaceID, s
	}
	if spaceID == uuid.Nil {
		return zero, apierr.NotFound(fam.Type, ref)
	}
	return fam.Resolve(ctx, sc, c, spaceID, slug, false)
}
