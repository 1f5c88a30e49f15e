package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/httpapi"
)

// TestListParameters runs the list parameters of every operation the document marks with x-hubd-entity,
// against one organization with data in every family: contains, where on every filterable attribute,
// order_by (ASC and DESC) on every orderable one, include of every name and all at once, each with
// limit=1 and one continued page, select of every attribute and include_hidden=*. None may answer 5xx;
// DESC must reverse ASC exactly (the ID breaks ties in the same direction), pages must be the unpaged
// answer's items, and every include the answer has a field for must fill it where the related entity
// exists. The selection writes run with dry_run.
func TestListParameters(t *testing.T) {
	t.Parallel()
	f := newEveryFamily(t)
	ops := entityOperations(t)
	require.NotEmpty(t, ops)
	filtered, viewed := 0, 0 // lists filter= and view= were tried on
	// The Filters and Views filter= and view= are tried with exist before any list is read (they are
	// listed too).
	filterOf(t, f, "Space")
	filterOf(t, f, "Unit")
	viewOf(t, f, "Space")
	viewOf(t, f, "Unit")
	for _, op := range ops {
		if op.params["filter"] {
			filterOf(t, f, op.entity.Name)
		}
		if op.params["view"] {
			viewOf(t, f, op.entity.Name)
		}
	}
	includeChecked := map[string]bool{}
	includeExpected := map[string]bool{} // Entity/Name of every include some answer has a field for
	reversed := map[string]int{}         // entity → order_by checks made over two items or more
	for _, op := range ops {
		path := op.path
		for _, seg := range strings.Split(op.path, "/") {
			if strings.HasPrefix(seg, "{") {
				name := strings.Trim(seg, "{}")
				v, ok := f.path[name]
				require.True(t, ok, "%s (%s %s) has list parameters but the fixture has no value for its path parameter %s: add one to newEveryFamily",
					op.id, op.method, op.path, name)
				path = strings.Replace(path, seg, v, 1)
			}
		}
		c := f.c
		if caller, ok := f.callers[op.id]; ok {
			c = caller
		}
		r := &listRun{t: t, c: c, op: op, url: httpapi.BasePath + path, includeChecked: includeChecked}
		if op.method != http.MethodGet {
			runSelectionWrite(t, f, r)
			continue
		}
		e := op.entity
		all, resp := r.ok(nil)
		if resp.Status != http.StatusOK {
			continue
		}
		allIDs := r.ids(all)

		if op.params["filter"] {
			// A Filter of the listed type selecting everything answers what the list does; one of another
			// type is refused.
			filtered++
			id := filterOf(t, f, e.Name)
			items, _ := r.ok(url.Values{"filter": {id}})
			assert.ElementsMatch(t, allIDs, r.ids(items), "%s: an empty Filter of %s selects the whole list", op.id, e.Name)
			other := "Space"
			if e.Name == other {
				other = "Unit"
			}
			resp := r.call(url.Values{"filter": {filterOf(t, f, other)}})
			assert.Equal(t, http.StatusBadRequest, resp.Status, "%s: a Filter of %s on a %s list: %s", op.id, other, e.Name, resp.Body)
		}
		if op.params["view"] {
			// A View of the listed type lists the same items, each with its columns (the first the item's
			// ID), and pages them; one of another type is refused.
			viewed++
			id := viewOf(t, f, e.Name)
			items, _ := r.ok(url.Values{"view": {id}})
			assert.Equal(t, allIDs, r.ids(items), "%s: a View without order or Filter lists the same items", op.id)
			for i, it := range items {
				cols, _ := it["ViewColumns"].([]any)
				if assert.NotEmpty(t, cols, "%s: item %d has no ViewColumns", op.id, i) {
					first, _ := cols[0].(map[string]any)
					assert.Equal(t, map[string]any{"Name": "id", "Value": allIDs[i]}, first, "%s: the first column is the ID", op.id)
				}
			}
			r.paged(url.Values{"view": {id}}, allIDs)
			other := "Space"
			if e.Name == other {
				other = "Unit"
			}
			resp := r.call(url.Values{"view": {viewOf(t, f, other)}})
			assert.Equal(t, http.StatusBadRequest, resp.Status, "%s: a View of %s on a %s list: %s", op.id, other, e.Name, resp.Body)
		}
		if op.params["contains"] {
			if e.SupportsContains() {
				items, _ := r.ok(url.Values{"contains": {"x"}})
				for _, id := range r.ids(items) {
					assert.Contains(t, allIDs, id, "%s: contains selects from the list", op.id)
				}
			} else {
				expectUserInput(t, r.call(url.Values{"contains": {"x"}}), "%s: %s lists do not take contains", op.id, e.Name)
			}
		}
		if op.params["where"] {
			for _, w := range conditions("", e) {
				r.ok(url.Values{"where": {w}})
			}
		}
		if op.params["order_by"] {
			// distinct_on=Off is the Revision lists' other statement (no DISTINCT ON subselect); it needs limit.
			variants := []url.Values{{}}
			if op.params["distinct_on"] {
				// A where that keeps everything: UnitEvents' distinct_on=Off needs one.
				variants = append(variants, url.Values{"distinct_on": {"Off"}, "limit": {"1000"},
					"where": {fmt.Sprintf("%s != '00000000-0000-0000-0000-000000000000'", e.ID)}})
			}
			for _, v := range variants {
				base, resp := r.ok(v)
				if resp.Status != http.StatusOK {
					continue
				}
				baseIDs := r.ids(base)
				for _, field := range e.OrderFields() {
					asc, resp := r.ok(withParams(v, "order_by", field))
					desc, resp2 := r.ok(withParams(v, "order_by", "DESC:"+field))
					if resp.Status != http.StatusOK || resp2.Status != http.StatusOK {
						continue
					}
					ascIDs, descIDs := r.ids(asc), r.ids(desc)
					assert.ElementsMatch(t, baseIDs, ascIDs, "%s %v order_by=%s lists the same entities", op.id, v, field)
					reverse := slices.Clone(ascIDs)
					slices.Reverse(reverse)
					assert.Equal(t, reverse, descIDs, "%s %v: order_by=DESC:%s reverses order_by=%s", op.id, v, field, field)
					if len(ascIDs) >= 2 {
						reversed[e.Name]++
					}
					r.paged(withParams(v, "order_by", field), ascIDs)
					r.paged(withParams(v, "order_by", "DESC:"+field), descIDs)
				}
			}
		}
		if op.params["include"] {
			names := e.IncludeNames()
			for _, in := range e.Includes {
				if op.extended[in.Field] && !in.Unserved {
					includeExpected[e.Name+"/"+in.Name] = true
				}
			}
			for _, q := range append(slices.Clone(names), strings.Join(names, ",")) {
				items, resp := r.ok(url.Values{"include": {q}})
				if resp.Status == http.StatusOK {
					assert.Equal(t, allIDs, r.ids(items), "%s include=%s lists the same entities", op.id, q)
					r.checkIncludes(items, strings.Split(q, ","))
					r.paged(url.Values{"include": {q}}, allIDs)
				}
			}
		}
		if op.params["select"] {
			var every []string
			for _, a := range e.Attributes {
				every = append(every, a.Name)
			}
			r.ok(url.Values{"select": {strings.Join(every, ",")}})
			// Each field alone: what select leaves out never breaks the response schema (fields it
			// requires are always returned).
			for _, a := range every {
				r.ok(url.Values{"select": {a}})
			}
		}
		if op.params["include_hidden"] {
			r.ok(url.Values{"include_hidden": {"*"}})
		}
	}

	// The fixture gave every include something to expand, and every list (but the Organization's: a
	// token names one) two entities or more to order.
	for k := range includeExpected {
		assert.True(t, includeChecked[k], "no answer had a %s whose include is set: give the fixture one", k)
	}
	for _, op := range ops {
		if op.method == http.MethodGet && op.params["order_by"] && op.entity.Name != "Organization" {
			assert.Positive(t, reversed[op.entity.Name], "%s: no %s list had two entities to order", op.id, op.entity.Name)
		}
	}
	assert.Greater(t, filtered, 10, "filter= was tried on too few lists")
	assert.Greater(t, viewed, 10, "view= was tried on too few lists")
}

// runSelectionWrite runs a bulk write's selection (dry_run): selecting everything, by contains, and by
// each order field where it takes order_by. Its outcome per entity may be anything but a 5xx.
func runSelectionWrite(t *testing.T, f *everyFamily, r *listRun) {
	t.Helper()
	op, e := r.op, r.op.entity
	w, known := f.writes[op.id]
	switch {
	case known:
		r.body = w.body
	case op.method == http.MethodPatch:
		r.body = map[string]any{}
	case op.op.RequestBody != nil && op.op.RequestBody.Value.Required:
		t.Errorf("%s (%s %s) takes a body the test cannot guess: add it to newEveryFamily's writes", op.id, op.method, op.path)
		return
	}
	require.True(t, op.params["dry_run"], "%s: a selection write without dry_run cannot be run here", op.id)
	base := url.Values{"dry_run": {"true"}}
	for k, v := range w.query {
		base[k] = v
	}
	everything := fmt.Sprintf("%s != '00000000-0000-0000-0000-000000000000'", e.ID)
	resp := r.call(withParams(base, "where", everything))
	assert.NotEqual(t, http.StatusBadRequest, resp.Status, "%s: the selection of everything is valid: %s", op.id, resp.Body)
	if op.params["contains"] {
		resp := r.call(withParams(base, "contains", "x"))
		if !e.SupportsContains() {
			expectUserInput(t, resp, "%s: %s selections do not take contains", op.id, e.Name)
		} else if resp.Status == http.StatusBadRequest {
			var body api.StandardErrorResponse
			resp.JSON(&body)
			for _, it := range body.Error.ErrorMetadata.Items {
				assert.NotEqual(t, "contains", it.Item, "%s: contains is refused: %s", op.id, resp.Body)
			}
		}
	}
	if op.params["order_by"] {
		for _, field := range e.OrderFields() {
			r.call(withParams(base, "where", everything, "order_by", "DESC:"+field))
		}
	}
}
