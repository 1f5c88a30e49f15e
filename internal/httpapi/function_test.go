package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/httpapi"
)

// sampleData is data of each ToolchainType the function tests start from.
var sampleData = map[string]string{
	configdata.KubernetesYAML: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: main # the app
          image: nginx:1.0
        - name: side
          image: envoy:1.0
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
`,
	configdata.AppConfigYAML:       "# settings\nspec:\n  replicas: 1\nname: web\n",
	configdata.AppConfigJSON:       `{"spec": {"replicas": 1}, "name": "web"}`,
	configdata.AppConfigTOML:       "name = 'web'\n[spec]\nreplicas = 1\n",
	configdata.AppConfigINI:        "name = web\n[spec]\nreplicas = 1\n",
	configdata.AppConfigProperties: "name=web\nspec.replicas=1\n",
	configdata.AppConfigEnv:        "NAME=web\nspec.replicas=1\n",
	configdata.AppConfigText:       "hello\n",
}

type functionFixture struct {
	*unitFixture
}

func newFunctionFixture(t *testing.T) functionFixture {
	return functionFixture{newUnitFixture(t)}
}

func (f functionFixture) invokePath(query url.Values) string {
	p := "/api/space/" + f.space.SpaceID.String() + "/function/invoke"
	if len(query) > 0 {
		p += "?" + query.Encode()
	}
	return p
}

func (f functionFixture) unitWithData(t *testing.T, slug, toolchain, data string) api.Unit {
	t.Helper()
	u := f.create(t, slug, toolchain)
	var res api.UnitCreateOrUpdateResponse
	f.put(t, u, "text/plain", data).Expect(http.StatusOK).JSON(&res)
	return *res.Unit
}

func invocation(name string, args ...any) map[string]any {
	list := make([]map[string]any, len(args))
	for i, a := range args {
		list[i] = map[string]any{"Value": a}
	}
	return map[string]any{"FunctionName": name, "Arguments": list}
}

func (f functionFixture) invoke(t *testing.T, query url.Values, status int, invocations ...map[string]any) []api.FunctionInvocationsResponse {
	t.Helper()
	var out []api.FunctionInvocationsResponse
	f.c.Post(f.invokePath(query), map[string]any{"FunctionInvocations": invocations}).Expect(status).JSON(&out)
	return out
}

func (f functionFixture) data(t *testing.T, u api.Unit) string {
	t.Helper()
	return string(f.c.Get(f.path(u) + "/data").Expect(http.StatusOK).Body)
}

func TestFunctionRegistry(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	var all api.FunctionSignatureMap
	f.c.Get("/api/function").Expect(http.StatusOK).JSON(&all)
	for _, toolchain := range configdata.ToolchainTypes {
		fns := all[toolchain]
		for _, name := range []string{"get-value", "get-values", "set-value", "set-values", "list-paths", "is-valid",
			"path-exists", "value-matches", "value-in", "no-placeholders", "resolve-placeholder"} {
			require.Contains(t, fns, name, toolchain)
			require.Equal(t, toolchain, fns[name].ToolchainType)
			require.Equal(t, "Builtin", fns[name].FunctionType)
		}
	}
	k8s := all[configdata.KubernetesYAML]
	for _, name := range []string{"set-image", "get-image", "set-replicas", "set-namespace", "set-label", "set-annotation", "set-env",
		"set-container-resources", "ensure-context", "get-resources"} {
		require.Contains(t, k8s, name)
	}
	setImage := k8s["set-image"]
	require.True(t, setImage.Mutating)
	require.Equal(t, 2, setImage.RequiredParameters)
	require.Equal(t, "container-name", setImage.Parameters[0].ParameterName)
	require.Equal(t, api.FunctionParameterDataTypeString, setImage.Parameters[1].DataType)
	require.NotEmpty(t, setImage.Description)
	require.NotContains(t, all[configdata.AppConfigYAML], "set-image")
	require.Contains(t, all[configdata.AppConfigYAML], "delete-path")
	require.NotContains(t, all[configdata.AppConfigText], "delete-path", "Text has no paths below its top")

	// where selects over the signatures' attributes.
	var mutating api.FunctionSignatureMap
	f.c.Get("/api/function?" + url.Values{"where": {"Mutating = true AND FunctionName LIKE 'set-%'"}}.Encode()).Expect(http.StatusOK).JSON(&mutating)
	require.Contains(t, mutating[configdata.KubernetesYAML], "set-image")
	require.NotContains(t, mutating[configdata.KubernetesYAML], "get-image")
	require.NotContains(t, mutating[configdata.KubernetesYAML], "delete-path")
	for _, bad := range []string{"Bogus = 1", "Mutating = 'yes'", "FunctionName ~ '('"} {
		e := f.c.Get("/api/function?"+url.Values{"where": {bad}}.Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, "where", e.Error.ErrorMetadata.Items[0].Item, bad)
	}

	// The Space's executor is the same; executor_space must name a Space the caller may view.
	var inSpace api.FunctionSignatureMap
	f.c.Get("/api/space/" + f.space.SpaceID.String() + "/function").Expect(http.StatusOK).JSON(&inSpace)
	require.Equal(t, all, inSpace)
	f.c.Get("/api/function?executor_space=" + f.space.Slug).Expect(http.StatusOK)
	f.c.Get("/api/function?executor_space=nope").ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	// A worker's functions: it must exist in the Space.
	f.c.Get(fmt.Sprintf("/api/space/%s/function?entity=worker&id=%s", f.space.SpaceID, f.space.SpaceID)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.c.Get(fmt.Sprintf("/api/space/%s/function?entity=worker", f.space.SpaceID)).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}

// TestEveryFunctionOnEveryFormat invokes every function the registry lists, for every ToolchainType,
// with its parameters' Example values, on sample data: each runs, a mutating one leaves data that parses
// (as a dry run first, then for real), and a reading one answers its output.
func TestEveryFunctionOnEveryFormat(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	var all api.FunctionSignatureMap
	f.c.Get("/api/function").Expect(http.StatusOK).JSON(&all)
	for toolchain, fns := range all {
		for name, sig := range fns {
			slug := strings.ToLower(strings.NewReplacer("/", "-").Replace(toolchain)) + "-" + name
			u := f.unitWithData(t, slug, toolchain, sampleData[toolchain])
			var args []any
			for _, p := range sig.Parameters {
				v := p.Example
				if p.ParameterName == "path" || p.ParameterName == "paths" {
					v = map[bool]string{true: "", false: "spec.replicas"}[toolchain == configdata.AppConfigText]
				}
				args = append(args, v)
			}
			if name == "set-values" {
				args = []any{"spec.replicas", 5}
				if toolchain == configdata.AppConfigText {
					args = []any{"", "text"}
				}
			}
			q := url.Values{"where": {"Slug = '" + slug + "'"}}
			dry := url.Values{"where": q["where"], "dry_run": {"true"}}
			res := f.invoke(t, dry, http.StatusOK, invocation(name, args...))
			require.Len(t, res, 1, slug)
			require.Nil(t, res[0].Error, slug)
			require.NotNil(t, res[0].ConfigData, slug)
			_, err := configdata.Parse(toolchain, []byte(*res[0].ConfigData))
			require.NoError(t, err, "%s: %s", slug, *res[0].ConfigData)
			res = f.invoke(t, q, http.StatusOK, invocation(name, args...))
			require.Nil(t, res[0].Error, slug)
			require.Nil(t, res[0].ConfigData, "ConfigData on dry runs only")
			if sig.Mutating {
				require.Empty(t, res[0].Outputs, slug)
				if res[0].HasNewMutations {
					require.Equal(t, []int{0}, res[0].Mutators, slug)
					require.Equal(t, u.HeadRevisionNum+1, f.unitNow(t, u).HeadRevisionNum, slug)
				}
				continue
			}
			require.False(t, res[0].HasNewMutations, slug)
			require.Contains(t, res[0].Outputs, "0", slug)
			var out any
			require.NoError(t, json.Unmarshal(res[0].Outputs["0"], &out), slug)
			if sig.Validating {
				require.Contains(t, out, "Passed", slug)
			}
		}
	}
}

func (f functionFixture) unitNow(t *testing.T, u api.Unit) api.Unit {
	t.Helper()
	var got api.ExtendedUnit
	f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&got)
	return got.Unit
}

// TestSetImageOverUnits is the daily command: one request sets an image on a selection of Units; each
// changed Unit gets one Revision with a Mutation recording the invocation; the same request again changes
// nothing and records nothing; a Unit of another ToolchainType fails alone.
func TestSetImageOverUnits(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	var units []api.Unit
	for i := 0; i < 3; i++ {
		units = append(units, f.unitWithData(t, fmt.Sprintf("web%d", i), configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML]))
	}
	props := f.unitWithData(t, "props", configdata.AppConfigProperties, sampleData[configdata.AppConfigProperties])

	q := url.Values{"where": {"Slug LIKE 'web%'"}, "subgroup": {"release42"}}
	res := f.invoke(t, q, http.StatusOK, invocation("set-image", "main", "nginx:2.0"))
	require.Len(t, res, 3)
	for _, r := range res {
		require.Nil(t, r.Error)
		require.True(t, r.HasNewMutations)
		require.True(t, r.Success)
		require.Equal(t, f.space.Slug, r.SpaceSlug)
		require.NotEmpty(t, r.Mutations)
		for _, m := range r.Mutations {
			require.Equal(t, "spec.template.spec.containers.0.image", m.Path)
		}
	}
	for _, u := range units {
		data := f.data(t, u)
		require.Contains(t, data, "image: nginx:2.0")
		require.Contains(t, data, "image: envoy:1.0")
		require.Contains(t, data, "# the app", "comments are kept")
		now := f.unitNow(t, u)
		require.Equal(t, int64(2), now.HeadRevisionNum)
		var rev api.ExtendedRevision
		f.c.Get(f.path(u) + "/revision/" + now.HeadRevisionID.String()).Expect(http.StatusOK).JSON(&rev)
		require.Equal(t, "Function", rev.Revision.Source)
		var muts []api.ExtendedMutation
		f.c.Get(f.path(u) + "/mutation?" + url.Values{"where": {"FunctionInvocation.FunctionName = 'set-image'"}}.Encode()).Expect(http.StatusOK).JSON(&muts)
		require.Len(t, muts, 1)
		require.Equal(t, "release42", muts[0].Mutation.Subgroup)
		require.Equal(t, "set-image", muts[0].Mutation.FunctionInvocation.FunctionName)
		require.Equal(t, int64(2), muts[0].Mutation.RevisionNum)
	}

	// The same again: nothing changes, nothing is recorded.
	res = f.invoke(t, q, http.StatusOK, invocation("set-image", "main", "nginx:2.0"))
	for _, r := range res {
		require.False(t, r.HasNewMutations)
		require.Empty(t, r.Mutators)
	}
	require.Equal(t, int64(2), f.unitNow(t, units[0]).HeadRevisionNum)

	// A dry run answers the data and stores nothing.
	res = f.invoke(t, url.Values{"where": {"Slug = 'web0'"}, "dry_run": {"true"}}, http.StatusOK, invocation("set-image", "*", "busybox:1"))
	require.Contains(t, *res[0].ConfigData, "image: busybox:1")
	require.NotContains(t, f.data(t, units[0]), "busybox")

	// Over Units of two types: the Properties Unit has no set-image and fails alone (207).
	res = f.invoke(t, url.Values{"where": {"Slug IN ('web0', 'props')"}}, http.StatusMultiStatus, invocation("set-image", "main", "nginx:3.0"))
	byUnit := map[string]api.FunctionInvocationsResponse{}
	for _, r := range res {
		byUnit[r.UnitSlug] = r
	}
	require.NotNil(t, byUnit["props"].Error)
	require.Equal(t, api.ErrorTypeValidation, byUnit["props"].Error.Type)
	require.Nil(t, byUnit["web0"].Error)
	require.Equal(t, int64(1), f.unitNow(t, props).HeadRevisionNum)

	// With ToolchainType, only Units of that type are selected.
	var typed []api.FunctionInvocationsResponse
	f.c.Post(f.invokePath(url.Values{"where": {"Slug IN ('web1', 'props')"}}), map[string]any{
		"ToolchainType": configdata.KubernetesYAML, "FunctionInvocations": []any{invocation("get-image", "main")}}).Expect(http.StatusOK).JSON(&typed)
	require.Len(t, typed, 1)
	var images []map[string]any
	require.NoError(t, json.Unmarshal(typed[0].Outputs["0"], &images))
	require.Equal(t, "nginx:2.0", images[0]["Value"])
}

// TestInvokeRefusals: bad requests are refused whole, before any Unit changes.
func TestInvokeRefusals(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	u := f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	all := url.Values{"where": {"Slug = 'web'"}}
	post := func(q url.Values, body any) *apitest.Response { return f.c.Post(f.invokePath(q), body) }
	cases := []struct {
		query  url.Values
		body   any
		status int
		typ    api.ErrorType
		item   string
	}{
		{all, map[string]any{"FunctionInvocations": []any{invocation("no-such")}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.FunctionName"},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", "many")}}, 422, api.ErrorTypeUnprocessable, ""},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 1.5)}}, 422, api.ErrorTypeUnprocessable, ""},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-value", "spec.(", 1)}}, 422, api.ErrorTypeUnprocessable, ""},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-image", "main")}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments"},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 1, 2)}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments.1"},
		{all, map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "set-replicas", "Arguments": []any{map[string]any{"ParameterName": "count", "Value": 1}}}}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments.0.ParameterName"},
		{all, map[string]any{"FunctionInvocations": []any{}}, 400, api.ErrorTypeValidation, "FunctionInvocations"},
		{all, map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "set-replicas", "Arguments": []any{map[string]any{"Value": 1}}, "WhereResource": "Kind = "}}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.WhereResource"},
		{all, map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "set-replicas", "Arguments": []any{map[string]any{"Value": 1}}, "Clearance": []any{map[string]any{"Key": "k", "Operator": "In"}}}}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Clearance.0.Values"},
		{url.Values{"where": all["where"], "subgroup": {strings.Repeat("a", 65)}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "subgroup"},
		{url.Values{"where": all["where"], "subgroup": {"a-b"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "subgroup"},
		{url.Values{"where": all["where"], "subgroup": {"HubdInternal"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "subgroup"},
		{url.Values{"where": all["where"], "clearance": {"{"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "clearance"},
		{url.Values{"where": all["where"], "guards": {`{"bad key!": "x"}`}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "guards.Guards.bad key!"},
		{url.Values{"where": all["where"], "change_order": {"co"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "change_order"},
		{url.Values{"where": all["where"], "other_data_source": {"Tomorrow"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "other_data_source"},
		{url.Values{"where": {"Slug = "}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeUserInput, "where"},
	}
	for i, c := range cases {
		resp := post(c.query, c.body)
		e := resp.ExpectError(c.status, c.typ)
		require.NotEmpty(t, e.Error.Message, i)
		if c.item != "" {
			require.Equal(t, c.item, e.Error.ErrorMetadata.Items[0].Item, "case %d: %s", i, e.Error.Message)
		}
	}
	// An edit the data cannot take fails the Unit (all failed in the same way: the shared 422).
	e := post(all, map[string]any{"FunctionInvocations": []any{invocation("set-value", "metadata.name.deeper", "x")}}).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Contains(t, e.Error.Message, "metadata.name is a scalar value")
	// Across the organization a selection is required.
	f.c.Post("/api/function/invoke", map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, int64(1), f.unitNow(t, u).HeadRevisionNum, "nothing changed")

	// The same User's token of another organization: the Space is 404 (for invoking and for its
	// functions), executor_space does not find it, and its Units are never selected across the organization.
	other := f.env.Client(f.env.Token("globex", "alice", auth.RoleAdmin))
	other.Get("/api/space/"+f.space.SpaceID.String()+"/function").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get("/api/function?executor_space="+f.space.SpaceID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	other.Post(f.invokePath(all), map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var none []api.FunctionInvocationsResponse
	other.Post("/api/function/invoke?where="+url.QueryEscape("Slug = 'web'"), map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)
	// A viewer may run reading functions but not mutating ones.
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Post(f.invokePath(all), map[string]any{"FunctionInvocations": []any{invocation("get-image", "*")}}).Expect(http.StatusOK)
	viewer.Post(f.invokePath(all), map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}

// TestGuardsClearanceAndMutationSources: guards stamped by one invocation hold a path against later ones
// without clearance (a Guarded conflict, nothing written); each clearance operator clears or not; a chain
// of invocations in one request makes one Revision whose Mutations are each the source of what they set.
func TestGuardsClearanceAndMutationSources(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	u := f.unitWithData(t, "app", configdata.AppConfigYAML, "spec:\n  replicas: 1\nname: web\n")
	q := func(kv ...string) url.Values {
		v := url.Values{"where": {"Slug = 'app'"}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	// Two invocations, one Revision, two Mutations, each the source of its path.
	res := f.invoke(t, q("guards", `{"owner": "sre"}`, "protect", "true"), http.StatusOK,
		invocation("set-value", "spec.replicas", 3), invocation("set-value", "name", "shop"))
	require.Equal(t, []int{0, 1}, res[0].Mutators)
	now := f.unitNow(t, u)
	require.Equal(t, int64(2), now.HeadRevisionNum)
	var sources api.MutationSourcesResponse
	f.c.Get(f.path(u) + "/mutation_sources").Expect(http.StatusOK).JSON(&sources)
	byPath := map[string]api.MutationSource{}
	for _, s := range sources.Sources {
		byPath[s.Path] = s
	}
	require.Equal(t, int64(2), byPath["spec.replicas"].MutationNum)
	require.Equal(t, int64(3), byPath["name"].MutationNum)
	require.Equal(t, map[string]string{"owner": "sre"}, byPath["spec.replicas"].Guards)
	require.True(t, byPath["name"].Protected)
	var muts []api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation?where=" + url.QueryEscape("RevisionNum = 2")).Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 2)

	// Without clearance the guarded path is withheld: a Guarded conflict, nothing written.
	res = f.invoke(t, q(), http.StatusOK, invocation("set-value", "spec.replicas", 5))
	require.False(t, res[0].HasNewMutations)
	require.Len(t, res[0].Conflicts, 1)
	require.Equal(t, api.Guarded, res[0].Conflicts[0].Reason)
	require.Equal(t, "spec.replicas", res[0].Conflicts[0].Path)
	require.Equal(t, map[string]string{"owner": "sre"}, res[0].Conflicts[0].Guards)
	require.Equal(t, int64(2), f.unitNow(t, u).HeadRevisionNum)

	clears := map[string]bool{
		`[{"Key": "owner", "Operator": "In", "Values": ["sre"]}]`:    true,
		`[{"Key": "owner", "Operator": "In", "Values": ["dev"]}]`:    false,
		`[{"Key": "owner", "Operator": "NotIn", "Values": ["dev"]}]`: true,
		`[{"Key": "owner", "Operator": "NotIn", "Values": ["sre"]}]`: false,
		`[{"Key": "owner", "Operator": "DoesNotExist"}]`:             false,
		`[{"Key": "team", "Operator": "Exists"}]`:                    false,
		`[]`: false,
	}
	replicas := 10
	for clearance, cleared := range clears {
		replicas++
		res = f.invoke(t, q("clearance", clearance), http.StatusOK, invocation("set-value", "spec.replicas", replicas))
		require.Equal(t, cleared, res[0].HasNewMutations, clearance)
		require.Equal(t, !cleared, len(res[0].Conflicts) == 1, clearance)
	}
	// An invocation's own Clearance wins over the parameter; Exists clears any value; an unguarded path
	// in the same invocation is written either way.
	inv := invocation("set-values", "spec.replicas", 99, "extra", "yes")
	inv["Clearance"] = []any{map[string]any{"Key": "owner", "Operator": "Exists"}}
	res = f.invoke(t, q("clearance", `[{"Key": "owner", "Operator": "DoesNotExist"}]`), http.StatusOK, inv)
	require.Empty(t, res[0].Conflicts)
	require.Contains(t, f.data(t, u), "replicas: 99")
	res = f.invoke(t, q(), http.StatusOK, invocation("set-values", "spec.replicas", 100, "extra", "no"))
	require.Len(t, res[0].Conflicts, 1)
	data := f.data(t, u)
	require.Contains(t, data, "replicas: 99")
	require.Contains(t, data, "extra: \"no\"")
	// Guarded paths below a deleted map are withheld too.
	res = f.invoke(t, q(), http.StatusOK, invocation("delete-path", "spec"))
	require.Len(t, res[0].Conflicts, 1)
	require.Contains(t, f.data(t, u), "replicas: 99")
}

// TestInvokeFlood: each organization has a bounded number of invoke requests running per replica; over
// it is 429 TooManyRequests with Retry-After, and every other request completes.
func TestInvokeFlood(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{MaxInvocationsPerOrganization: 1}})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	f := functionFixture{&unitFixture{env: env, c: c, space: createSpace(t, c, map[string]any{"Slug": "dev"})}}
	for i := 0; i < 40; i++ {
		f.unitWithData(t, fmt.Sprintf("u%d", i), configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	}
	const requests = 8
	statuses := make([]*apitest.Response, requests)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := 0; i < requests; i++ {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			start.Wait()
			statuses[i] = c.Post(f.invokePath(url.Values{"dry_run": {"true"}}), map[string]any{"FunctionInvocations": []any{invocation("set-image", "*", fmt.Sprintf("img:%d", i))}})
		}(i)
	}
	start.Done()
	done.Wait()
	counts := map[int]int{}
	for _, r := range statuses {
		counts[r.Status]++
		if r.Status == http.StatusTooManyRequests {
			require.NotEmpty(t, r.Header.Get("Retry-After"))
			r.ExpectError(http.StatusTooManyRequests, api.ErrorTypeTooManyRequests)
		}
	}
	require.Equal(t, requests, counts[http.StatusOK]+counts[http.StatusTooManyRequests], counts)
	require.Positive(t, counts[http.StatusTooManyRequests], counts)
	require.Positive(t, counts[http.StatusOK], counts)
}

// TestUnitGuardAndProtection: guards set directly hold a path against functions; adding a guard key
// needs no clearance, changing or removing one does (409 without it, nothing changed); protection marks
// and unmarks paths; neither makes a Revision; bad paths and resources are 400 naming them.
func TestUnitGuardAndProtection(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	u := f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	deployment := map[string]any{"ResourceType": "apps/v1/Deployment", "ResourceName": "web"}
	guard := func(status int, set, remove map[string]any, clearance ...map[string]any) api.UnitGuardResponse {
		t.Helper()
		edit := map[string]any{"Resource": deployment}
		if set != nil {
			edit["Set"] = set
		}
		if remove != nil {
			edit["Remove"] = remove
		}
		body := map[string]any{"ResourceGuards": []any{edit}}
		if clearance != nil {
			body["Clearance"] = clearance
		}
		var out api.UnitGuardResponse
		resp := f.c.Post(f.path(u)+"/guard", body).Expect(status)
		if status == http.StatusOK {
			resp.JSON(&out)
		}
		return out
	}
	image := "spec.template.spec.containers.0.image"
	res := guard(http.StatusOK, map[string]any{"spec.template.spec.containers.?name=main.image": map[string]string{"owner": "release"}}, nil)
	require.Equal(t, []api.PathAnnotation{{ResourceType: "apps/v1/Deployment", ResourceName: "web", Path: image,
		Guards: map[string]string{"owner": "release"}}}, res.PathAnnotations)
	now := f.unitNow(t, u)
	require.Equal(t, u.HeadRevisionNum, now.HeadRevisionNum, "guards make no Revision")
	require.Greater(t, now.Version, u.Version)

	// The guard holds the image against set-image without clearance.
	out := f.invoke(t, url.Values{"where": {"Slug = 'web'"}}, http.StatusOK, invocation("set-image", "main", "nginx:2.0"))
	require.Len(t, out[0].Conflicts, 1)
	require.Equal(t, image, out[0].Conflicts[0].Path)
	require.Contains(t, f.data(t, u), "nginx:1.0")

	// Changing the value needs clearance of the key as held; adding another key does not.
	guard(http.StatusConflict, map[string]any{image: map[string]string{"owner": "ops"}}, nil)
	guard(http.StatusConflict, map[string]any{image: map[string]string{"owner": "ops"}}, nil,
		map[string]any{"Key": "owner", "Operator": "In", "Values": []string{"ops"}})
	res = guard(http.StatusOK, map[string]any{image: map[string]string{"owner": "ops"}}, nil,
		map[string]any{"Key": "owner", "Operator": "In", "Values": []string{"release"}})
	require.Equal(t, map[string]string{"owner": "ops"}, res.PathAnnotations[0].Guards)
	res = guard(http.StatusOK, map[string]any{"spec": map[string]string{"team": "shop"}}, nil)
	require.Len(t, res.PathAnnotations, 2)
	// Removing a key needs its clearance; the refused request changes nothing (both edits or neither).
	guard(http.StatusConflict, map[string]any{"spec.replicas": map[string]string{"x": "y"}}, map[string]any{image: []string{"owner"}})
	var sources api.MutationSourcesResponse
	f.c.Get(f.path(u) + "/mutation_sources").Expect(http.StatusOK).JSON(&sources)
	for _, s := range sources.Sources {
		if s.Path == "spec.replicas" {
			require.Equal(t, map[string]string{"team": "shop"}, s.Guards, "the refused request stamped nothing")
		}
	}
	res = guard(http.StatusOK, nil, map[string]any{image: []string{"owner"}, "spec": []string{"team"}},
		map[string]any{"Key": "owner", "Operator": "Exists"}, map[string]any{"Key": "team", "Operator": "Exists"})
	require.Empty(t, res.PathAnnotations)
	out = f.invoke(t, url.Values{"where": {"Slug = 'web'"}}, http.StatusOK, invocation("set-image", "main", "nginx:2.0"))
	require.Empty(t, out[0].Conflicts)
	require.True(t, out[0].HasNewMutations)

	// Protection: mark, then unmark; protection of a path above stays.
	protect := func(paths map[string]bool) map[string]bool {
		t.Helper()
		var out api.UnitProtectionResponse
		f.c.Post(f.path(u)+"/protection", map[string]any{"ResourceProtection": []any{map[string]any{"Resource": deployment, "Protected": paths}}}).
			Expect(http.StatusOK).JSON(&out)
		require.Nil(t, out.Error)
		got := map[string]bool{}
		for _, s := range out.MutationSources {
			got[s.Path] = s.Protected
		}
		return got
	}
	got := protect(map[string]bool{"spec.replicas": true})
	require.True(t, got["spec.replicas"])
	require.False(t, got[image])
	got = protect(map[string]bool{"spec": true, "spec.replicas": false})
	require.True(t, got["spec.replicas"], "spec above it is protected")
	require.True(t, got[image])
	got = protect(map[string]bool{"spec": false})
	require.False(t, got["spec.replicas"])

	// Refusals name what is wrong.
	bad := []struct {
		path   string
		body   any
		status int
		item   string
	}{
		{"/guard", map[string]any{"ResourceGuards": []any{map[string]any{"Resource": deployment, "Set": map[string]any{"spec.nothing": map[string]string{"a": "b"}}}}}, 400, "ResourceGuards.0.Set.spec.nothing"},
		{"/guard", map[string]any{"ResourceGuards": []any{map[string]any{"Resource": deployment, "Set": map[string]any{"spec..x": map[string]string{"a": "b"}}}}}, 400, "ResourceGuards.0.Set.spec..x"},
		{"/guard", map[string]any{"ResourceGuards": []any{map[string]any{"Resource": map[string]any{"ResourceType": "v1/Secret", "ResourceName": "web"}, "Set": map[string]any{"spec": map[string]string{"a": "b"}}}}}, 400, "ResourceGuards.0.Set"},
		{"/guard", map[string]any{"ResourceGuards": []any{map[string]any{"Resource": deployment, "Set": map[string]any{"spec": map[string]string{"bad key!": "b"}}}}}, 400, "ResourceGuards.0.Set.spec.Guards.bad key!"},
		{"/guard", map[string]any{"ResourceGuards": []any{}, "Clearance": []any{map[string]any{"Key": "a", "Operator": "In"}}}, 400, "Clearance.0.Values"},
		{"/protection", map[string]any{"ResourceProtection": []any{map[string]any{"Resource": deployment, "Protected": map[string]bool{"nope": true}}}}, 400, "ResourceProtection.0.Protected.nope"},
	}
	for _, b := range bad {
		e := f.c.Post(f.path(u)+b.path, b.body).ExpectError(b.status, api.ErrorTypeValidation)
		require.Equal(t, b.item, e.Error.ErrorMetadata.Items[0].Item, "%v", b.body)
	}
	// An unknown field is reported, not fatal (as everywhere).
	require.NotEmpty(t, f.c.Post(f.path(u)+"/guard", map[string]any{"ResourceGuards": []any{}, "Extra": true}).Expect(http.StatusOK).Warnings())
	// Another organization's caller does not find the Unit.
	other := f.env.Client(f.env.Token("globex", "alice", auth.RoleAdmin))
	other.Post(f.path(u)+"/guard", map[string]any{"ResourceGuards": []any{}}).Expect(http.StatusNotFound)
	other.Post(f.path(u)+"/protection", map[string]any{"ResourceProtection": []any{}}).Expect(http.StatusNotFound)
}
