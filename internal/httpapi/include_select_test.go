package httpapi_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/listquery"
)

// TestSelectIncludedFields: select names fields of included entities as Field.field (Space.Slug with
// include=SpaceID), in lists and reads of one entity, objects and lists of them alike; a dotted field
// without its include, of no related entity, or that the related entity lacks is 400.
func TestSelectIncludedFields(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.KubernetesYAML)
	q := func(v url.Values) string { return "?" + v.Encode() }

	var list []map[string]map[string]any
	f.c.Get(f.unitsPath() + q(url.Values{"include": {"SpaceID,OrganizationID"}, "select": {"DisplayName,Space.Slug"}})).
		Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, []string{"Slug"}, slices.Sorted(maps.Keys(list[0]["Space"])), "the included Space keeps only the selected field")
	require.Equal(t, "dev", list[0]["Space"]["Slug"])
	require.Contains(t, list[0]["Unit"], "DisplayName")
	require.NotContains(t, list[0]["Unit"], "Labels")
	require.Contains(t, list[0]["Organization"], "DisplayName", "an include no dotted field names stays whole")

	var one map[string]map[string]any
	f.c.Get(f.path(u) + q(url.Values{"include": {"SpaceID"}, "select": {"Space.Slug,Space.DisplayName"}})).Expect(http.StatusOK).JSON(&one)
	require.Equal(t, []string{"DisplayName", "Slug"}, slices.Sorted(maps.Keys(one["Space"])))

	// A list of included entities (a Group's Users) keeps the selected fields of each.
	bob := f.env.Principal("acme", "bob", auth.RoleMember).UserID
	g := createGroup(t, f.c, map[string]any{"Slug": "team", "UserIDs": []uuid.UUID{bob}})
	var group struct{ Users []map[string]any }
	f.c.Get("/api/group/" + g.GroupID.String() + q(url.Values{"include": {"UserIDs"}, "select": {"Users.Username"}})).Expect(http.StatusOK).JSON(&group)
	require.Len(t, group.Users, 1)
	require.Equal(t, map[string]any{"Username": "bob"}, group.Users[0])

	for sel, fragment := range map[string]string{
		"Space.Slug":               "add SpaceID to include",
		"Nothing.Slug":             "names no related entity of Unit",
		"Space.NotAField":          `"NotAField" is not a field of Space`,
		"Upstream.Slug":            "names no related entity of Unit",
		"HeadRevision.RevisionNum": "add HeadRevisionNum to include",
	} {
		e := f.c.Get(f.unitsPath()+q(url.Values{"select": {sel}})).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.Contains(t, e.Error.Message, fragment, sel)
	}
	e := f.c.Get(f.path(u)+q(url.Values{"include": {"SpaceID"}, "select": {"Space.Nope"}})).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, `"Nope" is not a field of Space`)
}

// TestIncludesAreExpandedOrRefused: an include name is expanded or refused, never accepted and ignored:
// the related families that do not exist yet, and related entities a Unit write does not return, are 400.
func TestIncludesAreExpandedOrRefused(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.KubernetesYAML)
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"
	f.put(t, u, "application/yaml", manifest).Expect(http.StatusOK)

	// The head Mutation is expanded: the one that made the head Revision.
	var ext api.ExtendedUnit
	f.c.Get(f.path(u) + "?include=HeadMutationNum").Expect(http.StatusOK).JSON(&ext)
	require.NotNil(t, ext.HeadMutation)
	require.Equal(t, ext.Unit.HeadMutationNum, ext.HeadMutation.MutationNum)
	require.Equal(t, u.UnitID, ext.HeadMutation.UnitID)
	var page []api.ExtendedUnit
	f.c.Get(f.unitsPath() + "?include=HeadMutationNum").Expect(http.StatusOK).JSON(&page)
	require.Len(t, page, 1)
	require.NotNil(t, page[0].HeadMutation)
	fresh := f.create(t, "fresh", configdata.KubernetesYAML)
	f.c.Get(f.path(fresh) + "?include=HeadMutationNum").Expect(http.StatusOK).JSON(&ext)
	require.Nil(t, ext.HeadMutation, "a Unit without Mutations has none")

	f.c.Get(f.path(u)+"/revision?include=Releases").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.c.Get(f.path(u)+"?include=ChangeSetID").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.c.Get(f.path(u)+"/mutation?include=LinkID").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.c.Get("/api/space/"+f.space.SpaceID.String()+"/target?include=TriggerIDs").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	e := f.c.Do(http.MethodPut, f.path(u)+"/data?include=SpaceID", apitest.Raw{ContentType: "application/yaml", Data: []byte(manifest + "data: {a: b}\n")}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, `"SpaceID" cannot be included`)
	var rev []map[string]any
	f.c.Get(f.path(u) + "/revision").Expect(http.StatusOK).JSON(&rev)
	require.Len(t, rev, 1, "the refused write wrote nothing")

	// What every registry includes expands to an entity type that is listed (so select can check its fields).
	for _, name := range listquery.Names() {
		for _, in := range listquery.Lookup(name).Includes {
			require.NotNil(t, listquery.Lookup(in.EntityType()), "%s include %s expands to %s, which is not a listed entity", name, in.Name, in.EntityType())
		}
	}
}
