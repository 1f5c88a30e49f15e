package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func TestOrderBy(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	require.Equal(t, []string{"alpha", "beta", "delta", "gamma"}, f.slugs(t, url.Values{"order_by": {"Slug"}}))
	require.Equal(t, []string{"gamma", "delta", "beta", "alpha"}, f.slugs(t, url.Values{"order_by": {"DESC:Slug"}}))
	// Text order follows the database's collation; whatever it is, DESC reverses ASC.
	asc := f.slugs(t, url.Values{"order_by": {"ASC:DisplayName"}})
	desc := f.slugs(t, url.Values{"order_by": {"DESC:DisplayName"}})
	for i := range asc {
		require.Equal(t, asc[i], desc[len(desc)-1-i])
	}
	require.Equal(t, []string{"alpha", "beta", "gamma", "delta"}, f.slugs(t, url.Values{"order_by": {"CreatedAt"}}))
	require.Equal(t, []string{"delta", "gamma", "beta", "alpha"}, f.slugs(t, url.Values{"order_by": {"DESC:CreatedAt"}}))
	// Without order_by, ID order.
	ids := make([]string, 0)
	for _, sp := range f.spaces {
		ids = append(ids, sp.SpaceID.String())
	}
	sort.Strings(ids)
	var list []api.ExtendedSpace
	f.c.Get("/api/space").Expect(http.StatusOK).JSON(&list)
	for i := range list {
		require.Equal(t, ids[i], list[i].Space.SpaceID.String())
	}
	for _, bad := range []string{"Nope", "UP:Slug", "Labels", "Slug,Slug"} {
		f.c.Get("/api/space?"+url.Values{"order_by": {bad}}.Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	}
}

// slugPages pages through the list at path (with the query base and pages of limit) and returns the
// Slugs of its items, as slugOf reads them, and the number of pages: every page but the last is full and
// carries one Service-Continue.
func slugPages[X any](t *testing.T, c *apitest.Client, path string, base url.Values, limit int, slugOf func(X) string) ([]string, int) {
	t.Helper()
	var out []string
	q := url.Values{}
	for k, v := range base {
		q[k] = v
	}
	q.Set("limit", fmt.Sprint(limit))
	for pages := 1; ; pages++ {
		resp := c.Get(path + "?" + q.Encode()).Expect(http.StatusOK)
		var list []X
		resp.JSON(&list)
		for _, e := range list {
			out = append(out, slugOf(e))
		}
		next := resp.Header.Get("Service-Continue")
		if next == "" {
			require.LessOrEqual(t, len(list), limit)
			return out, pages
		}
		require.Len(t, list, limit, "a page before the last is full")
		require.Len(t, resp.Header.Values("Service-Continue"), 1)
		q.Set("continue", next)
		require.Less(t, pages, 100, "paging does not end")
	}
}

// readAll pages through the Spaces list.
func readAll(t *testing.T, c *apitest.Client, base url.Values, limit int) ([]string, int) {
	t.Helper()
	return slugPages(t, c, "/api/space", base, limit, func(e api.ExtendedSpace) string { return e.Space.Slug })
}

func TestPagination(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	var all []string
	for i := 0; i < 23; i++ {
		slug := fmt.Sprintf("s%02d", i)
		createSpace(t, c, map[string]any{"Slug": slug, "DisplayName": fmt.Sprintf("group-%d", i%3), "Labels": map[string]string{"parity": fmt.Sprint(i % 2)}})
		all = append(all, slug)
	}
	// Every order, direction and page size reads every Space exactly once, in order.
	for _, tc := range []struct {
		order string
		want  func([]string) []string
	}{
		{"Slug", func(s []string) []string { return s }},
		{"DESC:Slug", func(s []string) []string {
			r := append([]string(nil), s...)
			sort.Sort(sort.Reverse(sort.StringSlice(r)))
			return r
		}},
	} {
		for _, limit := range []int{1, 5, 23, 100} {
			got, pages := readAll(t, c, url.Values{"order_by": {tc.order}}, limit)
			require.Equal(t, tc.want(all), got, "%s limit %d", tc.order, limit)
			require.Equal(t, (len(all)+limit-1)/limit, pages, "%s limit %d", tc.order, limit)
		}
	}
	// Mixed directions, with ties broken by ID.
	got, _ := readAll(t, c, url.Values{"order_by": {"DESC:DisplayName,ASC:Slug"}}, 4)
	require.Len(t, got, len(all))
	var direct []api.ExtendedSpace
	c.Get("/api/space?order_by=DESC:DisplayName,ASC:Slug").Expect(http.StatusOK).JSON(&direct)
	for i := range direct {
		require.Equal(t, direct[i].Space.Slug, got[i])
	}
	// Ties on the only order field (DisplayName repeats) are broken by SpaceID.
	got, _ = readAll(t, c, url.Values{"order_by": {"DisplayName"}}, 3)
	require.ElementsMatch(t, all, got)
	// With where, contains and select.
	got, _ = readAll(t, c, url.Values{"where": {`Labels.parity = '1'`}, "select": {"Slug"}, "contains": {"group"}}, 4)
	require.Len(t, got, 11)

	// Without limit, everything and no header; the last page carries no Service-Continue.
	resp := c.Get("/api/space").Expect(http.StatusOK)
	require.Empty(t, resp.Header.Values("Service-Continue"))

	// limit bounds.
	c.Get("/api/space?limit=1001").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Get("/api/space?limit=0").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Get("/api/space?limit=1000").Expect(http.StatusOK)

	// A token is bound to its query, and tamper-evident.
	first := c.Get("/api/space?limit=5&order_by=Slug").Expect(http.StatusOK)
	token := first.Header.Get("Service-Continue")
	require.NotEmpty(t, token)
	c.Get("/api/space?limit=7&order_by=Slug&continue=" + url.QueryEscape(token)).Expect(http.StatusOK) // limit may change
	e := c.Get("/api/space?limit=5&order_by=DESC:Slug&continue="+url.QueryEscape(token)).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "continue", e.Error.ErrorMetadata.Items[0].Item)
	c.Get("/api/space?limit=5&order_by=Slug&where="+url.QueryEscape(`Slug != 'x'`)+"&continue="+url.QueryEscape(token)).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	tampered := []byte(token)
	tampered[3] ^= 1
	c.Get("/api/space?limit=5&order_by=Slug&continue="+url.QueryEscape(string(tampered))).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Get("/api/space?limit=5&order_by=Slug&continue=garbage").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// A token of another collection is refused.
	c.Get("/api/user?limit=5&order_by=Slug&continue="+url.QueryEscape(token)).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Deprecated offset: skips, not with continue.
	var page []api.ExtendedSpace
	c.Get("/api/space?order_by=Slug&offset=20").Expect(http.StatusOK).JSON(&page)
	require.Equal(t, []string{"s20", "s21", "s22"}, []string{page[0].Space.Slug, page[1].Space.Slug, page[2].Space.Slug})
	resp = c.Get("/api/space?order_by=Slug&offset=2&limit=2").Expect(http.StatusOK)
	resp.JSON(&page)
	require.Equal(t, "s02", page[0].Space.Slug)
	c.Get("/api/space?order_by=Slug&offset=2&continue="+url.QueryEscape(token)).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Get("/api/space?offset=-1").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Other lists page the same way.
	for i := 0; i < 4; i++ {
		env.Principal("acme", fmt.Sprintf("user%d", i), auth.RoleViewer)
	}
	resp = c.Get("/api/user?limit=2&order_by=Username").Expect(http.StatusOK)
	require.NotEmpty(t, resp.Header.Get("Service-Continue"))
	var me api.OrganizationMember
	c.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	resp = c.Get("/api/organization/" + me.OrganizationID.String() + "/organization_member?limit=2").Expect(http.StatusOK)
	require.NotEmpty(t, resp.Header.Get("Service-Continue"))
	resp = c.Get("/api/organization?limit=1").Expect(http.StatusOK)
	require.Empty(t, resp.Header.Get("Service-Continue"))
}
