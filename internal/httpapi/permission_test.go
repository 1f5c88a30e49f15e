package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestSpacePermissions: roles give their permissions everywhere; entity Permissions add to them for the
// users they name; changing Permissions needs Manage.
func TestSpacePermissions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	viewerID := env.Principal("acme", "vic", auth.RoleViewer).UserID
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	member := env.Client(env.Token("acme", "mo", auth.RoleMember))

	sp := createSpace(t, admin, map[string]any{"Slug": "dev"})
	path := "/api/space/" + sp.SpaceID.String()

	// A viewer reads but does not write.
	viewer.Get(path).Expect(http.StatusOK)
	viewer.Get("/api/space").Expect(http.StatusOK)
	e := viewer.Post("/api/space", map[string]any{"Slug": "x"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.NotEmpty(t, e.Error.Message)
	viewer.Patch(path, map[string]any{"DisplayName": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Put(path, map[string]any{"Slug": "dev", "Version": 1}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Delete(path).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// A member writes, but may not change Permissions (Manage), nor create with them.
	member.Patch(path, map[string]any{"DisplayName": "m"}).Expect(http.StatusOK)
	grant := map[string]any{"Edit": map[string]any{"UserIDs": map[string]bool{viewerID.String(): true}}}
	member.Patch(path, map[string]any{"Permissions": grant}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Post("/api/space", map[string]any{"Slug": "y", "Permissions": grant}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// The admin grants Edit on this Space to the viewer, who may then edit it (and only it).
	var granted api.Space
	admin.Patch(path, map[string]any{"Permissions": grant}).Expect(http.StatusOK).JSON(&granted)
	require.True(t, granted.Permissions["Edit"].UserIDs[viewerID.String()])
	require.Equal(t, map[string]bool{}, granted.Permissions["Edit"].GroupIDs)
	viewer.Patch(path, map[string]any{"DisplayName": "by viewer"}).Expect(http.StatusOK)
	other := createSpace(t, admin, map[string]any{"Slug": "prod"})
	viewer.Patch("/api/space/"+other.SpaceID.String(), map[string]any{"DisplayName": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	// Edit is not Delete, and not Manage.
	viewer.Delete(path).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Patch(path, map[string]any{"Permissions": nil}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Invalid grants name the offending path.
	e = admin.Patch(path, map[string]any{"Permissions": map[string]any{"Edit": map[string]any{"UserIDs": map[string]bool{"nope": true}}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Permissions.Edit.UserIDs.nope", e.Error.ErrorMetadata.Items[0].Item)
}
