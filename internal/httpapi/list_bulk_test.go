package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
)

func TestBulkPatchSpaces(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	c := f.c
	q := "/api/_space?" + where(`Labels.tier = 'prod'`).Encode()

	// dry_run answers what would happen and stores nothing.
	var items []api.SpaceCreateOrUpdateResponse
	c.Patch(q+"&dry_run=true", map[string]any{"Labels": map[string]any{"reviewed": "yes"}}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	require.Equal(t, "yes", items[0].Space.Labels["reviewed"])
	require.Empty(t, f.slugs(t, where(`Labels.reviewed = 'yes'`)))

	c.Patch(q, map[string]any{"Labels": map[string]any{"reviewed": "yes"}}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	for _, it := range items {
		require.Nil(t, it.Error)
		require.Equal(t, "prod", it.Space.Labels["tier"])
		require.Equal(t, int64(2), it.Space.Version)
	}
	require.Equal(t, []string{"alpha", "delta"}, sorted(f.slugs(t, where(`Labels.reviewed = 'yes'`))))

	// An empty selection is 200 []; no selection at all is refused.
	c.Patch("/api/_space?"+where(`Slug = 'nope'`).Encode(), map[string]any{"DisplayName": "x"}).Expect(http.StatusOK).JSON(&items)
	require.Empty(t, items)
	c.Patch("/api/_space", map[string]any{"DisplayName": "x"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Patch("/api/_space?"+where(`Nope = 1`).Encode(), map[string]any{"DisplayName": "x"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// 207: a viewer granted Edit on one Space only.
	viewerID := f.env.Principal("acme", "vic", auth.RoleViewer).UserID
	c.Patch("/api/space/"+f.spaces["alpha"].SpaceID.String(), map[string]any{
		"Permissions": map[string]any{"Edit": map[string]any{"UserIDs": map[string]bool{viewerID.String(): true}}}}).Expect(http.StatusOK)
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Patch(q, map[string]any{"DisplayName": "by vic"}).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
	byOutcome := map[bool]api.SpaceCreateOrUpdateResponse{}
	for _, it := range items {
		byOutcome[it.Error == nil] = it
	}
	require.Equal(t, "by vic", byOutcome[true].Space.DisplayName)
	failed := byOutcome[false]
	require.Nil(t, failed.Space)
	require.Equal(t, api.ErrorTypePermission, failed.Error.Type)
	require.Equal(t, 403, failed.Error.Status)
	require.Equal(t, "Space", failed.Error.ErrorMetadata.EntityType)
	require.Equal(t, f.spaces["delta"].SpaceID.String(), failed.Error.ErrorMetadata.EntityID)

	// All failed with the same error: that error, with its status.
	e := viewer.Patch("/api/_space?"+where(`Slug IN ('beta', 'gamma')`).Encode(), map[string]any{"DisplayName": "x"}).
		ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Equal(t, "Space", e.Error.ErrorMetadata.EntityType)
	// A bad patch fails for every item alike.
	c.Patch(q, map[string]any{"Slug": nil}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
}

func TestBulkDeleteSpaces(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	c := f.c
	// gamma has a DeleteGate; delta's gate is false but present.
	var items []api.DeleteResponse
	c.Delete("/api/_space?" + where(`Slug IN ('alpha', 'gamma')`).Encode() + "&dry_run=true").Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, f.slugs(t, url.Values{}), 4, "dry run deletes nothing")

	c.Delete("/api/_space?" + where(`Slug IN ('alpha', 'gamma')`).Encode()).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
	var ok, bad api.DeleteResponse
	for _, it := range items {
		if it.Error == nil {
			ok = it
		} else {
			bad = it
		}
	}
	require.Contains(t, ok.Message, "alpha")
	require.Equal(t, api.ErrorTypeConflict, bad.Error.Type)
	require.Equal(t, "gamma", bad.Error.ErrorMetadata.EntitySlug)
	require.Equal(t, f.spaces["gamma"].SpaceID.String(), bad.Error.ErrorMetadata.EntityID)
	require.Equal(t, []string{"beta", "delta", "gamma"}, sorted(f.slugs(t, url.Values{})))

	// All refused alike: the shared error.
	c.Delete("/api/_space?"+where(`DeleteGates.keep IS NOT NULL`).Encode()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Delete("/api/_space").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	c.Delete("/api/_space?" + url.Values{"contains": {"beta"}}.Encode()).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Nil(t, items[0].Error)
	require.Equal(t, []string{"delta", "gamma"}, sorted(f.slugs(t, url.Values{})))
	c.Delete("/api/_space?" + where(`Slug = 'nope'`).Encode()).Expect(http.StatusOK).JSON(&items)
	require.Empty(t, items)
}
