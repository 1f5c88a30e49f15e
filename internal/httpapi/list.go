package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/listquery"
)

type requestPathKey struct{}
type userAgentKey struct{}
type mediaTypeKey struct{}

// requestPath is the path of the request in ctx; continue tokens are bound to it.
func requestPath(ctx context.Context) string {
	p, _ := ctx.Value(requestPathKey{}).(string)
	return p
}

// userAgent is the request's User-Agent, recorded on the Revisions it makes.
func userAgent(ctx context.Context) string {
	ua, _ := ctx.Value(userAgentKey{}).(string)
	return ua
}

// mediaType is the media type of the request body in ctx (lower case, without parameters).
func mediaType(ctx context.Context) string {
	mt, _ := ctx.Value(mediaTypeKey{}).(string)
	return mt
}

// pageResponse writes a list page: Extended forms, each entity projected to the selected fields,
// streamed one item at a time, and Service-Continue when more may follow. Its Visit methods, one per list
// operation of the document, are generated (visit.gen.go, internal/build/visitgen).
type pageResponse struct {
	items       []any
	entityField string
	info        listquery.PageInfo
}

func newPage[T any](items []T, entityField string, info listquery.PageInfo) pageResponse {
	out := make([]any, len(items))
	for i := range items {
		out[i] = items[i]
	}
	return pageResponse{items: out, entityField: entityField, info: info}
}

// pageBuffer is how much of a page is written to the connection at once: a page of 100 entities is
// tens of kilobytes, and the server's own 4 KB buffer would send it in dozens of writes.
const pageBuffer = 64 << 10

func (r pageResponse) write(rw http.ResponseWriter) error {
	if r.info.Continue != "" {
		rw.Header().Set("Service-Continue", r.info.Continue)
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	w := bufio.NewWriterSize(rw, pageBuffer)
	w.WriteByte('[')
	for i, item := range r.items {
		var columns func(map[string]json.RawMessage) []listquery.ColumnValue
		if v := r.info.View; v != nil {
			var values []json.RawMessage
			if i < len(r.info.ViewData) {
				values = r.info.ViewData[i]
			}
			columns = func(ext map[string]json.RawMessage) []listquery.ColumnValue { return v.Values(ext, values) }
		}
		data, err := project(item, r.entityField, r.info.Fields, columns)
		if err != nil {
			return err
		}
		if i > 0 {
			w.WriteByte(',')
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	w.WriteString("]\n")
	return w.Flush()
}

// itemResponse writes one Extended form, projected like a list item.
type itemResponse struct {
	item        any
	entityField string
	fields      map[string]bool
}

func (r itemResponse) write(w http.ResponseWriter) error {
	data, err := project(r.item, r.entityField, r.fields, nil)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data))) // known: sent in one piece, not chunked
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(data)
	return err
}

// project marshals an Extended form keeping only the selected fields (all when fields is nil): of its
// entity those named plainly, of an included entity those named Field.field (an included entity no dotted
// field names is kept whole). With view= columns computes its ViewColumns, from the whole form.
func project(item any, entityField string, fields map[string]bool, columns func(map[string]json.RawMessage) []listquery.ColumnValue) ([]byte, error) {
	data, err := json.Marshal(item)
	if err != nil || (fields == nil && columns == nil) {
		return data, err
	}
	var ext map[string]json.RawMessage
	if err := json.Unmarshal(data, &ext); err != nil {
		return nil, err
	}
	if columns != nil {
		values := columns(ext)
		wire := make([]api.ViewColumn, len(values))
		for i, v := range values {
			wire[i] = api.ViewColumn{Name: v.Name, Value: v.Value}
		}
		if ext["ViewColumns"], err = json.Marshal(wire); err != nil {
			return nil, err
		}
		if fields == nil {
			return joinObject(ext), nil
		}
	}
	included := map[string]map[string]bool{}
	for f := range fields {
		if field, sub, dotted := strings.Cut(f, "."); dotted {
			if included[field] == nil {
				included[field] = map[string]bool{}
			}
			included[field][sub] = true
		}
	}
	if ext[entityField], err = keepFields(ext[entityField], fields); err != nil {
		return nil, err
	}
	for field, subs := range included {
		if ext[field], err = keepFields(ext[field], subs); err != nil {
			return nil, err
		}
	}
	return joinObject(ext), nil
}

// joinObject writes a JSON object whose keys are field names of the Extended forms (plain ASCII) and whose
// values are already compact JSON (json.Marshal's own output),
// without checking and compacting each value again, as json.Marshal of the map would.
func joinObject(obj map[string]json.RawMessage) []byte {
	size := 2
	for k, v := range obj {
		size += len(k) + len(v) + 4
	}
	out := make([]byte, 0, size)
	out = append(out, '{')
	first := true
	for k, v := range obj {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = strconv.AppendQuote(out, k)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, '}')
}

// keepFields drops the fields not in keep from a JSON object, or from each object of an array; null
// stays null.
func keepFields(data json.RawMessage, keep map[string]bool) (json.RawMessage, error) {
	switch {
	case len(data) == 0 || string(data) == "null":
		return data, nil
	case data[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, err
		}
		for i := range items {
			var err error
			if items[i], err = keepFields(items[i], keep); err != nil {
				return nil, err
			}
		}
		return json.Marshal(items)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	for k := range obj {
		if !keep[k] {
			delete(obj, k)
		}
	}
	return json.Marshal(obj)
}

// bulkStatus picks a bulk response's status from its items' errors: 200 when none failed, the shared
// error when all failed with the same Type and Message, else 207.
func bulkStatus(errs []*apierr.Error) (int, error) {
	failed := 0
	for _, e := range errs {
		if e != nil {
			failed++
		}
	}
	switch {
	case failed == 0:
		return http.StatusOK, nil
	case failed < len(errs):
		return http.StatusMultiStatus, nil
	}
	first := errs[0]
	for _, e := range errs[1:] {
		if e.Type != first.Type || e.Message != first.Message {
			return http.StatusMultiStatus, nil
		}
	}
	return 0, first
}

// extender builds the Extended forms of entities read, expanding what include names (one read per
// include for all of them).
type extender[E, X any] func(ctx context.Context, sc authz.Scope, items []E, includes map[string]bool) ([]X, error)

// listed answers a list from the page a family's List read: its Extended forms, projected by select, with
// the continue token.
func listed[E, X any](ctx context.Context, sc authz.Scope, page listquery.Page[E], err error, entityType string, extend extender[E, X]) (pageResponse, error) {
	if err != nil {
		return pageResponse{}, err
	}
	out, err := extend(ctx, sc, page.Items, page.Includes)
	if err != nil {
		return pageResponse{}, err
	}
	return newPage(out, entityType, page.PageInfo), nil
}

// got answers a read of one entity: select and include are checked against the family's list registry
// first, then get reads it and extend builds its Extended form.
func got[E, X any](ctx context.Context, sc authz.Scope, listing *listquery.Entity, sel, include *string, get func() (E, error), extend extender[E, X]) (itemResponse, error) {
	fields, includes, err := listquery.Projection(listing, deref(sel), deref(include))
	if err != nil {
		return itemResponse{}, err
	}
	e, err := get()
	if err != nil {
		return itemResponse{}, err
	}
	ext, err := extend(ctx, sc, []E{e}, includes)
	if err != nil {
		return itemResponse{}, err
	}
	return itemResponse{item: ext[0], entityField: listing.Name, fields: fields}, nil
}
