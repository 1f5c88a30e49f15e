package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

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
