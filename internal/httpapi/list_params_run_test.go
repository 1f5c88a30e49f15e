package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/listquery"
)

// signatureWhere are the operations whose where selects function signatures (in memory), not entities.
var signatureWhere = map[string]bool{"ListOrgFunctions": true, "ListFunctions": true}

// entityOperation is an operation of the served document that marks the entity its list parameters
// apply to (x-hubd-entity).
type entityOperation struct {
	id, method, path string
	op               *openapi3.Operation
	entity           *listquery.Entity
	params           map[string]bool // the query parameters it declares
	// extended are the properties of the items it answers (ExtendedUnit...), to know what include fills.
	extended map[string]bool
}

func entityOperations(t *testing.T) []entityOperation {
	t.Helper()
	doc, err := apitest.Document()
	require.NoError(t, err)
	var out []entityOperation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			params := map[string]bool{}
			for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, p := range list {
					if p.Value.In == openapi3.ParameterInQuery {
						params[p.Value.Name] = true
					}
				}
			}
			raw, ok := op.Extensions["x-hubd-entity"]
			if !ok {
				if signatureWhere[op.OperationID] {
					delete(params, "where")
				}
				for _, p := range []string{"where", "contains", "order_by", "select", "include_hidden"} {
					require.False(t, params[p], "%s takes %s but has no x-hubd-entity", op.OperationID, p)
				}
				continue
			}
			name, _ := raw.(string)
			if m, isRaw := raw.(json.RawMessage); isRaw {
				require.NoError(t, json.Unmarshal(m, &name))
			}
			e := listquery.Lookup(name)
			require.NotNil(t, e, "%s: x-hubd-entity %q is no listquery.Entity; defined: %v", op.OperationID, raw, listquery.Names())
			out = append(out, entityOperation{id: op.OperationID, method: method, path: path, op: op, entity: e, params: params,
				extended: itemProperties(op)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// itemProperties are the properties of the objects a 200 answers (the array's items for a list).
func itemProperties(op *openapi3.Operation) map[string]bool {
	out := map[string]bool{}
	r := op.Responses.Status(http.StatusOK)
	if r == nil || r.Value.Content.Get("application/json") == nil {
		return out
	}
	s := r.Value.Content.Get("application/json").Schema.Value
	if s.Items != nil {
		s = s.Items.Value
	}
	for name := range s.Properties {
		out[name] = true
	}
	return out
}

// listRun calls one operation and judges its answers.
type listRun struct {
	t    *testing.T
	c    *apitest.Client
	op   entityOperation
	url  string // the concrete path
	body any
	// includeChecked records the includes seen filled (Entity/Name) where the related entity exists.
	includeChecked map[string]bool
}

func (r *listRun) call(q url.Values) *apitest.Response {
	r.t.Helper()
	target := r.url
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var resp *apitest.Response
	switch {
	case r.op.method == http.MethodPatch:
		resp = r.c.Patch(target, r.body)
	default:
		resp = r.c.Do(r.op.method, target, r.body)
	}
	assert.Less(r.t, resp.Status, 500, "%s %s: a list parameter never produces a 5xx; body: %s", r.op.method, target, resp.Body)
	return resp
}

// ok calls and requires 200, returning the items (a get's one object is an item too).
func (r *listRun) ok(q url.Values) ([]map[string]any, *apitest.Response) {
	r.t.Helper()
	resp := r.call(q)
	if resp.Status >= 500 {
		return nil, resp // reported by call
	}
	if !assert.Equal(r.t, http.StatusOK, resp.Status, "%s %s?%s: %s", r.op.method, r.url, q.Encode(), resp.Body) {
		return nil, resp
	}
	var items []map[string]any
	if strings.HasPrefix(strings.TrimSpace(string(resp.Body)), "[") {
		resp.JSON(&items)
	} else {
		var one map[string]any
		resp.JSON(&one)
		items = []map[string]any{one}
	}
	return items, resp
}

// ids are the entity IDs of items: the Extended form's entity field, or the item itself (bulk reads).
func (r *listRun) ids(items []map[string]any) []string {
	e := r.op.entity
	out := make([]string, len(items))
	for i, it := range items {
		obj := it
		if inner, ok := it[e.Name].(map[string]any); ok {
			obj = inner
		}
		id, _ := obj[e.ID].(string)
		require.NotEmpty(r.t, id, "%s: an item without %s: %v", r.op.id, e.ID, it)
		out[i] = id
	}
	return out
}

// withParams is a copy of q with the given name, value pairs set.
func withParams(q url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	for i := 0; i < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// paged reads q with limit=1, follows one Service-Continue, and requires the two pages to be the first two
// items of want (the unpaged answer): the keyset token of every order field round-trips.
func (r *listRun) paged(q url.Values, want []string) {
	r.t.Helper()
	if !r.op.params["limit"] {
		return
	}
	first, resp := r.ok(withParams(q, "limit", "1"))
	if resp.Status != http.StatusOK {
		return
	}
	got := r.ids(first)
	if len(want) == 0 {
		assert.Empty(r.t, got)
		return
	}
	assert.Equal(r.t, want[:1], got, "%s %v limit=1", r.op.id, q)
	token := resp.Header.Get("Service-Continue")
	if len(want) == 1 {
		return
	}
	if !assert.NotEmpty(r.t, token, "%s %v: limit=1 of %d items has no Service-Continue", r.op.id, q, len(want)) {
		return
	}
	next, resp := r.ok(withParams(q, "limit", "1", "continue", token))
	if resp.Status == http.StatusOK {
		assert.Equal(r.t, want[1:2], r.ids(next), "%s %v: the continued page", r.op.id, q)
	}
}

// checkIncludes requires each include the answer's schema has a field for to be filled wherever the
// entity names the related one (the attribute the include is named after is set).
func (r *listRun) checkIncludes(items []map[string]any, names []string) {
	r.t.Helper()
	e := r.op.entity
	for _, in := range e.Includes {
		if !slices.Contains(names, in.Name) || !r.op.extended[in.Field] {
			continue // not asked, or a related family the service does not have yet (it expands to nothing)
		}
		if in.Unserved {
			for _, it := range items {
				if list, isList := it[in.Field].([]any); isList {
					assert.Empty(r.t, list, "%s include=%s: %s of a family not served is []", r.op.id, in.Name, in.Field)
				} else {
					assert.Nil(r.t, it[in.Field], "%s include=%s: %s of a family not served is null", r.op.id, in.Name, in.Field)
				}
			}
			continue
		}
		for _, it := range items {
			if in.NamedBy { // nothing of the entity says whether any names it: one that is named is the proof
				if list, _ := it[in.Field].([]any); len(list) > 0 {
					r.includeChecked[e.Name+"/"+in.Name] = true
				}
				continue
			}
			obj, _ := it[e.Name].(map[string]any)
			if !isSet(obj[in.Name]) {
				continue
			}
			if assert.NotNil(r.t, it[in.Field], "%s include=%s: %s is %v but %s is not filled", r.op.id, in.Name, in.Name, obj[in.Name], in.Field) {
				r.includeChecked[e.Name+"/"+in.Name] = true
			}
		}
	}
}

// expectUserInput asserts the answer is 400 UserInput (the client's mistake, not the server's).
func expectUserInput(t *testing.T, resp *apitest.Response, msgAndArgs ...any) {
	t.Helper()
	if assert.Equal(t, http.StatusBadRequest, resp.Status, msgAndArgs...) {
		var body api.StandardErrorResponse
		resp.JSON(&body)
		assert.Equal(t, api.ErrorTypeUserInput, body.Error.Type, msgAndArgs...)
	}
}

// isSet reports whether an attribute's JSON value names something (not null, empty or zero).
func isSet(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != "" && x != "00000000-0000-0000-0000-000000000000"
	case float64:
		return x != 0
	case bool:
		return x
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

// conditions is one where condition per filterable attribute (and per attribute of its list elements or
// object fields), each valid for the attribute's type: every attribute's SQL runs.
func conditions(prefix string, e *listquery.Entity) []string {
	var out []string
	for _, a := range e.Attributes {
		if !a.Filterable {
			continue
		}
		n := prefix + a.Name
		switch a.Type {
		case listquery.String:
			out = append(out, n+" != 'x'")
		case listquery.Int:
			out = append(out, n+" != -1")
		case listquery.UUID:
			out = append(out, n+" != '00000000-0000-0000-0000-000000000000'")
		case listquery.Bool:
			out = append(out, n+" != true")
		case listquery.Time:
			out = append(out, n+" > '2000-01-01T00:00:00Z'")
		case listquery.StringMap:
			out = append(out, n+".k != 'x'")
		case listquery.BoolMap:
			out = append(out, n+".k != true")
		case listquery.UUIDList, listquery.StringList:
			out = append(out, "LEN("+n+") >= 0")
		case listquery.EntityList:
			out = append(out, conditions(n+".*.", a.Elem)...)
		case listquery.Object:
			out = append(out, conditions(n+".", a.Elem)...)
		}
	}
	return out
}
