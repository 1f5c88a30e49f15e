package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
)

// The operations every family serves the same way (list, get, create, update, patch, delete, bulk
// patch, delete, copy and move, document get and apply) are handled by code generated from the document
// (internal/build/edgegen writes edge_<family>.gen.go for the operations marked x-hubd-family), each a
// call of one of the functions below with the family's edge: what the HTTP layer knows of a family,
// declared once next to its converters (convert_<family>.go).

// kitService is what the HTTP edge calls of a family's Service: the entity kit's operations
// (entity.Service, and the Services that embed it).
type kitService[E, F any] interface {
	List(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params, conditions ...listquery.Condition) (listquery.Page[E], error)
	Get(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string) (E, error)
	LoadByIDs(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]E, error)
	Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f F, opts entity.WriteOptions) (E, error)
	Update(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, version int64, f F, dryRun bool) (E, error)
	Patch(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, patch json.RawMessage, dryRun bool) (E, error)
	Delete(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool) error
	Document(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string) (entity.Document, error)
	ApplyDocument(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, base, edited entity.Document, dryRun bool) (entity.Document, error)
	bulkPatcher[E]
	bulkDeleter[E]
	bulkCopier[E]
	bulkMover[E]
}

// An edge is a family as the HTTP layer serves it: E is its entity and F its Fields (the kit's), A its
// API form and X its Extended form (the generated models).
type edge[E, F, A, X any] struct {
	// service is the family's Service: served(<family>.Family) for a family that has only the kit's
	// operations, its own Service among the server's dependencies otherwise.
	service func(*Deps) kitService[E, F]
	// listing is how the family is listed: its Name is the entity type, it checks select and include.
	listing *listquery.Entity
	// toAPI converts an entity to its API form; fields reads the fields a create or a PUT sets.
	toAPI  func(E) A
	fields func(*A) F
	// relations are the entities include may expand beyond the Organization (every family's), loaded
	// once for a page; extended builds the Extended form of an entity from its API form and them.
	relations []relation[E]
	extended  func(e E, a A, r *related) X
}

// served serves a family that has only the kit's operations straight from its declaration.
func served[R any, E entity.Entity, F entity.Fields](fam *entity.Family[R, E, F]) func(*Deps) kitService[E, F] {
	return func(d *Deps) kitService[E, F] { return entity.NewService(fam, d.Kit) }
}

func (f *edge[E, F, A, X]) of(h *base) kitService[E, F] { return f.service(&h.s.deps) }

func (f *edge[E, F, A, X]) list(ctx context.Context, h *base, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	sc := scopeOf(ctx)
	page, err := f.of(h).List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, f.listing.Name, f.extend(h))
}

func (f *edge[E, F, A, X]) get(ctx context.Context, h *base, spaceID uuid.UUID, ref string, sel, include *string) (itemResponse, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, f.listing, sel, include, func() (E, error) { return f.of(h).Get(ctx, sc, spaceID, ref) }, f.extend(h))
}

func (f *edge[E, F, A, X]) create(ctx context.Context, h *base, spaceID uuid.UUID, body *A, dryRun, allowExists bool) (A, error) {
	e, err := f.of(h).Create(ctx, scopeOf(ctx), spaceID, f.fields(body), entity.WriteOptions{DryRun: dryRun, AllowExists: allowExists})
	return f.written(e, err)
}

func (f *edge[E, F, A, X]) update(ctx context.Context, h *base, spaceID uuid.UUID, ref string, body *A, version int64, dryRun bool) (A, error) {
	e, err := f.of(h).Update(ctx, scopeOf(ctx), spaceID, ref, version, f.fields(body), dryRun)
	return f.written(e, err)
}

func (f *edge[E, F, A, X]) patch(ctx context.Context, h *base, spaceID uuid.UUID, ref string, dryRun bool, bodies ...*json.RawMessage) (A, error) {
	patch, err := patchBody(bodies...)
	if err != nil {
		var none A
		return none, err
	}
	e, err := f.of(h).Patch(ctx, scopeOf(ctx), spaceID, ref, patch, dryRun)
	return f.written(e, err)
}

func (f *edge[E, F, A, X]) written(e E, err error) (A, error) {
	if err != nil {
		var none A
		return none, err
	}
	return f.toAPI(e), nil
}

func (f *edge[E, F, A, X]) delete(ctx context.Context, h *base, spaceID uuid.UUID, ref string, dryRun bool) (api.DeleteResponse, error) {
	if err := f.of(h).Delete(ctx, scopeOf(ctx), spaceID, ref, dryRun); err != nil {
		return api.DeleteResponse{}, err
	}
	return deleted(f.listing.Name), nil
}

func (f *edge[E, F, A, X]) document(ctx context.Context, h *base, spaceID uuid.UUID, ref string) (api.EntityDocument, error) {
	d, err := f.of(h).Document(ctx, scopeOf(ctx), spaceID, ref)
	return documentToAPI(d), err
}

func (f *edge[E, F, A, X]) applyDocument(ctx context.Context, h *base, spaceID uuid.UUID, ref string, read, edited api.EntityDocument, dryRun bool) (api.EntityDocument, error) {
	d, err := f.of(h).ApplyDocument(ctx, scopeOf(ctx), spaceID, ref, documentFromAPI(read), documentFromAPI(edited), dryRun)
	return documentToAPI(d), err
}

// bulkItemOf is the item of a bulk write of f's family: item gets the entity written, or why not.
func bulkItemOf[E, F, A, X, O any](f *edge[E, F, A, X], item func(*A, *api.ResponseError) O) func(entity.BulkItem[E], *api.ResponseError) O {
	return func(it entity.BulkItem[E], e *api.ResponseError) O {
		if e != nil {
			return item(nil, e)
		}
		a := f.toAPI(it.Value)
		return item(&a, nil)
	}
}

// extend is f's extender: the Extended forms of a page, with what include names loaded once for it.
func (f *edge[E, F, A, X]) extend(h *base) extender[E, X] {
	return func(ctx context.Context, sc authz.Scope, items []E, includes map[string]bool) ([]X, error) {
		return extendAll(ctx, h, sc, items, includes, f.relations, func(e E, r *related) X { return f.extended(e, f.toAPI(e), r) })
	}
}

// load is f's relatedLoader: the API forms of its entities among ids the caller may view.
func (f *edge[E, F, A, X]) load(ctx context.Context, h *base, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]any, error) {
	return loadBy(func(d *Deps) readByIDs[E] { return f.service(d).LoadByIDs }, f.toAPI)(ctx, h, sc, ids)
}
