package httpapi_test

import (
	"net/http"
	"net/url"
	"sort"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func createGroup(t *testing.T, c *apitest.Client, body map[string]any) api.Group {
	t.Helper()
	var g api.Group
	c.Post("/api/group", body).Expect(http.StatusOK).JSON(&g)
	return g
}

func groupIDsOf(t *testing.T, c *apitest.Client, userID uuid.UUID) []uuid.UUID {
	t.Helper()
	var u api.ExtendedUser
	c.Get("/api/user/" + userID.String()).Expect(http.StatusOK).JSON(&u)
	return u.User.GroupIDs
}

// TestGroupLifecycle: Groups are written by managers and admins, name members of the organization only,
// keep their members sorted and unique, and fill each member's User.GroupIDs.
func TestGroupLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	manager := env.Client(env.Token("acme", "mia", auth.RoleManager))
	member := env.Client(env.Token("acme", "mo", auth.RoleMember))
	bob := env.Principal("acme", "bob", auth.RoleMember).UserID
	carol := env.Principal("acme", "carol", auth.RoleViewer).UserID
	stranger := env.Principal("other", "sam", auth.RoleAdmin).UserID

	// Members are kept ascending and without repeats.
	g := createGroup(t, manager, map[string]any{"Slug": "team", "DisplayName": "Team", "UserIDs": []uuid.UUID{carol, bob, carol}})
	want := []uuid.UUID{bob, carol}
	sort.Slice(want, func(i, j int) bool { return want[i].String() < want[j].String() })
	require.Equal(t, want, g.UserIDs)
	require.Equal(t, int64(1), g.Version)
	require.Equal(t, "Group", g.EntityType)

	// Read by ID and by Slug, with the members expanded.
	for _, ref := range []string{g.GroupID.String(), "team"} {
		var ext api.ExtendedGroup
		admin.Get("/api/group/" + ref + "?include=UserIDs,OrganizationID").Expect(http.StatusOK).JSON(&ext)
		require.Equal(t, g.GroupID, ext.Group.GroupID)
		require.NotNil(t, ext.Users)
		require.Len(t, *ext.Users, 2)
		require.NotNil(t, ext.Organization)
	}
	require.Equal(t, []uuid.UUID{g.GroupID}, groupIDsOf(t, admin, bob))

	// Members must be members of the organization: unknown Users and other organizations' are named alike.
	ghost := uuid.New()
	e := admin.Post("/api/group", map[string]any{"Slug": "bad", "UserIDs": []uuid.UUID{bob, ghost, stranger}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var items []string
	for _, it := range e.Error.ErrorMetadata.Items {
		items = append(items, it.Item)
	}
	wantItems := []string{"UserIDs." + ghost.String(), "UserIDs." + stranger.String()}
	sort.Strings(wantItems)
	require.Equal(t, wantItems, items)
	admin.Get("/api/group/bad").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// A member reads Groups but cannot write them: membership changes what members may do.
	member.Get("/api/group/team").Expect(http.StatusOK)
	member.Post("/api/group", map[string]any{"Slug": "mine"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Patch("/api/group/team", map[string]any{"UserIDs": []uuid.UUID{}}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Delete("/api/group/team").ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Slugs are unique in the organization; allow_exists hands back the existing one.
	admin.Post("/api/group", map[string]any{"Slug": "team"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var same api.Group
	admin.Post("/api/group?allow_exists=true", map[string]any{"Slug": "team"}).Expect(http.StatusOK).JSON(&same)
	require.Equal(t, g.GroupID, same.GroupID)

	// PUT needs the stored Version; a merge patch replaces the member list whole.
	ext := admin.Get("/api/group/team").Expect(http.StatusOK).Map()["Group"].(map[string]any)
	ext["Version"] = 7
	admin.Put("/api/group/team", ext).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	ext["Version"] = 1
	ext["DisplayName"] = "The team"
	var put api.Group
	admin.Put("/api/group/team", ext).Expect(http.StatusOK).JSON(&put)
	require.Equal(t, "The team", put.DisplayName)
	require.Equal(t, int64(2), put.Version)
	var patched api.Group
	admin.Patch("/api/group/team", map[string]any{"UserIDs": []uuid.UUID{carol}, "Version": 2}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, []uuid.UUID{carol}, patched.UserIDs)
	require.Empty(t, groupIDsOf(t, admin, bob))
	require.Equal(t, []uuid.UUID{g.GroupID}, groupIDsOf(t, admin, carol))

	// Lists: where over members, and the Users list filters by GroupIDs.
	createGroup(t, admin, map[string]any{"Slug": "ops", "UserIDs": []uuid.UUID{bob}})
	var groups []api.ExtendedGroup
	admin.Get("/api/group?" + url.Values{"where": {"UserIDs ? '" + bob.String() + "'"}}.Encode()).Expect(http.StatusOK).JSON(&groups)
	require.Len(t, groups, 1)
	require.Equal(t, "ops", groups[0].Group.Slug)
	var users []api.ExtendedUser
	admin.Get("/api/user?" + url.Values{"where": {"GroupIDs ? '" + g.GroupID.String() + "'"}}.Encode()).Expect(http.StatusOK).JSON(&users)
	require.Len(t, users, 1)
	require.Equal(t, carol, users[0].User.UserID)

	// A member who leaves the organization leaves its Groups.
	var me api.OrganizationMember
	admin.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	admin.Delete("/api/organization/" + me.OrganizationID.String() + "/organization_member/" + carol.String()).Expect(http.StatusOK)
	var left api.ExtendedGroup
	admin.Get("/api/group/team").Expect(http.StatusOK).JSON(&left)
	require.Empty(t, left.Group.UserIDs)

	// DeleteGates hold a Group; bulk delete reports it per item.
	admin.Patch("/api/group/ops", map[string]any{"DeleteGates": map[string]bool{"keep": true}}).Expect(http.StatusOK)
	var deleted []api.DeleteResponse
	admin.Delete("/api/_group?" + url.Values{"where": {"Slug IN ('team', 'ops')"}}.Encode()).Expect(http.StatusMultiStatus).JSON(&deleted)
	require.Len(t, deleted, 2)
	admin.Get("/api/group/team").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	admin.Delete("/api/group/ops").ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// Bulk patch.
	var patchedAll []api.GroupCreateOrUpdateResponse
	admin.Patch("/api/_group?"+url.Values{"where": {"Slug = 'ops'"}}.Encode(), map[string]any{"Labels": map[string]string{"tier": "1"}}).
		Expect(http.StatusOK).JSON(&patchedAll)
	require.Len(t, patchedAll, 1)
	require.Equal(t, "1", patchedAll[0].Group.Labels["tier"])
}

// TestGroupTenancy: another organization's Groups do not exist for a caller, and Permissions may grant
// only to Groups of the caller's organization.
func TestGroupTenancy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	acme := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	other := env.Client(env.Token("other", "sam", auth.RoleAdmin))
	theirs := createGroup(t, other, map[string]any{"Slug": "theirs"})
	ours := createGroup(t, acme, map[string]any{"Slug": "ours"})

	acme.Get("/api/group/"+theirs.GroupID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	acme.Patch("/api/group/"+theirs.GroupID.String(), map[string]any{"DisplayName": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	acme.Delete("/api/group/"+theirs.GroupID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedGroup
	acme.Get("/api/group").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, ours.GroupID, list[0].Group.GroupID)

	// Grants name Groups of the organization: unknown and foreign ones are named by their path.
	ghost := uuid.New()
	e := acme.Post("/api/space", map[string]any{"Slug": "s", "Permissions": map[string]any{
		"View": map[string]any{"GroupIDs": map[string]bool{ours.GroupID.String(): true, theirs.GroupID.String(): true}},
		"Edit": map[string]any{"GroupIDs": map[string]bool{ghost.String(): true}},
	}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var items []string
	for _, it := range e.Error.ErrorMetadata.Items {
		items = append(items, it.Item)
	}
	require.ElementsMatch(t, []string{"Permissions.View.GroupIDs." + theirs.GroupID.String(), "Permissions.Edit.GroupIDs." + ghost.String()}, items)
	var spaces []api.ExtendedSpace
	acme.Get("/api/space").Expect(http.StatusOK).JSON(&spaces)
	require.Empty(t, spaces, "nothing was written")
}

// TestGuestThroughGroup: a grant to a Group reaches the guests in it, from their next request on; a
// guest sees the Groups it is in and no other.
func TestGuestThroughGroup(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	gus := env.Principal("acme", "gus", auth.RoleGuest).UserID
	guest := env.Client(env.Token("acme", "gus", auth.RoleGuest))
	team := createGroup(t, admin, map[string]any{"Slug": "team", "UserIDs": []uuid.UUID{gus}})
	createGroup(t, admin, map[string]any{"Slug": "others"})

	granted := createSpace(t, admin, map[string]any{"Slug": "granted", "Permissions": map[string]any{
		"View": map[string]any{"GroupIDs": map[string]bool{team.GroupID.String(): true}}}})
	hidden := createSpace(t, admin, map[string]any{"Slug": "hidden"})
	var unitA api.UnitCreateOrUpdateResponse
	for _, sp := range []api.Space{granted, hidden} {
		for _, slug := range []string{"a", "b"} {
			var u api.UnitCreateOrUpdateResponse
			admin.Post("/api/space/"+sp.SpaceID.String()+"/unit", map[string]any{"Slug": slug, "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&u)
			if sp.SpaceID == granted.SpaceID && slug == "a" {
				unitA = u
			}
		}
	}

	units := func() []string {
		var list []api.ExtendedUnit
		guest.Get("/api/unit?order_by=Slug").Expect(http.StatusOK).JSON(&list)
		var out []string
		for _, u := range list {
			out = append(out, u.Unit.SpaceID.String()+"/"+u.Unit.Slug)
		}
		return out
	}
	g := granted.SpaceID.String()
	require.Equal(t, []string{g + "/a", g + "/b"}, units())
	guest.Get("/api/space/"+hidden.SpaceID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	// View does not give Edit.
	guest.Patch("/api/space/"+g+"/unit/"+unitA.Unit.UnitID.String(), map[string]any{"DisplayName": "x"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// The guest sees its own Group only.
	var groups []api.ExtendedGroup
	guest.Get("/api/group").Expect(http.StatusOK).JSON(&groups)
	require.Len(t, groups, 1)
	require.Equal(t, team.GroupID, groups[0].Group.GroupID)
	guest.Get("/api/group/others").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	guest.Patch("/api/group/team", map[string]any{"UserIDs": []uuid.UUID{}}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Out of the Group, out of the Space, with the same token.
	admin.Patch("/api/group/team", map[string]any{"UserIDs": []uuid.UUID{}}).Expect(http.StatusOK)
	require.Empty(t, units())
	guest.Get("/api/space/"+g).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}
