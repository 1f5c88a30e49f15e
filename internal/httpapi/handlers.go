package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
)

// handlers implements the generated strict-server interface. The operations every family serves alike
// are its generated methods (edge_<family>.gen.go: each calls the family's edge, edge.go); the others
// are the methods of the handler structs embedded here, one per family that has such operations. A
// method converts the API request to domain terms, calls one domain service, and converts the result
// back; rules live in the services.
type handlers struct {
	*base
	unitAPI
	unitReadAPI
	functionAPI
	filterAPI
	commandRunAPI
	bridgeWorkerAPI
	serviceAccountAPI
	organizationAPI
	oauthClientAPI
	metaAPI
}

// base is what every family's handlers share: the server (its dependencies).
type base struct{ s *Server }

func newHandlers(s *Server) *handlers {
	b := &base{s: s}
	return &handlers{base: b, unitAPI: unitAPI{b}, unitReadAPI: unitReadAPI{b}, functionAPI: functionAPI{b},
		filterAPI: filterAPI{b}, commandRunAPI: commandRunAPI{b},
		bridgeWorkerAPI: bridgeWorkerAPI{b}, serviceAccountAPI: serviceAccountAPI{b}, organizationAPI: organizationAPI{b}, oauthClientAPI: oauthClientAPI{b},
		metaAPI: metaAPI{b}}
}

var _ api.StrictServerInterface = (*handlers)(nil)

// isTrue reads the 'true'/'false' string parameters (allow_exists).
func isTrue[T ~string](p *T) bool { return p != nil && *p == "true" }

// flag reads an optional boolean parameter (dry_run).
func flag(p *bool) bool { return p != nil && *p }

func deleted(entityType string) api.DeleteResponse {
	return api.DeleteResponse{Error: nil, Message: entityType + " deleted"}
}

// bulkDeleted is one item of a bulk delete: the entity deleted, or why not.
func bulkDeleted(entityType string, ref entity.Ref, err *apierr.Error) api.DeleteResponse {
	if err != nil {
		re := responseError(err)
		return api.DeleteResponse{Error: &re}
	}
	if ref.Slug == "" { // a family named by ID only
		return api.DeleteResponse{Message: fmt.Sprintf("%s %s deleted", entityType, ref.ID)}
	}
	return api.DeleteResponse{Message: fmt.Sprintf("%s %s (%s) deleted", entityType, ref.Slug, ref.ID)}
}

// patchBody is the merge patch of a request taking one under either media type: the body the generated
// handler bound. None bound (a Content-Type it did not recognize) is the caller's error, never a nil
// dereference.
func patchBody(bodies ...*json.RawMessage) (json.RawMessage, error) {
	for _, b := range bodies {
		if b != nil {
			return *b, nil
		}
	}
	return nil, apierr.UserInput("a JSON merge patch body is required: send Content-Type application/merge-patch+json or application/json")
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// rawJSON writes a pre-encoded JSON document (the API document itself).
type rawJSON []byte

func (r rawJSON) VisitGetAPIDocsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(r)
	return err
}

// bulkItems converts the items of a kit bulk operation to the generated items (toItem gets each item and,
// when it failed, its error as the API shows it) and says whether the answer is 207; when every item
// failed alike, that error is the answer.
func bulkItems[E, O any](items []entity.BulkItem[E], toItem func(entity.BulkItem[E], *api.ResponseError) O) (out []O, multiStatus bool, err error) {
	out = make([]O, len(items))
	errs := make([]*apierr.Error, len(items))
	for i, it := range items {
		errs[i] = it.Err
		var re *api.ResponseError
		if it.Err != nil {
			shown := responseError(it.Err)
			re = &shown
		}
		out[i] = toItem(it, re)
	}
	status, err := bulkStatus(errs)
	return out, status == http.StatusMultiStatus, err
}

// bulkRemoved converts the items of a kit bulk delete.
func bulkRemoved[E any](entityType string, items []entity.BulkItem[E]) ([]api.DeleteResponse, bool, error) {
	return bulkItems(items, func(it entity.BulkItem[E], _ *api.ResponseError) api.DeleteResponse {
		return bulkDeleted(entityType, it.Ref, it.Err)
	})
}

// bulkPatcher and bulkDeleter are the bulk operations every family serves (the kit's, and Units').
type bulkPatcher[E any] interface {
	BulkPatch(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, dryRun bool) ([]entity.BulkItem[E], error)
}

type bulkDeleter[E any] interface {
	BulkDelete(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, dryRun bool) ([]entity.BulkItem[E], error)
}

// patchedInBulk runs a bulk merge patch: its selection (where, filter or contains) and its body are
// required; each item is what toItem builds of the entity written or the error. multiStatus says 207.
func patchedInBulk[E, O any, P listParamsStruct](ctx context.Context, s *Server, svc bulkPatcher[E], params P, dryRun *bool, bodies []*json.RawMessage,
	toItem func(entity.BulkItem[E], *api.ResponseError) O) (out []O, multiStatus bool, err error) {
	sel, err := selectionParams(ctx, s, params)
	if err != nil {
		return nil, false, err
	}
	patch, err := patchBody(bodies...)
	if err != nil {
		return nil, false, err
	}
	items, err := svc.BulkPatch(ctx, scopeOf(ctx), requestPath(ctx), sel, patch, flag(dryRun))
	if err != nil {
		return nil, false, err
	}
	return bulkItems(items, toItem)
}

// deletedInBulk runs a bulk delete: its selection is required.
func deletedInBulk[E any, P listParamsStruct](ctx context.Context, s *Server, svc bulkDeleter[E], entityType string, params P, dryRun *bool) (out []api.DeleteResponse, multiStatus bool, err error) {
	sel, err := selectionParams(ctx, s, params)
	if err != nil {
		return nil, false, err
	}
	items, err := svc.BulkDelete(ctx, scopeOf(ctx), requestPath(ctx), sel, flag(dryRun))
	if err != nil {
		return nil, false, err
	}
	return bulkRemoved(entityType, items)
}

// bulkResponse answers a bulk write with its items: 207 when some failed, 200 when none did (when all
// failed alike the handler returns the shared error instead). Its Visit methods, one per operation that
// may answer 207, are generated (visit.gen.go).
type bulkResponse struct {
	// items are pointers to the answer's items (nil: the answer is null).
	items  []any
	status int
}

// write writes the items as json.Encoder would write them as one slice, marshalling and sending them one
// at a time: a client reading slowly holds the buffer and one item, not a second copy of the answer.
func (r bulkResponse) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(r.status)
	if r.items == nil {
		_, err := io.WriteString(w, "null\n")
		return err
	}
	bw := bufio.NewWriterSize(w, pageBuffer)
	bw.WriteByte('[')
	for i, item := range r.items {
		data, err := json.Marshal(item)
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		if _, err := bw.Write(data); err != nil {
			return err
		}
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// answeredInBulk is the answer of a bulk write from its converted items (bulkItems).
func answeredInBulk[O any](out []O, multiStatus bool, err error) (bulkResponse, error) {
	if err != nil {
		return bulkResponse{}, err
	}
	var items []any
	if out != nil {
		items = make([]any, len(out))
		for i := range out {
			items[i] = &out[i] // as a slice's elements are marshalled: addressable
		}
	}
	if multiStatus {
		return bulkResponse{items: items, status: http.StatusMultiStatus}, nil
	}
	return bulkResponse{items: items, status: http.StatusOK}, nil
}
