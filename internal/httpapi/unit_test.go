package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: main
          image: nginx:1.25
        - name: sidecar
          image: envoy:1.30
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
    - port: 80
`

type unitFixture struct {
	env   *apitest.Env
	c     *apitest.Client
	space api.Space
}

func newUnitFixture(t *testing.T) *unitFixture {
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	return &unitFixture{env: env, c: c, space: createSpace(t, c, map[string]any{"Slug": "dev"})}
}

func (f *unitFixture) unitsPath() string { return "/api/space/" + f.space.SpaceID.String() + "/unit" }

func (f *unitFixture) create(t *testing.T, slug, toolchain string) api.Unit {
	t.Helper()
	var res api.UnitCreateOrUpdateResponse
	f.c.Post(f.unitsPath(), map[string]any{"Slug": slug, "ToolchainType": toolchain}).Expect(http.StatusOK).JSON(&res)
	require.Nil(t, res.Error)
	return *res.Unit
}

func (f *unitFixture) path(u api.Unit) string { return f.unitsPath() + "/" + u.UnitID.String() }

func (f *unitFixture) put(t *testing.T, u api.Unit, contentType, data string, opts ...apitest.RequestOption) *apitest.Response {
	t.Helper()
	return f.c.Do(http.MethodPut, f.path(u)+"/data", apitest.Raw{ContentType: contentType, Data: []byte(data)}, opts...)
}

func TestUnitDataAndRevisions(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.KubernetesYAML)
	require.Equal(t, int64(0), u.HeadRevisionNum)
	require.Equal(t, configdata.Hash(nil), u.DataHash)
	require.Nil(t, u.HeadRevisionID)

	// The first data PUT makes Revision 1; its ETag is the DataHash.
	resp := f.put(t, u, "application/yaml", deployment).Expect(http.StatusOK)
	var res api.UnitCreateOrUpdateResponse
	resp.JSON(&res)
	hash := configdata.Hash([]byte(deployment))
	require.Equal(t, hash, res.Unit.DataHash)
	require.Equal(t, int64(len(deployment)), res.Unit.DataSize)
	require.Equal(t, int64(1), res.Unit.HeadRevisionNum)
	require.Equal(t, `"`+hash+`"`, resp.Header.Get("ETag"))
	require.Nil(t, res.ConfigData, "ConfigData only when included")

	// GET answers the data as written, typed by ToolchainType, with its ETag; If-None-Match gives 304.
	resp = f.c.Get(f.path(u) + "/data").Expect(http.StatusOK)
	require.Equal(t, deployment, string(resp.Body))
	require.Equal(t, "application/yaml", resp.Header.Get("Content-Type"))
	require.Equal(t, `"`+hash+`"`, resp.Header.Get("ETag"))
	for _, inm := range []string{`"` + hash + `"`, hash, `"other", "` + hash + `"`, "*", `W/"` + hash + `"`} {
		r := f.c.Get(f.path(u)+"/data", apitest.WithHeader("If-None-Match", inm)).Expect(http.StatusNotModified)
		require.Empty(t, r.Body)
		require.Equal(t, `"`+hash+`"`, r.Header.Get("ETag"))
	}
	f.c.Get(f.path(u)+"/data", apitest.WithHeader("If-None-Match", `"stale"`)).Expect(http.StatusOK)

	// A stale If-Match is 409 Conflict and stores nothing; the current one writes.
	changed := stringsReplace(deployment, "replicas: 3", "replicas: 5")
	f.put(t, u, "text/plain", changed, apitest.WithHeader("If-Match", `"0000"`)).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	resp = f.put(t, u, "text/plain", changed, apitest.WithHeader("If-Match", `"`+hash+`"`)).Expect(http.StatusOK)
	resp.JSON(&res)
	require.Equal(t, int64(2), res.Unit.HeadRevisionNum)

	// The same data again makes no Revision.
	f.put(t, u, "application/octet-stream", changed).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, int64(2), res.Unit.HeadRevisionNum)

	// Revisions: listed in order, each with its data and hash.
	var revs []api.ExtendedRevision
	f.c.Get(f.path(u) + "/revision").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 2)
	require.Equal(t, []int64{1, 2}, []int64{revs[0].Revision.RevisionNum, revs[1].Revision.RevisionNum})
	require.Equal(t, "DataPut", revs[0].Revision.Source)
	require.Equal(t, hash, revs[0].Revision.DataHash)
	revPath := f.path(u) + "/revision/" + revs[0].Revision.RevisionID.String()
	var rev api.ExtendedRevision
	f.c.Get(revPath + "?include=UnitID,UserID").Expect(http.StatusOK).JSON(&rev)
	require.Equal(t, "web", rev.Unit.Slug)
	require.Equal(t, "alice", rev.User.Username)
	resp = f.c.Get(revPath + "/data").Expect(http.StatusOK)
	require.Equal(t, deployment, string(resp.Body))
	f.c.Get(revPath+"/data", apitest.WithHeader("If-None-Match", hash)).Expect(http.StatusNotModified)
	f.c.Get(f.path(u)+"/revision/"+uuid.NewString()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Mutations: one per Revision here.
	var muts []api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation").Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 2)
	var mut api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation/" + muts[1].Mutation.MutationID.String()).Expect(http.StatusOK).JSON(&mut)
	require.Equal(t, int64(2), mut.Mutation.RevisionNum)
	require.Nil(t, mut.Mutation.FunctionInvocation)
	require.Nil(t, mut.Revision, "nothing is expanded unless included")
	f.c.Get(f.path(u) + "/mutation?include=RevisionID,UnitID,SpaceID,OrganizationID").Expect(http.StatusOK).JSON(&muts)
	require.Equal(t, muts[1].Mutation.RevisionID, muts[1].Revision.RevisionID)
	require.Equal(t, u.UnitID, muts[1].Unit.UnitID)
	require.Equal(t, u.SpaceID, muts[1].Space.SpaceID)
	require.Equal(t, u.OrganizationID, muts[1].Organization.OrganizationID)
	f.c.Get(f.path(u) + "/mutation/" + muts[0].Mutation.MutationID.String() + "?include=RevisionID").Expect(http.StatusOK).JSON(&mut)
	require.Equal(t, int64(1), mut.Revision.RevisionNum)
	f.c.Get(f.path(u)+"/mutation/"+uuid.NewString()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Mutation sources: the changed path was set by Mutation 2, the rest by Mutation 1.
	var src api.MutationSourcesResponse
	f.c.Get(f.path(u) + "/mutation_sources").Expect(http.StatusOK).JSON(&src)
	byPath := map[string]int64{}
	for _, s := range src.Sources {
		byPath[s.ResourceType+"/"+s.ResourceName+":"+s.Path] = s.MutationNum
	}
	require.Equal(t, int64(2), byPath["apps/v1/Deployment/prod/web:spec.replicas"])
	require.Equal(t, int64(1), byPath["apps/v1/Deployment/prod/web:spec.template.spec.containers.0.image"])
	require.Equal(t, int64(1), byPath["v1/Service/web:spec.ports.0.port"])
	f.c.Get(revPath + "/mutation_sources").Expect(http.StatusOK).JSON(&src)
	for _, s := range src.Sources {
		require.Equal(t, int64(1), s.MutationNum)
	}

	// Restore Revision 1: a new Revision 3 with Revision 1's data; its Mutation records the restore.
	var restored api.UnitCreateOrUpdateResponse
	f.c.Patch(f.path(u)+"?restore=1&include=ConfigData", map[string]any{}).Expect(http.StatusOK).JSON(&restored)
	require.Equal(t, int64(3), restored.Unit.HeadRevisionNum)
	require.Equal(t, hash, restored.Unit.DataHash)
	require.Equal(t, deployment, *restored.ConfigData)
	f.c.Get(f.path(u) + "/mutation?" + where("RestoredRevisionNum = 1").Encode()).Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 1)
	require.Equal(t, int64(3), muts[0].Mutation.RevisionNum)
	f.c.Patch(f.path(u)+"?restore=9", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.c.Get(f.path(u) + "/revision?" + where("Source = 'Restore'").Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 1)

	// include on writes: ConfigData and MutationSources, on dry runs too; other names are refused.
	var dry api.UnitCreateOrUpdateResponse
	f.put(t, u, "text/plain", changed, withQuery("dry_run=true&include=ConfigData,MutationSources")).Expect(http.StatusOK).JSON(&dry)
	require.Equal(t, changed, *dry.ConfigData)
	require.NotEmpty(t, dry.MutationSources.Sources)
	require.Equal(t, int64(4), dry.Unit.HeadRevisionNum)
	var now api.ExtendedUnit
	f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&now)
	require.Equal(t, int64(3), now.Unit.HeadRevisionNum, "a dry run stores nothing")
	f.put(t, u, "text/plain", changed, withQuery("include=Bogus")).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
}

func withQuery(q string) apitest.RequestOption {
	return func(r *http.Request) {
		if r.URL.RawQuery != "" {
			r.URL.RawQuery += "&"
		}
		r.URL.RawQuery += q
	}
}

func stringsReplace(s, old, new string) string {
	out := []rune{}
	i := 0
	for i < len(s) {
		if len(s)-i >= len(old) && s[i:i+len(old)] == old {
			out = append(out, []rune(new)...)
			i += len(old)
			continue
		}
		out = append(out, rune(s[i]))
		i++
	}
	return string(out)
}

func TestUnitDataFormats(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	cases := []struct {
		toolchain, good, bad, badLine string
		contentType                   string
	}{
		{configdata.KubernetesYAML, deployment, "apiVersion: v1\nkind: X\nmetadata:\n  name: a\n---\nkind: Y\n", "line 6", "application/yaml"},
		{configdata.AppConfigYAML, "a:\n  b: 1\n", "a: 1\nb: c: d\n", "line 2", "application/yaml"},
		{configdata.AppConfigJSON, `{"a": {"b": 1}}`, "{\n  \"a\": 1,\n  \"b\": }\n", "line 3", "application/json"},
		{configdata.AppConfigTOML, "[server]\nport = 8080\n", "a = 1\nb = = 2\n", "line 2", "text/plain"},
		{configdata.AppConfigINI, "[db]\nhost = h\n", "[ok]\na = 1\n[broken\n", "line 3", "application/octet-stream"},
		{configdata.AppConfigProperties, "server.port=8080\n", "a=1\nb=\\u12\n", "line 2", "application/x-www-form-urlencoded"},
		{configdata.AppConfigEnv, "A=1\nB=two\n", "A=1\nB='open\n", "line 2", "text/plain"},
		{configdata.AppConfigText, "free text\n", "ok\n\xff\n", "line 2", "text/plain"},
	}
	for i, tc := range cases {
		u := f.create(t, fmt.Sprintf("u%d", i), tc.toolchain)
		e := f.put(t, u, tc.contentType, tc.bad).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
		require.Equal(t, tc.badLine, e.Error.ErrorMetadata.Items[0].Item, tc.toolchain)
		require.Contains(t, e.Error.Message, tc.toolchain)
		var cur api.ExtendedUnit
		f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&cur)
		require.Equal(t, int64(0), cur.Unit.HeadRevisionNum, "%s: nothing stored", tc.toolchain)

		f.put(t, u, tc.contentType, tc.good).Expect(http.StatusOK)
		resp := f.c.Get(f.path(u) + "/data").Expect(http.StatusOK)
		require.Equal(t, tc.good, string(resp.Body), tc.toolchain)
		require.Equal(t, configdata.MediaType(tc.toolchain), resp.Header.Get("Content-Type"))
	}
}

func TestUnitLifecycle(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	// Validation of the create.
	c.Post(f.unitsPath(), map[string]any{"Slug": "x"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// ToolchainType is a closed set of the document: another value is a schema violation.
	e := c.Post(f.unitsPath(), map[string]any{"Slug": "x", "ToolchainType": "Helm/Chart"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "ToolchainType", e.Error.ErrorMetadata.Items[0].Item)
	e = c.Post(f.unitsPath(), map[string]any{"Slug": "x", "ToolchainType": configdata.AppConfigEnv, "TargetID": uuid.NewString()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "TargetID", e.Error.ErrorMetadata.Items[0].Item)
	c.Post("/api/space/"+uuid.NewString()+"/unit", map[string]any{"Slug": "x", "ToolchainType": configdata.AppConfigEnv}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	var dry api.UnitCreateOrUpdateResponse
	c.Post(f.unitsPath()+"?dry_run=true", map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&dry)
	u := f.create(t, "app", configdata.AppConfigEnv)
	require.NotEqual(t, dry.Unit.UnitID, u.UnitID)
	c.Post(f.unitsPath(), map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigEnv}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var again api.UnitCreateOrUpdateResponse
	c.Post(f.unitsPath()+"?allow_exists=true", map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&again)
	require.Equal(t, u.UnitID, again.Unit.UnitID)

	// GET -> edit -> PUT, with read-only fields sent back.
	var ext api.ExtendedUnit
	c.Get(f.path(u) + "?include=SpaceID,OrganizationID,HeadRevisionNum").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "dev", ext.Space.Slug)
	require.Equal(t, "acme", ext.Organization.Slug)
	require.Nil(t, ext.HeadRevision)
	edited := ext.Unit
	edited.DisplayName = "App"
	edited.Labels = api.Labels{"tier": "prod"}
	var res api.UnitCreateOrUpdateResponse
	resp := c.Put(f.path(u), edited).Expect(http.StatusOK)
	require.Empty(t, resp.Warnings())
	resp.JSON(&res)
	require.Equal(t, "App", res.Unit.DisplayName)
	c.Put(f.path(u), edited).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	edited.Version = 0
	c.Put(f.path(u), edited).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Patch(f.path(u), map[string]any{"ToolchainType": configdata.AppConfigJSON}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var patched api.UnitCreateOrUpdateResponse
	c.Patch(f.path(u), map[string]any{"Labels": map[string]any{"tier": nil}, "LastChangeDescription": "tidy"}).Expect(http.StatusOK).JSON(&patched)
	require.Empty(t, patched.Unit.Labels)
	c.Patch(f.path(u)+"?include=Nope", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Data changes go through the data path; HeadRevision expands once there is one.
	f.put(t, u, "text/plain", "A=1\n", withQuery("last_change_description=first")).Expect(http.StatusOK)
	c.Get(f.path(u) + "?include=HeadRevisionNum").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, int64(1), ext.HeadRevision.RevisionNum)
	require.Equal(t, "first", ext.HeadRevision.Description)
	require.Equal(t, "first", ext.Unit.LastChangeDescription)

	// The Space cannot be deleted while it holds the Unit; DeleteGates hold the Unit.
	c.Delete("/api/space/"+f.space.SpaceID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(f.path(u), map[string]any{"DeleteGates": map[string]bool{"keep": true}}).Expect(http.StatusOK)
	c.Delete(f.path(u)).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(f.path(u), map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(f.path(u) + "?dry_run=true").Expect(http.StatusOK)
	c.Get(f.path(u)).Expect(http.StatusOK)
	c.Delete(f.path(u)).Expect(http.StatusOK)
	c.Get(f.path(u)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(f.path(u)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete("/api/space/" + f.space.SpaceID.String()).Expect(http.StatusOK)
}

// TestUnitConcurrentWriters: racing data writers lose nothing; Revision numbers are dense and unique.
func TestUnitConcurrentWriters(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "cfg", configdata.AppConfigEnv)
	const writers = 10
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			f.put(t, u, "text/plain", fmt.Sprintf("N=%d\n", i)).Expect(http.StatusOK)
		}(i)
	}
	wg.Wait()
	var revs []api.ExtendedRevision
	f.c.Get(f.path(u) + "/revision").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, writers)
	nums := make([]int, len(revs))
	for i, r := range revs {
		nums[i] = int(r.Revision.RevisionNum)
	}
	sort.Ints(nums)
	for i := range nums {
		require.Equal(t, i+1, nums[i])
	}
	var cur api.ExtendedUnit
	f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&cur)
	require.Equal(t, int64(writers), cur.Unit.HeadRevisionNum)
	require.Equal(t, revs[len(revs)-1].Revision.DataHash, cur.Unit.DataHash)
}

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

func TestUnitTenancy(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, u, "text/plain", "A=1\n").Expect(http.StatusOK)
	var revs []api.ExtendedRevision
	f.c.Get(f.path(u) + "/revision").Expect(http.StatusOK).JSON(&revs)

	b := f.env.Client(f.env.Token("other", "bob", auth.RoleAdmin))
	for _, p := range []string{f.path(u), f.path(u) + "/data", f.path(u) + "/revision", f.path(u) + "/mutation",
		f.path(u) + "/mutation_sources", f.path(u) + "/revision/" + revs[0].Revision.RevisionID.String(), f.unitsPath()} {
		b.Get(p).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	}
	b.Do(http.MethodPut, f.path(u)+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=2\n")}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Patch(f.path(u), map[string]any{"DisplayName": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Put(f.path(u), map[string]any{"Slug": "web", "ToolchainType": configdata.AppConfigEnv, "Version": 1}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Delete(f.path(u)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedUnit
	b.Get("/api/unit").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	b.Get("/api/revision").Expect(http.StatusOK).JSON(&revs)
	require.Empty(t, revs)
	// A Unit is only reachable under its own Space.
	sp := createSpace(t, f.c, map[string]any{"Slug": "elsewhere"})
	f.c.Get("/api/space/"+sp.SpaceID.String()+"/unit/"+u.UnitID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	// Viewers read Units but do not write them.
	v := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	v.Get(f.path(u) + "/data").Expect(http.StatusOK)
	v.Do(http.MethodPut, f.path(u)+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=2\n")}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	v.Post(f.unitsPath(), map[string]any{"Slug": "x", "ToolchainType": configdata.AppConfigEnv}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
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
