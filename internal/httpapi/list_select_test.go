package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
)

func TestSelectAndInclude(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	var raw []map[string]map[string]any
	f.c.Get("/api/space?select=DisplayName&where=" + url.QueryEscape(`Labels.tier = 'prod'`) + "&order_by=CreatedAt").Expect(http.StatusOK).JSON(&raw)
	require.Len(t, raw, 2)
	keys := make([]string, 0)
	for k := range raw[0]["Space"] {
		keys = append(keys, k)
	}
	// Named, always returned (IDs, parent IDs, Slug), and used by where and order_by.
	require.ElementsMatch(t, []string{"DisplayName", "SpaceID", "OrganizationID", "Slug", "Labels", "CreatedAt"}, keys)

	e := f.c.Get("/api/space?select=Data").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "Data")
	resp := f.c.Get("/api/space?select=Nope,DisplayName").Expect(http.StatusOK)
	require.Equal(t, []string{`299 hubd "Unknown select field: Nope"`}, resp.Warnings(), "an unknown name is ignored, with a warning")

	// include expands the related Organization, in lists and gets; unknown names are refused.
	var list []api.ExtendedSpace
	f.c.Get("/api/space?include=OrganizationID").Expect(http.StatusOK).JSON(&list)
	require.NotNil(t, list[0].Organization)
	require.Equal(t, "acme", list[0].Organization.Slug)
	f.c.Get("/api/space").Expect(http.StatusOK).JSON(&list)
	require.Nil(t, list[0].Organization)
	f.c.Get("/api/space?include=TargetID").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	alpha := "/api/space/" + f.spaces["alpha"].SpaceID.String()
	var one api.ExtendedSpace
	f.c.Get(alpha + "?include=OrganizationID").Expect(http.StatusOK).JSON(&one)
	require.Equal(t, "acme", one.Organization.Slug)
	f.c.Get(alpha+"?include=Nope").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	var sel map[string]map[string]any
	f.c.Get(alpha + "?select=Labels").Expect(http.StatusOK).JSON(&sel)
	require.Len(t, sel["Space"], 4) // Labels, SpaceID, OrganizationID, Slug
	f.c.Get(alpha+"?select=Data").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	var me api.OrganizationMember
	f.c.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	var org map[string]map[string]any
	f.c.Get("/api/organization/" + me.OrganizationID.String() + "?select=DisplayName").Expect(http.StatusOK).JSON(&org)
	require.Len(t, org["Organization"], 3)
	var user map[string]map[string]any
	f.c.Get("/api/user/" + me.UserID.String() + "?select=Username").Expect(http.StatusOK).JSON(&user)
	require.Len(t, user["User"], 3)
}

func TestIncludeHidden(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	// Nothing hides Spaces yet (backing Units will); the reason is set directly.
	_, err := f.env.App.Store.Pool.Exec(context.Background(), "UPDATE space SET hidden_reason = 'BackingUnit' WHERE slug = 'beta'")
	require.NoError(t, err)
	require.Equal(t, []string{"alpha", "delta", "gamma"}, sorted(f.slugs(t, url.Values{})))
	require.Len(t, f.slugs(t, url.Values{"include_hidden": {"BackingUnit"}}), 4)
	require.Len(t, f.slugs(t, url.Values{"include_hidden": {"*"}}), 4)
	require.Len(t, f.slugs(t, url.Values{"include_hidden": {"Other"}}), 3)
	// A where that names the entity by Slug or ID, or mentions HiddenReason, returns it.
	require.Equal(t, []string{"beta"}, f.slugs(t, where(`Slug = 'beta'`)))
	require.Equal(t, []string{"beta"}, f.slugs(t, where(`Slug IN ('beta')`)))
	require.Equal(t, []string{"beta"}, f.slugs(t, where(`SpaceID = '`+f.spaces["beta"].SpaceID.String()+`'`)))
	require.Equal(t, []string{"beta"}, f.slugs(t, where(`HiddenReason = 'BackingUnit'`)))
	require.Empty(t, f.slugs(t, where(`Slug LIKE 'bet%'`)))
	f.c.Get("/api/space?include_hidden=*,BackingUnit").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	var sp api.ExtendedSpace
	f.c.Get("/api/space/" + f.spaces["beta"].SpaceID.String()).Expect(http.StatusOK).JSON(&sp)
	require.Equal(t, "BackingUnit", sp.Space.HiddenReason)
}
