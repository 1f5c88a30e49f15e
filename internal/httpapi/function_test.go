package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/configdata"
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
