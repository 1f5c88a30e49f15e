package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func TestOrganizationLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))

	var list []api.ExtendedOrganization
	c.Get("/api/organization").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	acme := list[0].Organization
	require.Equal(t, "acme", acme.Slug)
	path := "/api/organization/" + acme.OrganizationID.String()

	var ext api.ExtendedOrganization
	c.Get(path).Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, acme.OrganizationID, ext.Organization.OrganizationID)

	// GET -> edit -> PUT.
	o := ext.Organization
	o.DisplayName = "Acme Inc."
	o.Labels = api.Labels{"plan": "pro"}
	var updated api.Organization
	c.Put(path, o).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "Acme Inc.", updated.DisplayName)
	require.Equal(t, o.Version+1, updated.Version)
	c.Put(path, o).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	o.Version = 0
	c.Put(path, o).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// A new organization: the caller becomes its admin; its slug is unique across the service.
	var created api.Organization
	c.Post("/api/organization", map[string]any{"Slug": "acme-labs", "DisplayName": "Labs"}).Expect(http.StatusOK).JSON(&created)
	require.Equal(t, "acme-labs", created.Slug)
	c.Post("/api/organization", map[string]any{"Slug": "acme-labs"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var same api.Organization
	c.Post("/api/organization?allow_exists=true", map[string]any{"Slug": "acme-labs"}).Expect(http.StatusOK).JSON(&same)
	require.Equal(t, created.OrganizationID, same.OrganizationID)
	var dry api.Organization
	c.Post("/api/organization?dry_run=true", map[string]any{"Slug": "ghost"}).Expect(http.StatusOK).JSON(&dry)
	require.Equal(t, "ghost", dry.Slug)

	// The token names acme, so the new organization is not reachable with it.
	c.Get("/api/organization/"+created.OrganizationID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	// With a token for the new organization it is, and alice is its admin.
	labs := env.Client(env.Token("acme-labs", "alice", ""))
	var me api.OrganizationMember
	labs.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, api.OrgRole("admin"), me.OrgRole)
	require.Equal(t, created.OrganizationID, me.OrganizationID)

	// Delete: refused while it has DeleteGates or Spaces; dry_run stores nothing.
	labsPath := "/api/organization/" + created.OrganizationID.String()
	var cur api.ExtendedOrganization
	labs.Get(labsPath).Expect(http.StatusOK).JSON(&cur)
	cur.Organization.DeleteGates = api.DeleteGates{"protect": true}
	labs.Put(labsPath, cur.Organization).Expect(http.StatusOK)
	labs.Delete(labsPath).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	labs.Get(labsPath).Expect(http.StatusOK).JSON(&cur)
	cur.Organization.DeleteGates = api.DeleteGates{}
	labs.Put(labsPath, cur.Organization).Expect(http.StatusOK)
	sp := createSpace(t, labs, map[string]any{"Slug": "dev"})
	e := labs.Delete(labsPath).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Equal(t, "Organization", e.Error.ErrorMetadata.EntityType)
	labs.Delete("/api/space/" + sp.SpaceID.String()).Expect(http.StatusOK)
	labs.Delete(labsPath + "?dry_run=true").Expect(http.StatusOK)
	labs.Get(labsPath).Expect(http.StatusOK)
	labs.Delete(labsPath).Expect(http.StatusOK)
	// Its tokens stop working: the membership is gone with it.
	labs.Get("/api/me").ExpectError(http.StatusUnauthorized, api.ErrorTypeAuthentication)
}

func TestOrganizationMembers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	var me api.OrganizationMember
	admin.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	orgPath := "/api/organization/" + me.OrganizationID.String()
	members := orgPath + "/organization_member"

	// Add a new User by Username, and an existing one by UserID.
	var bob api.OrganizationMember
	admin.Post(members, map[string]any{"Username": "bob@example.com", "DisplayName": "Bob", "OrgRole": "member"}).Expect(http.StatusOK).JSON(&bob)
	require.Equal(t, "bob@example.com", bob.Username)
	require.Equal(t, "bob-example.com", bob.Slug)
	require.Equal(t, api.OrgRole("member"), bob.OrgRole)
	// Users of other organizations are invisible: by UserID they are unknown, exactly like a random ID; by
	// Username they join like a new Username does, so no answer tells whether a Username existed.
	carolID := env.Principal("other-org", "carol", auth.RoleAdmin).UserID
	unknown := admin.Post(members, map[string]any{"UserID": uuid.NewString(), "OrgRole": "viewer"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	foreign := admin.Post(members, map[string]any{"UserID": carolID.String(), "OrgRole": "viewer"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, unknown.Error.Message, foreign.Error.Message)
	admin.Post(members+"?dry_run=true", map[string]any{"UserID": carolID.String()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var carol, fresh api.OrganizationMember
	admin.Post(members, map[string]any{"Username": "carol", "OrgRole": "viewer"}).Expect(http.StatusOK).JSON(&carol)
	admin.Post(members, map[string]any{"Username": "carol2", "OrgRole": "viewer"}).Expect(http.StatusOK).JSON(&fresh)
	require.Equal(t, carolID, carol.UserID, "the existing User joined")
	require.Equal(t, fresh.OrgRole, carol.OrgRole)
	// Bot Users' Usernames are reserved by their form, whether or not one exists.
	var sa api.ServiceAccount
	env.Client(env.Token("other-org", "carol", auth.RoleAdmin)).Post("/api/service_account", map[string]any{"Slug": "bot"}).Expect(http.StatusOK).JSON(&sa)
	var saUser api.ExtendedUser
	env.Client(env.Token("other-org", "carol", auth.RoleAdmin)).Get("/api/user/" + sa.UserID.String()).Expect(http.StatusOK).JSON(&saUser)
	require.NotEmpty(t, saUser.User.Username)
	existing := admin.Post(members, map[string]any{"Username": saUser.User.Username}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	invented := admin.Post(members, map[string]any{"Username": "sa-" + uuid.NewString()}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, existing.Error.Message, invented.Error.Message)
	// A member may be named by UserID (allow_exists returns the membership).
	var same api.OrganizationMember
	admin.Post(members+"?allow_exists=true", map[string]any{"UserID": carol.UserID.String()}).Expect(http.StatusOK).JSON(&same)
	require.Equal(t, carol.UserID, same.UserID)

	// Role defaults to member; duplicates are 409 unless allow_exists; dry_run adds nobody.
	var dave api.OrganizationMember
	admin.Post(members, map[string]any{"Username": "dave"}).Expect(http.StatusOK).JSON(&dave)
	require.Equal(t, api.OrgRole("member"), dave.OrgRole)
	admin.Post(members, map[string]any{"Username": "dave"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	admin.Post(members+"?allow_exists=true", map[string]any{"Username": "dave"}).Expect(http.StatusOK)
	admin.Post(members+"?dry_run=true", map[string]any{"Username": "erin"}).Expect(http.StatusOK)

	// Bad input.
	admin.Post(members, map[string]any{"OrgRole": "member"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	admin.Post(members, map[string]any{"Username": "x", "OrgRole": "owner"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	admin.Post(members, map[string]any{"UserID": uuid.NewString()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	admin.Post(members, map[string]any{"UserID": carol.UserID.String(), "Username": "bob@example.com"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	admin.Post(members, map[string]any{"Username": "has space"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	var list []api.ExtendedOrganizationMember
	admin.Get(members).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 5) // alice, bob, carol, carol2, dave
	var got api.ExtendedOrganizationMember
	admin.Get(members + "/" + bob.UserID.String()).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "Bob", got.OrganizationMember.DisplayName)

	// Users: the members, and only them.
	var users []api.ExtendedUser
	admin.Get("/api/user").Expect(http.StatusOK).JSON(&users)
	require.Len(t, users, 5)
	var u api.ExtendedUser
	admin.Get("/api/user/" + bob.UserID.String()).Expect(http.StatusOK).JSON(&u)
	require.Equal(t, "bob@example.com", u.User.Username)
	require.Equal(t, []uuid.UUID{}, u.User.GroupIDs)
	admin.Get("/api/user/"+env.Principal("other-org", "zed", auth.RoleAdmin).UserID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Managers manage members but cannot grant or remove admin; members and viewers cannot manage.
	manager := env.Client(env.Token("acme", "mia", auth.RoleManager))
	manager.Post(members, map[string]any{"Username": "frank", "OrgRole": "admin"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	manager.Post(members, map[string]any{"Username": "frank", "OrgRole": "manager"}).Expect(http.StatusOK)
	manager.Delete(members+"/"+me.UserID.String()).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member := env.Client(env.Token("acme", "bob@example.com", ""))
	member.Post(members, map[string]any{"Username": "gina"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Get(members).Expect(http.StatusOK)
	member.Delete(members+"/"+dave.UserID.String()).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// The last admin cannot be removed; a removed member's token stops working at once.
	admin.Delete(members+"/"+me.UserID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	admin.Delete(members + "/" + bob.UserID.String() + "?dry_run=true").Expect(http.StatusOK)
	member.Get("/api/me").Expect(http.StatusOK)
	admin.Delete(members + "/" + bob.UserID.String()).Expect(http.StatusOK)
	member.Get("/api/me").ExpectError(http.StatusUnauthorized, api.ErrorTypeAuthentication)
	admin.Get(members+"/"+bob.UserID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	admin.Delete(members+"/"+bob.UserID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Only admins change the organization.
	var org api.ExtendedOrganization
	manager.Get(orgPath).Expect(http.StatusOK).JSON(&org)
	manager.Put(orgPath, org.Organization).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	manager.Delete(orgPath).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}

// TestTenancyIsolation: nothing of one organization is visible to or changeable by another; another
// organization's IDs are 404, never 403.
func TestTenancyIsolation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Client(env.Token("org-a", "alice", auth.RoleAdmin))
	b := env.Client(env.Token("org-b", "bob", auth.RoleAdmin))
	spA := createSpace(t, a, map[string]any{"Slug": "shared-name"})
	// The same Slug is free in another organization.
	spB := createSpace(t, b, map[string]any{"Slug": "shared-name"})
	require.NotEqual(t, spA.SpaceID, spB.SpaceID)

	var listB []api.ExtendedSpace
	b.Get("/api/space").Expect(http.StatusOK).JSON(&listB)
	require.Len(t, listB, 1)
	require.Equal(t, spB.SpaceID, listB[0].Space.SpaceID)

	pathA := "/api/space/" + spA.SpaceID.String()
	b.Get(pathA).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Put(pathA, map[string]any{"Slug": "x", "Version": 1}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Patch(pathA, map[string]any{"DisplayName": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Delete(pathA).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var stillA api.ExtendedSpace
	a.Get(pathA).Expect(http.StatusOK).JSON(&stillA)
	require.Equal(t, int64(1), stillA.Space.Version)

	var meA, meB api.OrganizationMember
	a.Get("/api/me").Expect(http.StatusOK).JSON(&meA)
	b.Get("/api/me").Expect(http.StatusOK).JSON(&meB)
	orgA := "/api/organization/" + meA.OrganizationID.String()
	b.Get(orgA).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Put(orgA, map[string]any{"Slug": "org-a", "Version": 1}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Delete(orgA).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Get(orgA+"/organization_member").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Get(orgA+"/organization_member/"+meA.UserID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Post(orgA+"/organization_member", map[string]any{"Username": "mallory"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Delete(orgA+"/organization_member/"+meA.UserID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Get("/api/user/"+meA.UserID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var usersB []api.ExtendedUser
	b.Get("/api/user").Expect(http.StatusOK).JSON(&usersB)
	require.Len(t, usersB, 1)
	var orgsB []api.ExtendedOrganization
	b.Get("/api/organization").Expect(http.StatusOK).JSON(&orgsB)
	require.Len(t, orgsB, 1)
	require.Equal(t, "org-b", orgsB[0].Organization.Slug)
	// Creating an organization with another tenant's Slug does not hand that tenant's record back.
	b.Post("/api/organization?allow_exists=true", map[string]any{"Slug": "org-a"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
}

// TestMembershipChangesReachOtherReplicas: a replica remembers memberships between changes, so a change
// made through another replica (a role lowered, a member removed) must reach it: the change's events are
// signalled to every replica, and the next requests there see it.
func TestMembershipChangesReachOtherReplicas(t *testing.T) {
	t.Parallel()
	a := apitest.New(t)
	b := apitest.New(t, apitest.Options{DatabaseURL: a.DBURL})
	admin := a.Client(a.Token("acme", "alice", auth.RoleAdmin))
	bobToken := b.Token("acme", "bob", auth.RoleManager)
	bob := b.Principal("acme", "bob", "")
	members := "/api/organization/" + bob.OrganizationID.String() + "/organization_member"
	statusOnB := func(method, path string, body any) int {
		t.Helper()
		var data []byte
		if body != nil {
			data, _ = json.Marshal(body)
		}
		req, err := http.NewRequest(method, b.URL+path, bytes.NewReader(data))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+bobToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	// Managers add members. Adding one is a change in the organization, signalled on B before its response;
	// the request after it reads (and remembers) bob as a manager again.
	require.Equal(t, http.StatusOK, statusOnB(http.MethodPost, members, map[string]any{"Username": "carol"}))
	require.Equal(t, http.StatusOK, statusOnB(http.MethodGet, "/api/me", nil))
	// The probe changes nothing (carol is a member already), so only the lowering below can reach B.
	require.Equal(t, http.StatusConflict, statusOnB(http.MethodPost, members, map[string]any{"Username": "carol"}))

	// Lowered to member by an operator (`hubd token --role member`, in another process): B stops letting
	// bob manage members.
	_, err := a.App.Orgs.EnsureMembership(context.Background(), "acme", "bob", auth.RoleMember)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return statusOnB(http.MethodPost, members, map[string]any{"Username": "carol"}) == http.StatusForbidden
	}, 10*time.Second, 10*time.Millisecond, "replica B still lets bob act as a manager")

	// Removed through replica A: bob's token stops working on B.
	require.Equal(t, http.StatusOK, statusOnB(http.MethodGet, "/api/me", nil))
	admin.Delete(members + "/" + bob.UserID.String()).Expect(http.StatusOK)
	require.Eventually(t, func() bool { return statusOnB(http.MethodGet, "/api/me", nil) == http.StatusUnauthorized },
		10*time.Second, 10*time.Millisecond, "replica B still accepts a removed member's token")
}
