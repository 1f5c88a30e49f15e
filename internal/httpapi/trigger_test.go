package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

func (f functionFixture) trigger(t *testing.T, body map[string]any) api.Trigger {
	t.Helper()
	var out api.Trigger
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/trigger", body).Expect(http.StatusOK).JSON(&out)
	return out
}

func arg(v any) map[string]any { return map[string]any{"Value": v} }

// TestTriggersValidateAndGate: a validating Trigger's failure on a new Revision is a finding on the
// Revision and the Unit and an ApplyGate of the Unit until a later Revision passes; Warn makes it a
// warning; disabling or deleting the Trigger takes its findings off; WhereUnit narrows the Units.
func TestTriggersValidateAndGate(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	pinned := f.trigger(t, map[string]any{"Slug": "pinned", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML,
		"FunctionName": "value-matches", "WhereResource": "Kind = 'Deployment'", "WhereUnit": "Labels.tier = 'web'",
		"Arguments": []any{arg("spec.template.spec.containers.*.image"), map[string]any{"ParameterName": "pattern", "Value": `:1\.`}}})
	require.True(t, pinned.Validating)
	require.NotEmpty(t, pinned.Hash)
	style := f.trigger(t, map[string]any{"Slug": "style", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML, "Warn": true,
		"FunctionName": "path-exists", "Arguments": []any{arg("metadata.labels")}})
	var space api.ExtendedSpace
	f.c.Get("/api/space/" + f.space.SpaceID.String()).Expect(http.StatusOK).JSON(&space)
	require.Equal(t, []uuid.UUID{pinned.TriggerID, style.TriggerID}, space.Space.TriggerIDs)

	u := f.create(t, "web", configdata.KubernetesYAML)
	f.c.Patch(f.path(u), map[string]any{"Labels": map[string]string{"tier": "web"}}).Expect(http.StatusOK)
	bad := strings.Replace(sampleData[configdata.KubernetesYAML], "nginx:1.0", "nginx:2.0", 1)
	var res api.UnitCreateOrUpdateResponse
	f.put(t, u, "text/plain", bad).Expect(http.StatusOK).JSON(&res)
	gate, warn := pinned.TriggerID.String(), style.TriggerID.String()
	require.Equal(t, map[string]bool{gate: true}, res.Unit.ApplyGates)
	require.Equal(t, map[string]bool{gate: true}, res.Unit.ValidationErrors)
	require.Equal(t, map[string]bool{warn: true}, res.Unit.ApplyWarnings, "no resource has labels: a warning")
	require.ElementsMatch(t, []uuid.UUID{pinned.TriggerID, style.TriggerID}, res.Unit.ValidationTriggerIDs)
	var rev api.ExtendedRevision
	f.c.Get(f.path(u) + "/revision/" + res.Unit.HeadRevisionID.String()).Expect(http.StatusOK).JSON(&rev)
	require.Equal(t, map[string]bool{gate: true}, rev.Revision.ValidationErrors)
	require.Equal(t, map[string]bool{warn: true}, rev.Revision.ValidationWarnings)
	require.Empty(t, rev.Revision.ValidationPassed)

	// A Revision that passes clears the gate; the failing one keeps its record.
	res = api.UnitCreateOrUpdateResponse{}
	f.put(t, u, "text/plain", sampleData[configdata.KubernetesYAML]).Expect(http.StatusOK).JSON(&res)
	require.Empty(t, res.Unit.ApplyGates)
	rev = api.ExtendedRevision{}
	f.c.Get(f.path(u) + "/revision/" + res.Unit.HeadRevisionID.String()).Expect(http.StatusOK).JSON(&rev)
	require.Equal(t, map[string]bool{gate: true}, rev.Revision.ValidationPassed)
	var revs []api.ExtendedRevision
	f.c.Get(f.path(u) + "/revision?where=" + url.QueryEscape("RevisionNum = 1")).Expect(http.StatusOK).JSON(&revs)
	require.Equal(t, map[string]bool{gate: true}, revs[0].Revision.ValidationErrors)

	// A function invocation is a change like any other; disabling the Trigger takes its gate off.
	f.invoke(t, url.Values{"where": {"Slug = 'web'"}}, http.StatusOK, invocation("set-image", "main", "nginx:3.0"))
	before := f.unitNow(t, u)
	require.Equal(t, map[string]bool{gate: true}, before.ApplyGates)
	path := "/api/space/" + f.space.SpaceID.String() + "/trigger/" + gate
	f.c.Patch(path, map[string]any{"Disabled": true}).Expect(http.StatusOK)
	now := f.unitNow(t, u)
	require.Empty(t, now.ApplyGates)
	require.Equal(t, before.Version+1, now.Version, "the Unit changed: a new Version")
	require.Equal(t, map[string]bool{warn: true}, now.ApplyWarnings)
	f.c.Get("/api/space/" + f.space.SpaceID.String()).Expect(http.StatusOK).JSON(&space)
	require.Equal(t, []uuid.UUID{style.TriggerID}, space.Space.TriggerIDs, "a disabled Trigger is not in force")
	// Deleting the other takes its warning off.
	f.c.Delete("/api/space/" + f.space.SpaceID.String() + "/trigger/" + warn).Expect(http.StatusOK)
	require.Empty(t, f.unitNow(t, u).ApplyWarnings)

	// WhereUnit: a Unit without the label is not validated.
	f.c.Patch(path, map[string]any{"Disabled": false}).Expect(http.StatusOK)
	other := f.unitWithData(t, "other", configdata.KubernetesYAML, bad)
	require.Empty(t, other.ApplyGates)
	require.Empty(t, other.ValidationTriggerIDs)

	// UnitFilterID: the Filter narrows the Units as WhereUnit does.
	var web api.Filter
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/filter", map[string]any{"Slug": "web-tier", "From": "Unit", "Where": "Labels.tier = 'web'"}).
		Expect(http.StatusOK).JSON(&web)
	byFilter := f.trigger(t, map[string]any{"Slug": "by-filter", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML,
		"FunctionName": "path-exists", "Arguments": []any{arg("metadata.name")}, "UnitFilterID": web.FilterID})
	res = api.UnitCreateOrUpdateResponse{}
	f.put(t, u, "text/plain", bad).Expect(http.StatusOK).JSON(&res)
	require.Contains(t, res.Unit.ValidationTriggerIDs, byFilter.TriggerID)
	res = api.UnitCreateOrUpdateResponse{}
	f.put(t, other, "text/plain", sampleData[configdata.KubernetesYAML]).Expect(http.StatusOK).JSON(&res)
	require.Empty(t, res.Unit.ValidationTriggerIDs, "other has no tier label")
}

// TestMutatingTriggers: a mutating Trigger's change is a further Mutation of the same Revision naming it,
// held to the Unit's guards; PostClone Triggers run on a clone's first Revision.
func TestMutatingTriggers(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	stamp := f.trigger(t, map[string]any{"Slug": "managed", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML,
		"FunctionName": "set-label", "Arguments": []any{arg("managed-by"), arg("hubd")}, "Guards": map[string]string{"owner": "platform"},
		"Clearance": []any{map[string]any{"Key": "owner", "Operator": "In", "Values": []string{"platform"}}}})
	require.False(t, stamp.Validating)
	u := f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	require.Equal(t, []uuid.UUID{stamp.TriggerID}, u.ValueTriggerIDs)
	data := f.data(t, u)
	require.Equal(t, 2, strings.Count(data, "managed-by: hubd"), "both resources")
	require.Contains(t, data, "# the app", "comments stay")
	var muts []api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation?where=" + url.QueryEscape("RevisionNum = 1") + "&order_by=MutationNum").Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 2)
	require.Nil(t, muts[0].Mutation.TriggerID)
	require.Equal(t, stamp.TriggerID, *muts[1].Mutation.TriggerID)
	require.Equal(t, "set-label", muts[1].Mutation.FunctionInvocation.FunctionName)
	var sources api.MutationSourcesResponse
	f.c.Get(f.path(u) + "/mutation_sources").Expect(http.StatusOK).JSON(&sources)
	for _, s := range sources.Sources {
		if strings.HasSuffix(s.Path, "managed-by") {
			require.Equal(t, int64(2), s.MutationNum)
			require.Equal(t, map[string]string{"owner": "platform"}, s.Guards)
		}
	}
	// A write that sets another value: the guard (stamped by the Trigger) holds against it (409) unless its
	// clearance clears it; then the Trigger (cleared for its own guard) puts its value back as a Mutation
	// of the new Revision.
	changed := strings.Replace(data, "managed-by: hubd", "managed-by: me", 1)
	f.put(t, u, "text/plain", changed).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	clearance := url.Values{"clearance": {`[{"Key": "owner", "Operator": "In", "Values": ["platform"]}]`}}
	f.c.Do(http.MethodPut, f.path(u)+"/data?"+clearance.Encode(), apitest.Raw{ContentType: "text/plain", Data: []byte(changed)}).Expect(http.StatusOK)
	require.Equal(t, 2, strings.Count(f.data(t, u), "managed-by: hubd"))
	// A function that would change the guarded label without clearance is withheld.
	res := f.invoke(t, url.Values{"where": {"Slug = 'web'"}}, http.StatusOK, invocation("set-label", "managed-by", "other"))
	require.NotEmpty(t, res[0].Conflicts)

	// PostClone: runs on a clone's first Revision only.
	f.trigger(t, map[string]any{"Slug": "clone-mark", "Event": "PostClone", "ToolchainType": configdata.KubernetesYAML,
		"FunctionName": "set-annotation", "Arguments": []any{arg("cloned"), arg("yes")}})
	f.c.Post("/api/unit?"+url.Values{"where": {"Slug = 'web'"}, "name_prefixes": {"copy-"}}.Encode(), map[string]any{}).Expect(http.StatusOK)
	var clones []api.ExtendedUnit
	f.c.Get(f.unitsPath() + "?where=" + url.QueryEscape("Slug = 'copy-web'")).Expect(http.StatusOK).JSON(&clones)
	require.Len(t, clones, 1)
	require.Contains(t, f.data(t, clones[0].Unit), "cloned: \"yes\"")
	require.NotContains(t, f.data(t, u), "cloned:", "the source is not changed")
}

// TestTriggerRefusals: a Trigger is checked when written, so it never fails when it runs.
func TestTriggerRefusals(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	var envFilter api.Filter
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/filter", map[string]any{"Slug": "spaces", "From": "Space"}).Expect(http.StatusOK).JSON(&envFilter)
	var dataFilter api.Filter
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/filter", map[string]any{"Slug": "data", "From": "Unit", "WhereData": "spec.replicas > 1"}).
		Expect(http.StatusOK).JSON(&dataFilter)
	base := map[string]any{"Slug": "t", "Event": "Mutation", "ToolchainType": configdata.AppConfigYAML, "FunctionName": "is-valid"}
	with := func(kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		body   map[string]any
		status int
		typ    api.ErrorType
		item   string
	}{
		{with("Event", "Sometimes"), 400, api.ErrorTypeUserInput, "Event"},
		{with("FunctionName", "nope"), 400, api.ErrorTypeValidation, "FunctionName"},
		{with("FunctionName", "get-value", "Arguments", []any{arg("a")}), 400, api.ErrorTypeValidation, "FunctionName"},
		{with("FunctionName", "set-value"), 400, api.ErrorTypeValidation, "Arguments"},
		{with("FunctionName", "path-exists", "Arguments", []any{arg("a..b")}), 422, api.ErrorTypeUnprocessable, ""},
		{with("WhereUnit", "Slug = "), 400, api.ErrorTypeValidation, "WhereUnit"},
		{with("WhereUnit", "Nope = 'x'"), 400, api.ErrorTypeValidation, "WhereUnit"},
		{with("InvocationID", uuid.New()), 400, api.ErrorTypeValidation, "FunctionName"},
		{with("FunctionName", "", "InvocationID", uuid.New()), 400, api.ErrorTypeValidation, "InvocationID"},
		{with("BridgeWorkerID", uuid.New()), 400, api.ErrorTypeValidation, "BridgeWorkerID"},
		{with("UnitFilterID", envFilter.FilterID), 400, api.ErrorTypeValidation, "UnitFilterID"},
		{with("UnitFilterID", dataFilter.FilterID), 400, api.ErrorTypeValidation, "UnitFilterID"},
		{with("UnitFilterID", uuid.New()), 400, api.ErrorTypeValidation, "UnitFilterID"},
		{with("Guards", map[string]string{"bad key!": "x"}), 400, api.ErrorTypeValidation, "Guards.bad key!"},
	}
	for _, c := range cases {
		e := f.c.Post("/api/space/"+f.space.SpaceID.String()+"/trigger", c.body).ExpectError(c.status, c.typ)
		if c.item != "" {
			require.Equal(t, c.item, e.Error.ErrorMetadata.Items[0].Item, "%v", c.body)
		}
	}
	var list []api.ExtendedTrigger
	f.c.Get("/api/trigger").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list, "nothing was written")

	// Another organization's caller (the same User) sees nothing and reaches nothing.
	tr := f.trigger(t, base)
	other := f.env.Client(f.env.Token("globex", "alice", auth.RoleAdmin))
	other.Get("/api/trigger").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	other.Get("/api/space/" + f.space.SpaceID.String() + "/trigger/" + tr.TriggerID.String()).Expect(http.StatusNotFound)
	other.Patch("/api/space/"+f.space.SpaceID.String()+"/trigger/"+tr.TriggerID.String(), map[string]any{"Disabled": true}).Expect(http.StatusNotFound)
}
