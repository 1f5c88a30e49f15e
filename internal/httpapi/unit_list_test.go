package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/configdata"
)

func TestUnitListsAndWhereData(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	web := f.create(t, "web", configdata.KubernetesYAML)
	f.put(t, web, "application/yaml", deployment).Expect(http.StatusOK)
	api2 := f.create(t, "api", configdata.KubernetesYAML)
	f.put(t, api2, "application/yaml", stringsReplace(stringsReplace(deployment, "nginx:1.25", "golang:1.26"), "replicas: 3", "replicas: 1")).Expect(http.StatusOK)
	cfg := f.create(t, "cfg", configdata.AppConfigJSON)
	f.put(t, cfg, "application/json", `{"server": {"port": 8080, "debug": true, "name": "edge"}}`).Expect(http.StatusOK)
	other := createSpace(t, f.c, map[string]any{"Slug": "prod"})
	var o api.UnitCreateOrUpdateResponse
	f.c.Post("/api/space/"+other.SpaceID.String()+"/unit", map[string]any{"Slug": "web", "ToolchainType": configdata.AppConfigText}).Expect(http.StatusOK).JSON(&o)

	names := func(path string, q url.Values) []string {
		var list []api.ExtendedUnit
		f.c.Get(path + "?" + q.Encode()).Expect(http.StatusOK).JSON(&list)
		out := []string{}
		for _, e := range list {
			out = append(out, e.Unit.Slug)
		}
		sort.Strings(out)
		return out
	}
	wd := func(w string) url.Values { return url.Values{"where_data": {w}} }
	require.Equal(t, []string{"api", "cfg", "web"}, names(f.unitsPath(), nil))
	require.Equal(t, []string{"api", "cfg", "web", "web"}, names("/api/unit", nil))
	for w, want := range map[string][]string{
		`spec.replicas = 3`:       {"web"},
		`spec.replicas > 1`:       {"web"},
		`spec.replicas <= 3`:      {"api", "web"},
		`spec.replicas IN (1, 7)`: {"api"},
		`spec.template.spec.containers.*.image LIKE 'nginx%'`:              {"web"},
		`spec.template.spec.containers.*.image ILIKE 'NGINX%'`:             {"web"},
		`spec.template.spec.containers.*.image ~ '^golang:1\.2'`:           {"api"},
		`spec.template.spec.containers.?name=main.image = 'golang:1.26'`:   {"api"},
		`spec.template.spec.containers.?name=sidecar.image = 'envoy:1.30'`: {"api", "web"},
		`spec.template.spec.containers.0.name = 'main'`:                    {"api", "web"},
		`metadata.name = 'web' AND spec.replicas = 1`:                      {"api"},
		`server.port = 8080`:                                 {"cfg"},
		`server.debug = true`:                                {"cfg"},
		`server.name != 'edge'`:                              {},
		`server.name NOT IN ('a', 'b')`:                      {"cfg"},
		`spec.template.spec.containers.*.image !~~ 'nginx%'`: {"api", "web"},
	} {
		require.Equal(t, want, names(f.unitsPath(), wd(w)), w)
	}
	// resource_type narrows the resources paths apply to.
	require.Equal(t, []string{"api", "web"}, names(f.unitsPath(), url.Values{"resource_type": {"apps/v1/Deployment"}}))
	require.Equal(t, []string{}, names(f.unitsPath(), url.Values{"resource_type": {"v1/Service"}, "where_data": {"spec.replicas = 3"}}))
	require.Equal(t, []string{"api", "web"}, names(f.unitsPath(), url.Values{"resource_type": {"v1/Service"}, "where_data": {"spec.ports.0.port = 80"}}))
	for _, bad := range []string{`spec.replicas`, `spec.replicas IS NULL`, `'x' = spec`, `a ~ '('`, `a ~ '\pL'`} {
		e := f.c.Get(f.unitsPath()+"?"+wd(bad).Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.Equal(t, "where_data", e.Error.ErrorMetadata.Items[0].Item, bad)
	}

	// The well-known where forms of the API.
	require.Equal(t, []string{}, names("/api/unit", where("UpstreamRevisionNum > 0")))
	require.Equal(t, []string{"api", "cfg", "web", "web"}, names("/api/unit", where("LastReleasedRevisionNum = 0")))
	require.Equal(t, []string{}, names("/api/unit", where("HeadRevisionNum > LastReleasedRevisionNum AND TargetID IS NOT NULL")))
	require.Equal(t, []string{"api", "web"}, names("/api/unit", where("ToolchainType = 'Kubernetes/YAML' AND HeadRevisionNum = 1")))

	// Pages, and a continue token that keeps the where_data it was made with.
	resp := f.c.Get(f.unitsPath() + "?limit=1&order_by=Slug&" + wd("spec.replicas >= 1").Encode()).Expect(http.StatusOK)
	next := resp.Header.Get("Service-Continue")
	require.NotEmpty(t, next)
	f.c.Get(f.unitsPath() + "?limit=1&order_by=Slug&" + wd("spec.replicas >= 1").Encode() + "&continue=" + url.QueryEscape(next)).Expect(http.StatusOK)
	f.c.Get(f.unitsPath()+"?limit=1&order_by=Slug&"+wd("spec.replicas >= 3").Encode()+"&continue="+url.QueryEscape(next)).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Revisions across the organization: the latest per Unit by default; Off needs limit.
	var revs []api.ExtendedRevision
	f.put(t, web, "application/yaml", stringsReplace(deployment, "replicas: 3", "replicas: 4")).Expect(http.StatusOK)
	f.c.Get("/api/revision").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 3)
	for _, r := range revs {
		if r.Revision.UnitID == web.UnitID {
			require.Equal(t, int64(2), r.Revision.RevisionNum)
		}
	}
	f.c.Get("/api/revision?distinct_on=Off").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.c.Get("/api/revision?distinct_on=Off&limit=100").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 4)
	f.c.Get("/api/revision?distinct_on=Unit&" + where("RevisionNum = 1").Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 3)
	f.c.Get("/api/revision?distinct_on=Sometimes").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
}

// TestMutationWherePaths: the FunctionInvocation paths the API names compile and run (the Mutations of
// data PUTs have no FunctionInvocation, so they select nothing; one is recorded directly to match).
func TestMutationWherePaths(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "app", configdata.AppConfigEnv)
	f.put(t, u, "text/plain", "A=1\n").Expect(http.StatusOK)
	_, err := f.env.App.Store.Pool.Exec(context.Background(), `UPDATE mutation SET function_invocation =
		'{"FunctionName": "set-replicas", "Guards": {"owner": "team-a"}, "Arguments": [{"ParameterName": "replicas", "Value": "3"}, {"Value": "x"}]}'
		WHERE unit_id = $1`, u.UnitID)
	require.NoError(t, err)
	for w, n := range map[string]int{
		"FunctionInvocation.FunctionName = 'set-replicas'":                 1,
		"FunctionName = 'set-replicas'":                                    1,
		"FunctionInvocation.Guards.owner = 'team-a'":                       1,
		"FunctionInvocation.Guards.other IS NOT NULL":                      0,
		"FunctionInvocation.Arguments.0.Value = '3'":                       1,
		"FunctionInvocation.Arguments.1.Value = '3'":                       0,
		"FunctionInvocation.Arguments.*.Value = 'x'":                       1,
		"FunctionInvocation.Arguments.?ParameterName=replicas.Value = '3'": 1,
		"FunctionInvocation.Arguments.?ParameterName=other.Value = '3'":    0,
	} {
		var muts []api.ExtendedMutation
		f.c.Get(f.path(u) + "/mutation?" + where(w).Encode()).Expect(http.StatusOK).JSON(&muts)
		require.Len(t, muts, n, w)
	}
	var m api.ExtendedMutation
	var muts []api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation").Expect(http.StatusOK).JSON(&muts)
	f.c.Get(f.path(u) + "/mutation/" + muts[0].Mutation.MutationID.String()).Expect(http.StatusOK).JSON(&m)
	require.Equal(t, "set-replicas", m.Mutation.FunctionInvocation.FunctionName)
	// contains matches the FunctionName (held in function_invocation; there is no column of that name).
	for text, n := range map[string]int{"REPLICAS": 1, "nope": 0} {
		f.c.Get(f.path(u) + "/mutation?" + url.Values{"contains": {text}}.Encode()).Expect(http.StatusOK).JSON(&muts)
		require.Len(t, muts, n, text)
	}
	f.c.Get(f.path(u)+"/mutation?"+where("FunctionInvocation.Arguments.Value = 'x'").Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.c.Get(f.path(u)+"/mutation?"+where("FunctionInvocation = 'x'").Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
}
