package httpapi_test

import (
	"fmt"
	"net/http"
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
