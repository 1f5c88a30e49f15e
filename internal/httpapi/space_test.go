package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func createSpace(t *testing.T, c *apitest.Client, body map[string]any) api.Space {
	t.Helper()
	var sp api.Space
	c.Post("/api/space", body).Expect(http.StatusOK).JSON(&sp)
	return sp
}

func TestSpaceLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))

	sp := createSpace(t, c, map[string]any{
		"Slug": "dev", "DisplayName": "Development", "Labels": map[string]string{"tier": "dev"},
		"Annotations": map[string]string{"note": "x"}, "DeleteGates": map[string]bool{},
	})
	require.Equal(t, "dev", sp.Slug)
	require.Equal(t, int64(1), sp.Version)
	require.Equal(t, "Space", sp.EntityType)
	require.Equal(t, api.Labels{"tier": "dev"}, sp.Labels)
	require.Nil(t, sp.ComponentID)

	// Get answers the Extended form, with every field present.
	resp := c.Get("/api/space/" + sp.SpaceID.String()).Expect(http.StatusOK)
	raw := resp.Map()
	require.Contains(t, raw, "Error")
	require.Nil(t, raw["Error"])
	spaceRaw := raw["Space"].(map[string]any)
	for _, f := range []string{"SpaceID", "OrganizationID", "Slug", "DisplayName", "Labels", "Annotations", "DeleteGates",
		"Permissions", "HiddenReason", "ComponentID", "Version", "CreatedAt", "UpdatedAt"} {
		require.Contains(t, spaceRaw, f)
	}
	require.Equal(t, map[string]any{}, spaceRaw["Permissions"])

	// GET -> edit -> PUT round trip: read-only fields sent back are ignored, not refused or warned about.
	var ext api.ExtendedSpace
	resp.JSON(&ext)
	got := ext.Space
	got.DisplayName = "Dev"
	got.Labels["owner"] = "team-a"
	var updated api.Space
	put := c.Put("/api/space/"+sp.SpaceID.String(), got).Expect(http.StatusOK)
	put.JSON(&updated)
	require.Empty(t, put.Warnings())
	require.Equal(t, "Dev", updated.DisplayName)
	require.Equal(t, int64(2), updated.Version)
	require.Equal(t, sp.CreatedAt, updated.CreatedAt)
	require.Equal(t, api.Labels{"tier": "dev", "owner": "team-a"}, updated.Labels)

	// List.
	var list []api.ExtendedSpace
	c.Get("/api/space").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "Dev", list[0].Space.DisplayName)

	// Delete, then it is gone.
	var del api.DeleteResponse
	c.Delete("/api/space/" + sp.SpaceID.String()).Expect(http.StatusOK).JSON(&del)
	require.Nil(t, del.Error)
	c.Get("/api/space/"+sp.SpaceID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete("/api/space/"+sp.SpaceID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

func TestSpacePatch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "dev", "DisplayName": "Dev", "Labels": map[string]string{"a": "1", "b": "2"}})
	path := "/api/space/" + sp.SpaceID.String()

	// Merge patch: absent fields keep their value, null clears, map keys merge.
	var patched api.Space
	c.Patch(path, map[string]any{"Labels": map[string]any{"a": nil, "c": "3"}, "DisplayName": nil}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, api.Labels{"b": "2", "c": "3"}, patched.Labels)
	require.Equal(t, "", patched.DisplayName)
	require.Equal(t, "dev", patched.Slug)
	require.Equal(t, int64(2), patched.Version)

	// application/json is accepted for patches as well.
	c.Do(http.MethodPatch, path, apitest.Raw{ContentType: "application/json", Data: []byte(`{"DisplayName":"again"}`)}).Expect(http.StatusOK)

	// A Version in the patch is checked; a stale one is 409 Conflict and changes nothing.
	c.Patch(path, map[string]any{"DisplayName": "stale", "Version": 1}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var cur api.ExtendedSpace
	c.Get(path).Expect(http.StatusOK).JSON(&cur)
	require.Equal(t, "again", cur.Space.DisplayName)
	c.Patch(path, map[string]any{"DisplayName": "fresh", "Version": cur.Space.Version}).Expect(http.StatusOK)

	// Null on Labels clears the map; the Space still answers {}.
	var cleared api.Space
	c.Patch(path, map[string]any{"Labels": nil}).Expect(http.StatusOK).JSON(&cleared)
	require.Equal(t, api.Labels{}, cleared.Labels)

	// The whole GET body sent back as a patch is accepted without warnings.
	c.Get(path).Expect(http.StatusOK).JSON(&cur)
	resp := c.Patch(path, cur.Space).Expect(http.StatusOK)
	require.Empty(t, resp.Warnings())

	// Slug may not be cleared.
	c.Patch(path, map[string]any{"Slug": nil}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
}

func TestSpaceOptimisticConcurrency(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "dev"})
	path := "/api/space/" + sp.SpaceID.String()

	// PUT without Version is 400 UserInput naming Version.
	e := c.Put(path, map[string]any{"Slug": "dev"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "Version", e.Error.ErrorMetadata.Items[0].Item)

	// Two writers read Version 1; the second write is 409 Conflict and the first one's change stays.
	c.Put(path, map[string]any{"Slug": "dev", "DisplayName": "first", "Version": 1}).Expect(http.StatusOK)
	e = c.Put(path, map[string]any{"Slug": "dev", "DisplayName": "second", "Version": 1}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Equal(t, "Space", e.Error.ErrorMetadata.EntityType)
	var cur api.ExtendedSpace
	c.Get(path).Expect(http.StatusOK).JSON(&cur)
	require.Equal(t, "first", cur.Space.DisplayName)

	// Concurrent writers with the same Version: exactly one wins.
	const writers = 8
	results := make(chan int, writers)
	for i := 0; i < writers; i++ {
		go func(i int) {
			results <- c.Put(path, map[string]any{"Slug": "dev", "DisplayName": fmt.Sprint("w", i), "Version": cur.Space.Version}).Status
		}(i)
	}
	wins := 0
	for i := 0; i < writers; i++ {
		switch s := <-results; s {
		case http.StatusOK:
			wins++
		case http.StatusConflict:
		default:
			t.Fatalf("unexpected status %d", s)
		}
	}
	require.Equal(t, 1, wins)
}

func TestSpaceCreateRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "dev"})

	// Same Slug: 409 AlreadyExists; allow_exists returns the existing Space.
	e := c.Post("/api/space", map[string]any{"Slug": "dev"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	require.Equal(t, "dev", e.Error.ErrorMetadata.EntitySlug)
	var again api.Space
	c.Post("/api/space?allow_exists=true", map[string]any{"Slug": "dev"}).Expect(http.StatusOK).JSON(&again)
	require.Equal(t, sp.SpaceID, again.SpaceID)
	c.Post("/api/space?allow_exists=maybe", map[string]any{"Slug": "dev"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Renaming onto another Space's Slug is AlreadyExists too.
	other := createSpace(t, c, map[string]any{"Slug": "prod"})
	c.Put("/api/space/"+other.SpaceID.String(), map[string]any{"Slug": "dev", "Version": 1}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)

	// Invalid Slugs and values are refused.
	for _, bad := range []map[string]any{
		{"Slug": ""}, {"Slug": "-x"}, {"Slug": "a b"}, {}, {"Slug": "ok", "Labels": map[string]any{"a": 1}},
		{"Slug": "ok", "ComponentID": "not-a-uuid"}, {"Slug": "ok", "DeleteGates": map[string]any{"g": "yes"}},
	} {
		c.Post("/api/space", bad).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	}
	e = c.Post("/api/space", map[string]any{"Slug": "ok", "Permissions": map[string]any{"Bogus": map[string]any{}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Permissions.Bogus", e.Error.ErrorMetadata.Items[0].Item)
}

func TestSpaceDryRun(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))

	var dry api.Space
	c.Post("/api/space?dry_run=true", map[string]any{"Slug": "dev"}).Expect(http.StatusOK).JSON(&dry)
	require.Equal(t, "dev", dry.Slug)
	require.NotEqual(t, "00000000-0000-0000-0000-000000000000", dry.SpaceID.String())
	var list []api.ExtendedSpace
	c.Get("/api/space").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	c.Get("/api/space/"+dry.SpaceID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// A real create hands out a different ID.
	sp := createSpace(t, c, map[string]any{"Slug": "dev"})
	require.NotEqual(t, dry.SpaceID, sp.SpaceID)
	path := "/api/space/" + sp.SpaceID.String()

	// A dry-run create still runs every check.
	c.Post("/api/space?dry_run=true", map[string]any{"Slug": "dev"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)

	// Dry-run update, patch and delete answer what the write would, and store nothing.
	var upd api.Space
	c.Put(path+"?dry_run=true", map[string]any{"Slug": "dev", "DisplayName": "x", "Version": 1}).Expect(http.StatusOK).JSON(&upd)
	require.Equal(t, "x", upd.DisplayName)
	require.Equal(t, int64(2), upd.Version)
	c.Patch(path+"?dry_run=true", map[string]any{"DisplayName": "y"}).Expect(http.StatusOK)
	c.Delete(path + "?dry_run=true").Expect(http.StatusOK)
	var cur api.ExtendedSpace
	c.Get(path).Expect(http.StatusOK).JSON(&cur)
	require.Equal(t, "", cur.Space.DisplayName)
	require.Equal(t, int64(1), cur.Space.Version)
}

func TestSpaceDeleteGates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "dev", "DeleteGates": map[string]bool{"keep": true}})
	path := "/api/space/" + sp.SpaceID.String()

	e := c.Delete(path).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Equal(t, "DeleteGates.keep", e.Error.ErrorMetadata.Items[0].Item)
	c.Patch(path, map[string]any{"DeleteGates": map[string]any{"keep": nil}}).Expect(http.StatusOK)
	c.Delete(path).Expect(http.StatusOK)
}
