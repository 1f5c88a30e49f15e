package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestInvisibleSpaceIsUnknownToFilters: a Space a guest may not view is unknown to it everywhere. Naming
// it as a Filter's FromSpaceID is the same 400 as a random ID, and documents never name it: a Filter's
// FromSpace and a View's Filter ("space/slug") show what is stored (IDs) instead.
func TestInvisibleSpaceIsUnknownToFilters(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	gusID := env.Principal("acme", "gus", auth.RoleGuest).UserID
	gus := env.Client(env.Token("acme", "gus", auth.RoleGuest))
	dev := createSpace(t, admin, map[string]any{"Slug": "dev"})
	secret := createSpace(t, admin, map[string]any{"Slug": "secret"})
	devPath, secretPath := "/api/space/"+dev.SpaceID.String(), "/api/space/"+secret.SpaceID.String()
	grant := func(perms ...string) map[string]any {
		g := map[string]any{}
		for _, p := range perms {
			g[p] = map[string]any{"UserIDs": map[string]bool{gusID.String(): true}}
		}
		return g
	}
	var f api.Filter
	admin.Post(devPath+"/filter", map[string]any{"Slug": "web", "From": "Unit", "Permissions": grant("View", "Edit")}).Expect(http.StatusOK).JSON(&f)
	filterPath := devPath + "/filter/" + f.FilterID.String()

	// FromSpaceID: an invisible Space is refused exactly as a random ID is.
	random := gus.Patch(filterPath, map[string]any{"FromSpaceID": uuid.New()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	hidden := gus.Patch(filterPath, map[string]any{"FromSpaceID": secret.SpaceID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, random.Error, hidden.Error)

	// Documents: the Filter's FromSpace, set by the admin, is not the invisible Space's Slug.
	admin.Patch(filterPath, map[string]any{"FromSpaceID": secret.SpaceID}).Expect(http.StatusOK)
	var doc api.EntityDocument
	gus.Get(filterPath + "/document").Expect(http.StatusOK).JSON(&doc)
	fields := map[string]any{}
	require.NoError(t, json.Unmarshal(doc.Document, &fields))
	require.Equal(t, secret.SpaceID.String(), fields["FromSpace"])
	require.NotContains(t, string(doc.Document), `"secret"`)

	// A View's Filter in an invisible Space (the Filter itself granted) is not named "secret/<slug>".
	var sf api.Filter
	admin.Post(secretPath+"/filter", map[string]any{"Slug": "hidden", "From": "Unit", "Permissions": grant("View")}).Expect(http.StatusOK).JSON(&sf)
	var v api.View
	admin.Post(devPath+"/view", map[string]any{"Slug": "images", "Of": "Unit", "FilterID": sf.FilterID, "Permissions": grant("View"),
		"Columns": []map[string]any{metadataColumn("Name", "Slug")}}).Expect(http.StatusOK).JSON(&v)
	gus.Get(devPath + "/view/" + v.ViewID.String() + "/document").Expect(http.StatusOK).JSON(&doc)
	fields = map[string]any{}
	require.NoError(t, json.Unmarshal(doc.Document, &fields))
	require.Equal(t, sf.FilterID.String(), fields["Filter"])
	require.NotContains(t, string(doc.Document), "secret")
}
