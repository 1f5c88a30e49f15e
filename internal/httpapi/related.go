package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/org"
)

// A relation is what an include name expands for a family: the related entities of a page, loaded at
// once (in one query for the page), by the ID the Extended builder looks them up by.
type relation[E any] struct {
	include string
	load    func(ctx context.Context, h *base, sc authz.Scope, items []E) (map[uuid.UUID]any, error)
}

// relatedLoader reads the API forms of the entities among ids the caller may view, by ID.
type relatedLoader func(ctx context.Context, h *base, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]any, error)

// byID is the relation of the entities each item names by ID (ids), loaded by load.
func byID[E any](include string, ids func(E) []uuid.UUID, load relatedLoader) relation[E] {
	return relation[E]{include: include, load: func(ctx context.Context, h *base, sc authz.Scope, items []E) (map[uuid.UUID]any, error) {
		var all []uuid.UUID
		for _, e := range items {
			all = append(all, ids(e)...)
		}
		return load(ctx, h, sc, all)
	}}
}

// namedBy is the relation of the entities that name each item (a Revision's Attestations): naming reads,
// for the items' IDs (id), the IDs of the entities naming each; load reads those the caller may view.
func namedBy[E any](include string, id func(E) uuid.UUID, naming func(ctx context.Context, h *base, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error), load relatedLoader) relation[E] {
	return relation[E]{include: include, load: func(ctx context.Context, h *base, sc authz.Scope, items []E) (map[uuid.UUID]any, error) {
		ids := make([]uuid.UUID, len(items))
		for i, e := range items {
			ids[i] = id(e)
		}
		byItem, err := naming(ctx, h, sc, ids)
		if err != nil {
			return nil, err
		}
		var all []uuid.UUID
		for _, named := range byItem {
			all = append(all, named...)
		}
		loaded, err := load(ctx, h, sc, all)
		if err != nil {
			return nil, err
		}
		out := make(map[uuid.UUID]any, len(byItem))
		for item, named := range byItem {
			var list []any
			for _, n := range named {
				if v, ok := loaded[n]; ok {
					list = append(list, v)
				}
			}
			out[item] = list
		}
		return out, nil
	}}
}

// inSpace is the relation of include=SpaceID: the Space an entity lives in.
func inSpace[E interface{ ObjectMeta() entity.Object }]() relation[E] {
	return byID("SpaceID", func(e E) []uuid.UUID { return []uuid.UUID{e.ObjectMeta().SpaceID} }, spaceEdge.load)
}

// optionalID is the one ID of an optional reference, or none.
func optionalID(id *uuid.UUID) []uuid.UUID {
	if id == nil {
		return nil
	}
	return []uuid.UUID{*id}
}

// related is what include loaded for a page: the caller's Organization (include=OrganizationID) and, by
// include name, the related entities' API forms by ID.
type related struct {
	includes     map[string]bool
	organization *api.Organization
	loaded       map[string]map[uuid.UUID]any
}

// extendAll builds the Extended forms of items (build makes each), with what includes names of their
// relations loaded once for all of them.
func extendAll[E, X any](ctx context.Context, h *base, sc authz.Scope, items []E, includes map[string]bool, relations []relation[E], build func(E, *related) X) ([]X, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	r := &related{includes: includes, organization: org, loaded: map[string]map[uuid.UUID]any{}}
	for _, rel := range relations {
		if includes[rel.include] {
			if r.loaded[rel.include], err = rel.load(ctx, h, sc, items); err != nil {
				return nil, err
			}
		}
	}
	out := make([]X, len(items))
	for i, e := range items {
		out[i] = build(e, r)
	}
	return out, nil
}

// extendPlain is the extender of entities with nothing to include: each one's Extended form is build's.
func extendPlain[E, X any](build func(E) X) extender[E, X] {
	return func(_ context.Context, _ authz.Scope, items []E, _ map[string]bool) ([]X, error) {
		out := make([]X, len(items))
		for i, e := range items {
			out[i] = build(e)
		}
		return out, nil
	}
}

// relatedOne is the entity include expanded for id, when it named it and the caller may view it.
func relatedOne[T any](r *related, include string, id uuid.UUID) *T {
	if v, ok := r.loaded[include][id].(T); ok {
		return &v
	}
	return nil
}

// relatedOptional is relatedOne of an optional reference.
func relatedOptional[T any](r *related, include string, id *uuid.UUID) *T {
	if id == nil {
		return nil
	}
	return relatedOne[T](r, include, *id)
}

// relatedList is the entities include expanded for ids, those the caller may view: nil when include did
// not name it.
func relatedList[T any](r *related, include string, ids []uuid.UUID) *[]T {
	if !r.includes[include] {
		return nil
	}
	out := []T{}
	for _, id := range ids {
		if v := relatedOne[T](r, include, id); v != nil {
			out = append(out, *v)
		}
	}
	return &out
}

// relatedNaming is the entities include expanded as naming id (namedBy), those the caller may view: nil
// when include did not name it.
func relatedNaming[T any](r *related, include string, id uuid.UUID) *[]T {
	if !r.includes[include] {
		return nil
	}
	out := []T{}
	list, _ := r.loaded[include][id].([]any)
	for _, v := range list {
		out = append(out, v.(T))
	}
	return &out
}

// includedOrganization loads the caller's Organization when include names OrganizationID and the caller
// may view it (every entity of a list shares it, so one read serves the page).
func (h *base) includedOrganization(ctx context.Context, sc authz.Scope, includes map[string]bool) (*api.Organization, error) {
	if !includes["OrganizationID"] {
		return nil, nil
	}
	o, err := h.s.deps.Orgs.Get(ctx, sc, uuid.Nil, sc.OrganizationID.String())
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil, nil // a caller who may not view its organization (a guest) gets none: includes never fail
	}
	if err != nil {
		return nil, err
	}
	out := organizationToAPI(o)
	return &out, nil
}

// unservedList is an Extended field listing entities of a family that is not served yet: [] when include
// names it, else null.
func unservedList[T any](includes map[string]bool, name string) *[]T {
	if !includes[name] {
		return nil
	}
	return &[]T{}
}

// readByIDs reads, in one query, the entities among ids the caller may view (a Service's LoadByIDs).
type readByIDs[E any] func(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]E, error)

// loadBy is the relatedLoader reading with the read of the server's dependencies that read names, and
// converting with toAPI.
func loadBy[E, A any](read func(*Deps) readByIDs[E], toAPI func(E) A) relatedLoader {
	return func(ctx context.Context, h *base, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]any, error) {
		found, err := read(&h.s.deps)(ctx, sc, ids)
		if err != nil {
			return nil, err
		}
		out := make(map[uuid.UUID]any, len(found))
		for id, e := range found {
			out[id] = toAPI(e)
		}
		return out, nil
	}
}

// loadUsers loads Users (members of the caller's organization).
var loadUsers = loadBy(func(d *Deps) readByIDs[org.User] { return d.Orgs.UsersByID }, userToAPI)
