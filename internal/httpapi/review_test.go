package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestSelectionAndBodyEdgeCases: blank selections, trailing JSON, LIKE escapes, text the database
// cannot hold, contains over map keys and values only.
func TestSelectionAndBodyEdgeCases(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	c := f.c
	for _, q := range []string{"where=%20", "contains=%20%20", "where=&contains="} {
		c.Patch("/api/_space?"+q, map[string]any{"DisplayName": "x"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		c.Delete("/api/_space?"+q).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	}
	require.Len(t, f.slugs(t, url.Values{}), 4)

	for _, body := range []string{`{"Slug":"x"} trailing`, `{"Slug":"x"}{"Slug":"y"}`} {
		c.Post("/api/space", apitest.Raw{ContentType: "application/json", Data: []byte(body)}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	}
	require.Empty(t, f.slugs(t, where(`Slug IN ('x', 'y')`)))

	e := c.Get("/api/space?"+where(`Slug LIKE '%\'`).Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "where", e.Error.ErrorMetadata.Items[0].Item)
	for _, p := range []url.Values{where("Slug = 'a\x00b'"), {"contains": {"a\x00"}}, where("Slug = '\xff'")} {
		e := c.Get("/api/space?"+p.Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.NotEmpty(t, e.Error.ErrorMetadata.Items)
	}
	e = c.Get("/api/space?"+where("Slug = \u0663").Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.NotContains(t, e.Error.Message, "out of range")

	require.Empty(t, f.slugs(t, url.Values{"contains": {"{"}}))
	require.Empty(t, f.slugs(t, url.Values{"contains": {`":"`}}))

	// select adds the fields contains searches.
	var raw []map[string]map[string]any
	c.Get("/api/space?select=DisplayName&contains=prod").Expect(http.StatusOK).JSON(&raw)
	require.Contains(t, raw[0]["Space"], "Labels")

	// A ComponentID must name a Component (a Space's ID names none).
	c.Post("/api/space", map[string]any{"Slug": "v", "ComponentID": f.spaces["alpha"].SpaceID.String()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}

func TestHiddenNotBypassed(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	_, err := f.env.App.Store.Pool.Exec(context.Background(), "UPDATE space SET hidden_reason = 'BackingUnit' WHERE slug = 'beta'")
	require.NoError(t, err)
	for _, w := range []string{`(Slug = 'zzz') IS NOT TRUE`, `Slug = DisplayName`, `(Slug = 'beta') IS TRUE`, `Slug != 'zzz'`} {
		require.NotContains(t, f.slugs(t, where(w)), "beta", w)
	}
	f.c.Patch("/api/_space?"+where(`(Slug = 'zzz') IS NOT TRUE`).Encode()+"&dry_run=true", map[string]any{"DisplayName": "x"}).Expect(http.StatusOK)
}

func TestWarningsAreQuotedAndBounded(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	body := map[string]any{"Slug": "dev", `Bo"gus\`: 1, "Ctl\u0001": 2}
	for i := 0; i < 50; i++ {
		body[fmt.Sprintf("Extra%02d", i)] = i
	}
	ws := c.Post("/api/space?dry_run=true", body).Expect(http.StatusOK).Warnings()
	require.Len(t, ws, 21)
	require.Contains(t, ws, `299 hubd "Unknown field: Bo\"gus\\"`)
	require.Contains(t, ws, `299 hubd "Unknown field: Ctl"`)
	require.Equal(t, `299 hubd "32 more unknown fields"`, ws[20])
}

func TestConcurrentWritesAreSerialized(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	const n = 8
	run := func(fn func(i int) int) []int {
		var wg sync.WaitGroup
		out := make([]int, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				out[i] = fn(i)
			}(i)
		}
		wg.Wait()
		return out
	}
	count := func(statuses []int, want int) int {
		k := 0
		for _, s := range statuses {
			if s == want {
				k++
			}
		}
		return k
	}
	// allow_exists: every racer gets the one Space.
	statuses := run(func(int) int { return c.Post("/api/space?allow_exists=true", map[string]any{"Slug": "race"}).Status })
	require.Equal(t, n, count(statuses, http.StatusOK), statuses)
	var list []api.ExtendedSpace
	c.Get("/api/space").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	path := "/api/space/" + list[0].Space.SpaceID.String()

	// PATCHes without Version never fail and never lose one another's change.
	statuses = run(func(i int) int {
		return c.Patch(path, map[string]any{"Labels": map[string]string{fmt.Sprintf("k%d", i): "v"}}).Status
	})
	require.Equal(t, n, count(statuses, http.StatusOK), statuses)
	var sp api.ExtendedSpace
	c.Get(path).Expect(http.StatusOK).JSON(&sp)
	require.Len(t, sp.Space.Labels, n)
	require.Equal(t, int64(n+1), sp.Space.Version)
	// Version 0 is never the stored one.
	c.Patch(path, map[string]any{"DisplayName": "x", "Version": 0}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// Concurrent deletes: one succeeds, the others find nothing.
	statuses = run(func(int) int { return c.Delete(path).Status })
	require.Equal(t, 1, count(statuses, http.StatusOK), statuses)
	require.Equal(t, n-1, count(statuses, http.StatusNotFound), statuses)

	// Organizations and members under allow_exists races.
	statuses = run(func(int) int {
		return c.Post("/api/organization?allow_exists=true", map[string]any{"Slug": "raced-org"}).Status
	})
	require.Equal(t, n, count(statuses, http.StatusOK), statuses)
	var me api.OrganizationMember
	c.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	members := "/api/organization/" + me.OrganizationID.String() + "/organization_member?allow_exists=true"
	statuses = run(func(int) int { return c.Post(members, map[string]any{"Username": "racer"}).Status })
	require.Equal(t, n, count(statuses, http.StatusOK), statuses)
}

func TestGrantsMatchAnyUUIDForm(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	vic := env.Principal("acme", "vic", auth.RoleViewer).UserID
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	sp := createSpace(t, admin, map[string]any{"Slug": "dev"})
	path := "/api/space/" + sp.SpaceID.String()
	var granted api.Space
	admin.Patch(path, map[string]any{"Permissions": map[string]any{"Edit": map[string]any{"UserIDs": map[string]bool{strings.ToUpper(vic.String()): true}}}}).
		Expect(http.StatusOK).JSON(&granted)
	require.True(t, granted.Permissions["Edit"].UserIDs[vic.String()])
	viewer.Patch(path, map[string]any{"DisplayName": "ok"}).Expect(http.StatusOK)
}
