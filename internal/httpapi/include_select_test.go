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

	// A dotted field of a related entity the request does not include is a mistake of the request: 400.
	for sel, fragment := range map[string]string{
		"Space.Slug":               "add SpaceID to include",
		"HeadRevision.RevisionNum": "add HeadRevisionNum to include",
	} {
		e := f.c.Get(f.unitsPath()+q(url.Values{"select": {sel}})).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.Contains(t, e.Error.Message, fragment, sel)
	}
}

// TestSelectUnknownNamesWarn: names select does not know (no field of the entity, no related entity, no
// field of the related entity) are ignored and named in a Warning each, as unknown body fields are, so
// clients of another version of the API keep working; what is known still applies, and Data stays 400.
func TestSelectUnknownNamesWarn(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.KubernetesYAML)
	q := func(v url.Values) string { return "?" + v.Encode() }

	resp := f.c.Get(f.unitsPath() + q(url.Values{"include": {"SpaceID"}, "select": {"DisplayName,NotAField,Nothing.Slug,Space.Nope,Space.Slug"}})).Expect(http.StatusOK)
	require.Equal(t, []string{`299 hubd "Unknown select field: NotAField"`, `299 hubd "Unknown select field: Nothing.Slug"`,
		`299 hubd "Unknown select field: Space.Nope"`}, resp.Warnings())
	var list []map[string]map[string]any
	resp.JSON(&list)
	require.Len(t, list, 1)
	require.Contains(t, list[0]["Unit"], "DisplayName", "the known names still select")
	require.NotContains(t, list[0]["Unit"], "Labels")
	require.Equal(t, map[string]any{"Slug": "dev"}, list[0]["Space"])

	// Only unknown names: as if select were not sent, every field comes back.
	resp = f.c.Get(f.path(u) + q(url.Values{"select": {"Bogus"}})).Expect(http.StatusOK)
	require.Equal(t, []string{`299 hubd "Unknown select field: Bogus"`}, resp.Warnings())
	var one map[string]map[string]any
	resp.JSON(&one)
	require.Equal(t, u.UnitID.String(), one["Unit"]["UnitID"])
	require.Contains(t, one["Unit"], "DisplayName")

	// Continued pages carry the same select: the token still matches.
	f.create(t, "api", configdata.KubernetesYAML)
	resp = f.c.Get(f.unitsPath() + q(url.Values{"select": {"Bogus"}, "limit": {"1"}})).Expect(http.StatusOK)
	next := resp.Header.Get("Service-Continue")
	require.NotEmpty(t, next)
	f.c.Get(f.unitsPath() + q(url.Values{"select": {"Bogus"}, "limit": {"1"}, "continue": {next}})).Expect(http.StatusOK)

	e := f.c.Get(f.unitsPath()+q(url.Values{"select": {"Data,Bogus"}})).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "Data is not a field")
}

// TestIncludesAreExpandedOrRefused: an include name is expanded, or refused when the entity has no such
// relation (and related entities a Unit write does not return are 400); a relation to a family that is
// not served yet is accepted, and its field is null, or [] for a list.
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

	// What the reference CLI sends on every Unit read.
	var raw map[string]any
	f.c.Get(f.path(u) + "?include=UnitEventID,TargetID,UpstreamUnitID,SpaceID").Expect(http.StatusOK).JSON(&raw)
	require.Nil(t, raw["LatestUnitEvent"])
	require.NotNil(t, raw["Space"])
	f.c.Get(f.path(u) + "?include=ChangeSetID,FromLinkID,LastReleasedRevisionNum").Expect(http.StatusOK).JSON(&raw)
	require.Nil(t, raw["ChangeSet"])
	require.Nil(t, raw["LastReleasedRevision"], "a Unit never released has no released Revision")
	require.Equal(t, []any{}, raw["FromLink"])
	f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&raw)
	require.Nil(t, raw["FromLink"], "a list not included is null")

	var revs []map[string]any
	f.c.Get(f.path(u) + "/revision?include=Releases,Attestations,ChangeOrders,ChangeSetID").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 1)
	for _, field := range []string{"Releases", "Attestations", "ChangeOrders"} {
		require.Equal(t, []any{}, revs[0][field], field)
	}
	require.Nil(t, revs[0]["ChangeSet"])

	var muts []api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation?include=LinkID,MergeSourceID,UnitID").Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 1)
	require.Nil(t, muts[0].Link)
	require.Nil(t, muts[0].MergeSource, "a data write merged from nothing")
	require.NotNil(t, muts[0].Unit)

	_, target := workerAndTarget(t, f.c, f.space)
	var targets []api.ExtendedTarget
	f.c.Get("/api/space/" + f.space.SpaceID.String() + "/target?include=TriggerIDs,TriggerFilterID").Expect(http.StatusOK).JSON(&targets)
	require.Len(t, targets, 1)
	require.Equal(t, target.TargetID, targets[0].Target.TargetID)
	require.NotNil(t, targets[0].Triggers)
	require.Empty(t, *targets[0].Triggers)
	require.Nil(t, targets[0].TriggerFilter)

	// A name that is no relation of the entity is refused, naming the ones it has.
	e := f.c.Get(f.path(u)+"?include=Bogus").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "UnitEventID")
	e = f.c.Do(http.MethodPut, f.path(u)+"/data?include=SpaceID", apitest.Raw{ContentType: "application/yaml", Data: []byte(manifest + "data: {a: b}\n")}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, `"SpaceID" cannot be included`)
	var rev []map[string]any
	f.c.Get(f.path(u) + "/revision").Expect(http.StatusOK).JSON(&rev)
	require.Len(t, rev, 1, "the refused write wrote nothing")

	// What every registry includes expands to an entity type that is listed (so select can check its
	// fields), unless its family is not served yet.
	for _, name := range listquery.Names() {
		for _, in := range listquery.Lookup(name).Includes {
			if !in.Unserved {
				require.NotNil(t, listquery.Lookup(in.EntityType()), "%s include %s expands to %s, which is not a listed entity", name, in.Name, in.EntityType())
			}
		}
	}
}
