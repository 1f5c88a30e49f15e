package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

func (f functionFixture) invocationsPath() string {
	return "/api/space/" + f.space.SpaceID.String() + "/invocation"
}

func (f functionFixture) storedInvocation(t *testing.T, body map[string]any) api.Invocation {
	t.Helper()
	var out api.Invocation
	f.c.Post(f.invocationsPath(), body).Expect(http.StatusOK).JSON(&out)
	return out
}

func named(name string, v any) map[string]any {
	return map[string]any{"ParameterName": name, "Value": v}
}

// rollout is an Invocation setting a Deployment's image and replicas from its Parameters, and giving
// namespaced resources a namespace (the optional ns, else the function's default).
func rollout() map[string]any {
	one, ten := 1, 10
	return map[string]any{"Slug": "rollout", "ToolchainType": configdata.KubernetesYAML, "DisplayName": "Roll out",
		"Parameters": []map[string]any{
			{"ParameterName": "image", "Required": true, "Regexp": "^[a-z]+:[0-9.]+$", "Example": "nginx:1.0"},
			{"ParameterName": "replicas", "DataType": "int", "Required": true, "Min": one, "Max": ten},
			{"ParameterName": "ns"},
		},
		"FunctionInvocations": []map[string]any{
			{"FunctionName": "set-image", "Arguments": []any{arg("main"), arg("{{ .image }}")}},
			{"FunctionName": "set-replicas", "Arguments": []any{arg("{{.replicas}}")}},
			{"FunctionName": "ensure-context", "Arguments": []any{named("namespace", "{{.ns}}")}},
			{"FunctionName": "set-annotation", "Arguments": []any{arg("rolled"), arg("{{.image}} x{{.replicas}}")}},
		}}
}

// TestInvocationsByReference: a stored Invocation runs by ID with values of its Parameters (typed,
// checked), its Mutations record the InvocationID and the values, and a Unit of another ToolchainType
// fails alone.
func TestInvocationsByReference(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	inv := f.storedInvocation(t, rollout())
	require.NotEmpty(t, inv.Hash)
	require.Len(t, inv.FunctionInvocations, 4)
	require.Equal(t, api.FunctionParameterDataType("string"), inv.Parameters[0].DataType, "string when not given")
	var got api.ExtendedInvocation
	f.c.Get(f.invocationsPath() + "/" + inv.InvocationID.String() + "?include=SpaceID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, inv.Hash, got.Invocation.Hash)
	require.Equal(t, f.space.SpaceID, got.Space.SpaceID)
	var listed []api.ExtendedInvocation
	f.c.Get("/api/invocation?where=" + url.QueryEscape("ToolchainType = 'Kubernetes/YAML'")).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)

	web := f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	env := f.unitWithData(t, "env", configdata.AppConfigEnv, sampleData[configdata.AppConfigEnv])
	params := map[string]any{"image": "nginx:2.5", "replicas": 3}
	var res []api.FunctionInvocationsResponse
	f.c.Post(f.invokePath(nil), map[string]any{"ParameterizedInvocations": []any{map[string]any{"InvocationID": inv.InvocationID, "Parameters": params}}}).
		Expect(http.StatusMultiStatus).JSON(&res)
	require.Len(t, res, 2)
	for _, r := range res {
		if r.UnitID == env.UnitID {
			require.NotNil(t, r.Error, "an Env Unit cannot run a Kubernetes Invocation")
			require.Contains(t, r.Error.Message, "ParameterizedInvocations.0 is for Units of Kubernetes/YAML")
			continue
		}
		require.Nil(t, r.Error)
		require.True(t, r.HasNewMutations)
		require.Equal(t, []int{0, 1, 2, 3}, r.Mutators)
	}
	data := f.data(t, web)
	require.Contains(t, data, "image: nginx:2.5")
	require.Contains(t, data, "replicas: 3")
	require.Contains(t, data, "namespace: default", "ns not given: the argument is left out and the function's default applies")
	require.Contains(t, data, "rolled: nginx:2.5 x3")
	var muts []api.ExtendedMutation
	f.c.Get(f.path(web) + "/mutation?where=" + url.QueryEscape("RevisionNum = 2") + "&order_by=MutationNum").Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 4)
	for _, m := range muts {
		require.Equal(t, inv.InvocationID, *m.Mutation.InvocationID)
		require.Equal(t, map[string]any{"image": "nginx:2.5", "replicas": float64(3)}, m.Mutation.InvocationParams)
		require.Nil(t, m.Mutation.TriggerID)
	}
	require.Equal(t, "nginx:2.5", muts[0].Mutation.FunctionInvocation.Arguments[1].Value, "the Mutation records the filled invocation")

	// Mutations can be listed by the Invocation that made them.
	muts = nil
	f.c.Get(f.path(web) + "/mutation?where=" + url.QueryEscape("InvocationID = '"+inv.InvocationID.String()+"'")).Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 4)

	// The request's own invocations run first; indexes count on through the stored ones.
	res = nil
	f.c.Post(f.invokePath(url.Values{"where": {"Slug = 'web'"}}), map[string]any{
		"FunctionInvocations":      []any{invocation("get-image", "main")},
		"ParameterizedInvocations": []any{map[string]any{"InvocationID": inv.InvocationID, "Parameters": map[string]any{"image": "nginx:3.0", "replicas": "4", "ns": "shop"}}},
	}).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, []int{1, 2, 4}, res[0].Mutators, "ensure-context changes nothing: every resource has a namespace")
	require.Contains(t, string(res[0].Outputs["0"]), "nginx:2.5", "get-image ran before the Invocation")

	// Values are checked against the declared Parameters.
	bad := []struct {
		params map[string]any
		status int
		typ    api.ErrorType
		item   string
	}{
		{map[string]any{"replicas": 2}, 400, api.ErrorTypeValidation, "ParameterizedInvocations.0.Parameters"},
		{map[string]any{"image": "nginx", "replicas": 2}, 422, api.ErrorTypeUnprocessable, ""},
		{map[string]any{"image": "nginx:1", "replicas": 11}, 422, api.ErrorTypeUnprocessable, ""},
		{map[string]any{"image": "nginx:1", "replicas": "two"}, 422, api.ErrorTypeUnprocessable, ""},
		{map[string]any{"image": "nginx:1", "replicas": 2, "color": "red"}, 400, api.ErrorTypeValidation, "ParameterizedInvocations.0.Parameters.color"},
	}
	for _, b := range bad {
		e := f.c.Post(f.invokePath(nil), map[string]any{"ParameterizedInvocations": []any{map[string]any{"InvocationID": inv.InvocationID, "Parameters": b.params}}}).
			ExpectError(b.status, b.typ)
		if b.item != "" {
			require.Equal(t, b.item, e.Error.ErrorMetadata.Items[0].Item, "%v", b.params)
		}
	}
	// By ID without values: the required ones are missing.
	e := f.c.Post(f.invokePath(nil), map[string]any{"Invocations": []any{inv.InvocationID}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Invocations.0.Parameters", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, f.data(t, web), "image: nginx:3.0", "nothing ran")

	// An Invocation without Parameters runs by ID alone; ToolchainType of the body must be its own.
	plain := f.storedInvocation(t, map[string]any{"Slug": "label", "ToolchainType": configdata.KubernetesYAML,
		"FunctionInvocations": []any{invocation("set-label", "team", "shop")}})
	res = nil
	f.c.Post(f.invokePath(url.Values{"where": {"Slug = 'web'"}}), map[string]any{"Invocations": []any{plain.InvocationID}}).Expect(http.StatusOK).JSON(&res)
	require.True(t, res[0].HasNewMutations)
	f.c.Post(f.invokePath(nil), map[string]any{"Invocations": []any{plain.InvocationID}, "ToolchainType": configdata.AppConfigEnv}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// Another organization's caller (the same User) cannot see or run it.
	other := f.env.Client(f.env.Token("globex", "alice", auth.RoleAdmin))
	var none []api.ExtendedInvocation
	other.Get("/api/invocation").Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)
	other.Get(f.invocationsPath() + "/" + inv.InvocationID.String()).Expect(http.StatusNotFound)
	e = other.Post("/api/function/invoke?where="+url.QueryEscape("Slug = 'web'"), map[string]any{"Invocations": []any{plain.InvocationID}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Invocations.0", e.Error.ErrorMetadata.Items[0].Item)
}

// TestInvocationRefusals: an Invocation is checked when written.
func TestInvocationRefusals(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	with := func(mutate func(m map[string]any)) map[string]any {
		m := rollout()
		mutate(m)
		return m
	}
	setParam := func(i int, k string, v any) func(map[string]any) {
		return func(m map[string]any) { m["Parameters"].([]map[string]any)[i][k] = v }
	}
	setCalls := func(calls ...map[string]any) func(map[string]any) {
		return func(m map[string]any) { m["FunctionInvocations"] = append([]map[string]any{}, calls...) }
	}
	cases := []struct {
		body   map[string]any
		status int
		typ    api.ErrorType
		item   string
	}{
		{with(setCalls()), 400, api.ErrorTypeUserInput, "FunctionInvocations"},
		{with(setCalls(invocation("nope"))), 400, api.ErrorTypeValidation, "FunctionInvocations.0.FunctionName"},
		{with(setCalls(invocation("set-image", "main", "{{.tag}}"))), 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments.1.Value"},
		{with(setCalls(invocation("ensure-context", "{{.ns}}"))), 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments.0.Value"},
		{with(setCalls(invocation("set-image", "main"))), 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments"},
		{with(setCalls(invocation("set-replicas", "many"))), 422, api.ErrorTypeUnprocessable, ""},
		{with(setParam(0, "ParameterName", "9lives")), 400, api.ErrorTypeValidation, "Parameters.0.ParameterName"},
		{with(setParam(1, "ParameterName", "image")), 400, api.ErrorTypeValidation, "Parameters.1.ParameterName"},
		{with(setParam(0, "DataType", "any")), 400, api.ErrorTypeValidation, "Parameters.0.DataType"},
		{with(setParam(0, "Regexp", "(")), 400, api.ErrorTypeValidation, "Parameters.0.Regexp"},
		{with(setParam(0, "Example", "nginx")), 400, api.ErrorTypeValidation, "Parameters.0.Example"},
		{with(setParam(1, "Min", 11)), 400, api.ErrorTypeValidation, "Parameters.1.Min"},
		{with(setParam(0, "Max", 5)), 400, api.ErrorTypeValidation, "Parameters.0.DataType"},
		{with(func(m map[string]any) { m["BridgeWorkerID"] = uuid.New() }), 400, api.ErrorTypeValidation, "BridgeWorkerID"},
		{with(func(m map[string]any) { m["ToolchainType"] = "Helm" }), 400, api.ErrorTypeUserInput, ""},
	}
	for _, c := range cases {
		e := f.c.Post(f.invocationsPath(), c.body).ExpectError(c.status, c.typ)
		if c.item != "" {
			require.Equal(t, c.item, e.Error.ErrorMetadata.Items[0].Item, "%v", c.body)
		}
	}
	var list []api.ExtendedInvocation
	f.c.Get("/api/invocation").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list, "nothing was written")
}

// TestTriggerRunsInvocation: a Trigger may run a stored Invocation with its Params; the Invocation then
// cannot be deleted nor changed so that the Trigger could not run it.
func TestTriggerRunsInvocation(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	checks := f.storedInvocation(t, map[string]any{"Slug": "checks", "ToolchainType": configdata.KubernetesYAML,
		"Parameters": []any{map[string]any{"ParameterName": "pattern", "Required": true}},
		"FunctionInvocations": []any{
			map[string]any{"FunctionName": "value-matches", "WhereResource": "Kind = 'Deployment'",
				"Arguments": []any{arg("spec.template.spec.containers.*.image"), named("pattern", "{{.pattern}}")}},
			invocation("path-exists", "metadata.name"),
		}})
	stamp := f.storedInvocation(t, map[string]any{"Slug": "stamp", "ToolchainType": configdata.KubernetesYAML,
		"Parameters":          []any{map[string]any{"ParameterName": "team", "Required": true, "Example": "shop"}},
		"FunctionInvocations": []any{invocation("set-label", "team", "{{.team}}"), invocation("set-annotation", "owner", "{{.team}}")}})
	base := map[string]any{"Event": "Mutation", "ToolchainType": configdata.KubernetesYAML}
	trig := func(slug string, inv api.Invocation, params map[string]any) map[string]any {
		if params == nil {
			params = map[string]any{}
		}
		m := map[string]any{"Slug": slug, "InvocationID": inv.InvocationID, "Params": params}
		for k, v := range base {
			m[k] = v
		}
		return m
	}
	gate := f.trigger(t, trig("pinned", checks, map[string]any{"pattern": `:1\.`}))
	require.True(t, gate.Validating)
	require.Empty(t, gate.FunctionName)
	mark := f.trigger(t, trig("mark", stamp, map[string]any{"team": "web"}))
	require.False(t, mark.Validating)
	var ext api.ExtendedTrigger
	f.c.Get("/api/space/" + f.space.SpaceID.String() + "/trigger/" + gate.TriggerID.String() + "?include=InvocationID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, checks.InvocationID, ext.Invocation.InvocationID)

	u := f.unitWithData(t, "web", configdata.KubernetesYAML, strings.Replace(sampleData[configdata.KubernetesYAML], "nginx:1.0", "nginx:2.0", 1))
	require.Equal(t, map[string]bool{gate.TriggerID.String(): true}, u.ApplyGates, "every function of the Invocation must pass")
	data := f.data(t, u)
	require.Contains(t, data, "team: web")
	require.Contains(t, data, "owner: web")
	var muts []api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation?where=" + url.QueryEscape("RevisionNum = 1") + "&order_by=MutationNum&include=TriggerID,InvocationID").
		Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 3, "the write, then one Mutation per function of the Trigger's Invocation")
	require.Nil(t, muts[0].Trigger)
	for _, m := range muts[1:] {
		require.Equal(t, "mark", m.Trigger.Slug)
		require.Equal(t, "stamp", m.Invocation.Slug)
		require.Equal(t, mark.TriggerID, *m.Mutation.TriggerID)
		require.Equal(t, stamp.InvocationID, *m.Mutation.InvocationID)
		require.Equal(t, map[string]any{"team": "web"}, m.Mutation.InvocationParams)
	}
	// A write that passes every check clears the gate.
	var res api.UnitCreateOrUpdateResponse
	f.put(t, u, "text/plain", sampleData[configdata.KubernetesYAML]).Expect(http.StatusOK).JSON(&res)
	require.Empty(t, res.Unit.ApplyGates)

	// Invoking the Trigger by ID runs its Invocation on the selected Units.
	var inv []api.FunctionInvocationsResponse
	f.c.Post(f.invokePath(url.Values{"where": {"Slug = 'web'"}}), map[string]any{"Triggers": []any{gate.TriggerID}}).Expect(http.StatusOK).JSON(&inv)
	require.True(t, inv[0].Success)
	require.Len(t, inv[0].Outputs, 2)

	// The Invocation is held to what its Triggers need.
	path := f.invocationsPath() + "/" + checks.InvocationID.String()
	f.c.Delete(path).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	e := f.c.Patch(path, map[string]any{"FunctionInvocations": []any{invocation("set-label", "a", "b")}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "Trigger pinned")
	f.c.Patch(path, map[string]any{"Parameters": []any{map[string]any{"ParameterName": "pattern", "Required": true},
		map[string]any{"ParameterName": "extra", "Required": true}}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.c.Patch(path, map[string]any{"DisplayName": "Checks"}).Expect(http.StatusOK)

	// A Trigger is checked against its Invocation when written.
	refusals := []struct {
		body map[string]any
		item string
	}{
		{trig("p2", checks, nil), "InvocationID"},                                       // required pattern missing
		{trig("p3", checks, map[string]any{"pattern": "x", "nope": 1}), "InvocationID"}, // undeclared
		{func() map[string]any { m := trig("p4", checks, nil); m["FunctionName"] = "is-valid"; return m }(), "FunctionName"},
		{func() map[string]any {
			m := trig("p5", stamp, nil)
			m["ToolchainType"] = configdata.AppConfigYAML
			return m
		}(), "InvocationID"},
	}
	for _, r := range refusals {
		e := f.c.Post("/api/space/"+f.space.SpaceID.String()+"/trigger", r.body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, r.item, e.Error.ErrorMetadata.Items[0].Item, "%v", r.body)
	}
	mixed := f.storedInvocation(t, map[string]any{"Slug": "mixed", "ToolchainType": configdata.KubernetesYAML,
		"FunctionInvocations": []any{invocation("set-label", "a", "b"), invocation("path-exists", "metadata")}})
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/trigger", trig("p6", mixed, nil)).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// Once no Trigger runs it, it can go.
	f.c.Delete("/api/space/" + f.space.SpaceID.String() + "/trigger/" + gate.TriggerID.String()).Expect(http.StatusOK)
	f.c.Delete(path).Expect(http.StatusOK)
}
