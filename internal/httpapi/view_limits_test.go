package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/listquery"
)

// TestViewDataLimits: what a View's data columns select for a list page is bounded. A column selecting
// more values or bytes of one Unit than the per-cell limits is 400 naming the limit, the column and the
// Unit; a page whose data columns pass the page budget ends early with a continue token, and the next
// pages continue where it ended; a Unit passing the page budget alone is 400.
func TestViewDataLimits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{
		ViewLimits: listquery.ViewLimits{CellValues: 5, CellBytes: 300, PageBytes: 600}}})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	f := &unitFixture{env: env, c: c, space: createSpace(t, c, map[string]any{"Slug": "dev"})}
	units := map[string]api.Unit{}
	unit := func(slug string, items ...string) {
		u := f.create(t, slug, configdata.KubernetesYAML)
		units[slug] = u
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + slug + "\nitems:\n"
		for _, it := range items {
			doc += "  - " + it + "\n"
		}
		f.put(t, u, "application/yaml", doc).Expect(http.StatusOK)
	}
	unit("many", "a", "b", "c", "d", "e", "f")      // six values: past CellValues
	unit("big", strings.Repeat("x", 400))           // one value of 402 bytes: past CellBytes
	pages := []string{"p1", "p2", "p3", "p4", "p5"} // two values, 266 bytes as ViewColumns: two fit a page
	for _, slug := range pages {
		unit(slug, strings.Repeat("y", 100), strings.Repeat("z", 100))
	}
	base := "/api/space/" + f.space.SpaceID.String()
	view := func(slug string, paths ...string) string {
		cols := []map[string]any{metadataColumn("Unit", "Slug")}
		for i, p := range paths {
			cols = append(cols, dataColumn(fmt.Sprintf("Items%d", i), p, ""))
		}
		var v api.View
		c.Post(base+"/view", map[string]any{"Slug": slug, "Of": "Unit", "OrderBy": "Slug", "Columns": cols}).Expect(http.StatusOK).JSON(&v)
		return v.ViewID.String()
	}
	items, triple := view("items", "items.*"), view("triple", "items.*", "items.*", "items.*")
	list := func(q url.Values) *apitest.Response { return c.Get(f.unitsPath() + "?" + q.Encode()) }

	e := list(url.Values{"view": {items}, "where": {"Slug = 'many'"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, `column "Items0"`)
	require.Contains(t, e.Error.Message, "more than 5 values of Unit "+units["many"].UnitID.String())
	require.Equal(t, "view", e.Error.ErrorMetadata.Items[0].Item)

	e = list(url.Values{"view": {items}, "where": {"Slug = 'big'"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, `column "Items0"`)
	require.Contains(t, e.Error.Message, "more than 300 bytes of Unit "+units["big"].UnitID.String())

	e = list(url.Values{"view": {triple}, "where": {"Slug = 'p1'"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "more than 600 bytes of Unit "+units["p1"].UnitID.String())
	require.Contains(t, e.Error.Message, "per page")

	// The pages of p1..p5 hold two Units each, whatever the limit, and together hold each Unit once.
	var seen []string
	q := url.Values{"view": {items}, "where": {"Slug LIKE 'p%'"}, "limit": {"10"}}
	for i := 0; ; i++ {
		require.Less(t, i, 5, "the pages end")
		var page []api.ExtendedUnit
		resp := list(q).Expect(http.StatusOK)
		resp.JSON(&page)
		require.LessOrEqual(t, len(page), 2, "a page ends before its View data passes the budget")
		require.NotEmpty(t, page)
		for _, u := range page {
			seen = append(seen, u.Unit.Slug)
			require.Len(t, u.ViewColumns, 3, "the Unit's Slug and its two items")
		}
		next := resp.Header.Get("Service-Continue")
		if next == "" {
			break
		}
		q.Set("continue", next)
	}
	require.Equal(t, pages, seen)

	// Without the View, or with a limit the budget does not reach, nothing is cut.
	var all []api.ExtendedUnit
	resp := list(url.Values{"where": {"Slug LIKE 'p%'"}, "limit": {"10"}}).Expect(http.StatusOK)
	resp.JSON(&all)
	require.Len(t, all, 5)
	require.Empty(t, resp.Header.Get("Service-Continue"))
	resp = list(url.Values{"view": {items}, "where": {"Slug LIKE 'p%'"}, "limit": {"2"}}).Expect(http.StatusOK)
	resp.JSON(&all)
	require.Len(t, all, 2)
	require.NotEmpty(t, resp.Header.Get("Service-Continue"))
}
