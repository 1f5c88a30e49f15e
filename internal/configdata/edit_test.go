package configdata_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/hubd/hubd/internal/configdata"
)

// leaves is the path model of data as a map from leaf key to value.
func leaves(t *testing.T, toolchain string, data []byte) map[string]any {
	t.Helper()
	doc, err := configdata.Parse(toolchain, data)
	require.NoError(t, err, "%s data must parse:\n%s", toolchain, data)
	out := map[string]any{}
	for _, l := range doc.Leaves() {
		out[l.Key()] = l.Value
	}
	return out
}

func open(t *testing.T, toolchain, data string) *configdata.Tree {
	t.Helper()
	tree, err := configdata.Open(toolchain, []byte(data))
	require.NoError(t, err)
	return tree
}

func render(t *testing.T, tree *configdata.Tree) []byte {
	t.Helper()
	out, err := tree.Render()
	require.NoError(t, err)
	return out
}

func path(keys ...string) []configdata.PathSegment {
	out := make([]configdata.PathSegment, len(keys))
	for i, k := range keys {
		out[i] = configdata.PathSegment{Key: k}
	}
	return out
}

func scalar(t *testing.T, v any) *yaml.Node {
	t.Helper()
	n, err := configdata.ValueNode(v)
	require.NoError(t, err)
	return n
}

// TestOpenRenderKeepsValues: data opened for editing and rendered unchanged holds the same values, in
// every format.
func TestOpenRenderKeepsValues(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		configdata.KubernetesYAML:      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: prod\ndata:\n  k: v\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n",
		configdata.AppConfigYAML:       "a:\n  b: [1, true, null]\n  c: {}\n",
		configdata.AppConfigJSON:       `{"z": 1, "a": {"b": [1.5, "x"], "c": []}}`,
		configdata.AppConfigTOML:       "title = 'x'\n[server]\nport = 8080\nhosts = ['a', 'b']\n",
		configdata.AppConfigINI:        "top = 1\n[db]\nhost = localhost\n",
		configdata.AppConfigProperties: "server.port=8080\nserver.host=h\nname=x\n",
		configdata.AppConfigEnv:        "A=1\nB='two words'\n",
		configdata.AppConfigText:       "anything\ngoes",
	}
	for _, toolchain := range configdata.ToolchainTypes {
		data, ok := cases[toolchain]
		require.True(t, ok, toolchain)
		tree := open(t, toolchain, data)
		require.Equal(t, leaves(t, toolchain, []byte(data)), leaves(t, toolchain, render(t, tree)), toolchain)
		doc, err := tree.Document()
		require.NoError(t, err)
		parsed, err := configdata.Parse(toolchain, []byte(data))
		require.NoError(t, err)
		require.Equal(t, parsed.Leaves(), doc.Leaves(), "%s: the tree's path model is Parse's", toolchain)
	}
}

// TestRenderedTextReadsBack: a value written into a text format is read back as it was written, whatever
// characters it holds.
func TestRenderedTextReadsBack(t *testing.T) {
	t.Parallel()
	values := []string{"plain", "", "two words", " padded ", "x #not a comment", "a;b", "it's", `say "hi"`, "$HOME and ${USER}",
		`C:\dir\`, `ends with \`, `back\slash`, "line one\nline two", "tab\there", "é and ü", "=", "a=b"}
	for _, toolchain := range []string{configdata.AppConfigEnv, configdata.AppConfigProperties, configdata.AppConfigYAML,
		configdata.AppConfigJSON, configdata.AppConfigTOML} {
		for _, v := range values {
			tree := open(t, toolchain, "")
			// Z follows K in every rendering: K's value must not run into it.
			_, err := configdata.Set(tree.Resources[0].Root, path("Z"), scalar(t, "z"))
			require.NoError(t, err)
			_, err = configdata.Set(tree.Resources[0].Root, path("K"), scalar(t, v))
			require.NoError(t, err)
			out := render(t, tree)
			got := leaves(t, toolchain, out)
			require.Equal(t, v, got["\x00K"], "%s %q rendered as %q", toolchain, v, out)
			require.Equal(t, "z", got["\x00Z"], "%s %q rendered as %q", toolchain, v, out)
		}
	}
	for _, v := range values {
		tree := open(t, configdata.AppConfigINI, "[s]\nk = x\nz = z\n")
		_, err := configdata.Set(tree.Resources[0].Root, path("s", "k"), scalar(t, v))
		require.NoError(t, err)
		out := render(t, tree)
		got := leaves(t, configdata.AppConfigINI, out)
		require.Equal(t, v, got["\x00s.k"], "INI %q rendered as %q", v, out)
		require.Equal(t, "z", got["\x00s.z"], "INI %q rendered as %q", v, out)
	}
}

// TestRenderKeepsYAMLCommentsAndJSONOrder: YAML keeps its comments and key order through an edit, JSON its
// key order; the formats rewritten from values sort their keys.
func TestRenderKeepsYAMLCommentsAndJSONOrder(t *testing.T) {
	t.Parallel()
	tree := open(t, configdata.AppConfigYAML, "# head\nz: 1 # the z\na:\n  b: 2\n")
	_, err := configdata.Set(tree.Resources[0].Root, path("z"), scalar(t, 5))
	require.NoError(t, err)
	require.Equal(t, "# head\nz: 5 # the z\na:\n  b: 2\n", string(render(t, tree)))

	tree = open(t, configdata.AppConfigJSON, `{"z": 1, "a": {"y": true, "b": null}, "e": {}, "l": []}`)
	_, err = configdata.Set(tree.Resources[0].Root, path("a", "new"), scalar(t, "x"))
	require.NoError(t, err)
	require.Equal(t, "{\n  \"z\": 1,\n  \"a\": {\n    \"y\": true,\n    \"b\": null,\n    \"new\": \"x\"\n  },\n  \"e\": {},\n  \"l\": []\n}\n", string(render(t, tree)))

	require.Equal(t, "A=1\nB=2\n", string(render(t, open(t, configdata.AppConfigEnv, "# c\nB=2\nA=1\n"))))
	require.Equal(t, "a = 1\nb = 2\n\n[s]\nx = 1\ny = 2\n", string(render(t, open(t, configdata.AppConfigINI, "b = 2\na = 1\n[s]\ny = 2\nx = 1\n"))))
}

// TestSetAndDelete: the path operations every format is edited with.
func TestSetAndDelete(t *testing.T) {
	t.Parallel()
	const data = "spec:\n  containers:\n    - name: main\n      image: a:1\n    - name: side\n      image: b:1\n  replicas: 1\n"
	type step struct {
		name    string
		path    []configdata.PathSegment
		value   any // nil: delete
		written []string
		after   map[string]any // leaves that must hold after the step
	}
	star := configdata.PathSegment{Star: true}
	side := configdata.PathSegment{Match: true, MatchKey: "name", MatchValue: "side"}
	steps := []step{
		{"a key", path("spec", "replicas"), 3, []string{"spec.replicas"}, map[string]any{"\x00spec.replicas": int64(3)}},
		{"missing maps are made", path("metadata", "labels", "tier"), "prod", []string{"metadata.labels.tier"}, map[string]any{"\x00metadata.labels.tier": "prod"}},
		{"every element", []configdata.PathSegment{{Key: "spec"}, {Key: "containers"}, star, {Key: "image"}}, "c:2",
			[]string{"spec.containers.0.image", "spec.containers.1.image"},
			map[string]any{"\x00spec.containers.0.image": "c:2", "\x00spec.containers.1.image": "c:2"}},
		{"the element whose name matches", []configdata.PathSegment{{Key: "spec"}, {Key: "containers"}, side, {Key: "image"}}, "d:3",
			[]string{"spec.containers.1.image"}, map[string]any{"\x00spec.containers.0.image": "c:2", "\x00spec.containers.1.image": "d:3"}},
		{"an index just past the end appends", path("spec", "containers", "2"), map[string]any{"name": "third"},
			[]string{"spec.containers.2"}, map[string]any{"\x00spec.containers.2.name": "third"}},
		{"a match that finds nothing writes nothing", []configdata.PathSegment{{Key: "spec"}, {Key: "containers"},
			{Match: true, MatchKey: "name", MatchValue: "none"}, {Key: "image"}}, "x", nil, nil},
		{"delete by match", []configdata.PathSegment{{Key: "spec"}, {Key: "containers"}, side}, nil,
			[]string{"spec.containers.1"}, map[string]any{"\x00spec.containers.1.name": "third"}},
		{"delete a key", path("metadata"), nil, []string{"metadata"}, nil},
		{"delete what is not there", path("nothing", "here"), nil, nil, nil},
	}
	tree := open(t, configdata.AppConfigYAML, data)
	root := tree.Resources[0].Root
	for _, s := range steps {
		var written []string
		if s.value == nil {
			written = configdata.Delete(root, s.path)
		} else {
			var err error
			written, err = configdata.Set(root, s.path, scalar(t, s.value))
			require.NoError(t, err, s.name)
		}
		require.Equal(t, s.written, written, s.name)
		got := leaves(t, configdata.AppConfigYAML, render(t, tree))
		for k, v := range s.after {
			require.Equal(t, v, got[k], "%s: %q", s.name, k)
		}
	}
	got := leaves(t, configdata.AppConfigYAML, render(t, tree))
	require.NotContains(t, got, "\x00metadata.labels.tier")
	require.Len(t, configdata.Find(root, []configdata.PathSegment{{Key: "spec"}, {Key: "containers"}, star}), 2)

	refusals := []struct {
		path []configdata.PathSegment
		msg  string
	}{
		{path("spec", "containers", "5"), "spec.containers has 2 elements: index 5 is beyond its end"},
		{path("spec", "replicas", "x"), "spec.replicas is a scalar value, not a map or list"},
		{path("spec", "replicas", "x", "y"), "spec.replicas is a scalar value: it has no \"x\" to write under"},
		{path("spec", "containers", "0", "image", "tag"), "spec.containers.0.image is a scalar value"},
	}
	for _, r := range refusals {
		_, err := configdata.Set(root, r.path, scalar(t, 1))
		var ee *configdata.EditError
		require.True(t, errors.As(err, &ee), "%v", err)
		require.Contains(t, ee.Msg, r.msg)
	}

	// Replacing the whole value.
	written, err := configdata.Set(root, nil, scalar(t, map[string]any{"only": true}))
	require.NoError(t, err)
	require.Equal(t, []string{""}, written)
	require.Equal(t, map[string]any{"\x00only": true}, leaves(t, configdata.AppConfigYAML, render(t, tree)))
}

// TestRenderRefusesWhatTheFormatCannotHold: an edit that leaves a value its format cannot hold is an
// EditError when rendered, never data that does not parse.
func TestRenderRefusesWhatTheFormatCannotHold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		toolchain, data string
		path            []configdata.PathSegment
		value           any
		msg             string
	}{
		{configdata.AppConfigINI, "[s]\na = 1\n", path("s", "a"), map[string]any{"deep": "x"}, "s.a would hold a structured value"},
		{configdata.AppConfigINI, "[s]\na = 1\n", path("s", "a"), "back`quote and #", "holds both a backquote and characters INI must quote"},
		{configdata.AppConfigProperties, "a=1\n", path("a"), []any{"x"}, "a would hold a structured value"},
		{configdata.AppConfigEnv, "A=1\n", path("bad key"), "x", `"bad key" is not an AppConfig/Env key`},
		{configdata.AppConfigEnv, "A=1\n", path("A"), map[string]any{"B": []any{1}}, "A.B would hold a structured value"},
		{configdata.AppConfigText, "hello", nil, map[string]any{"a": "b"}, "AppConfig/Text data is one text value"},
		{configdata.AppConfigTOML, "a = 1\n", nil, []any{1}, "AppConfig/TOML data is a table"},
	}
	for _, tt := range tests {
		tree := open(t, tt.toolchain, tt.data)
		_, err := configdata.Set(tree.Resources[0].Root, tt.path, scalar(t, tt.value))
		require.NoError(t, err)
		_, err = tree.Render()
		var ee *configdata.EditError
		require.True(t, errors.As(err, &ee), "%s: %v", tt.toolchain, err)
		require.Contains(t, ee.Msg, tt.msg, tt.toolchain)
	}
	// Nested maps flatten to dotted keys where the format has them.
	tree := open(t, configdata.AppConfigEnv, "A=1\n")
	_, err := configdata.Set(tree.Resources[0].Root, path("app"), scalar(t, map[string]any{"port": 80, "name": "x"}))
	require.NoError(t, err)
	require.Equal(t, "A=1\napp.name=x\napp.port=80\n", string(render(t, tree)))
}

// TestKubernetesIdentityFollowsEdits: a resource is named by its current apiVersion, kind and
// [namespace/]name, so an edit of its namespace renames it.
func TestKubernetesIdentityFollowsEdits(t *testing.T) {
	t.Parallel()
	tree := open(t, configdata.KubernetesYAML, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
	r := tree.Resources[0]
	typ, name := r.Identity(tree.Toolchain)
	require.Equal(t, [2]string{"apps/v1/Deployment", "web"}, [2]string{typ, name})
	_, err := configdata.Set(r.Root, path("metadata", "namespace"), scalar(t, "prod"))
	require.NoError(t, err)
	typ, name = r.Identity(tree.Toolchain)
	require.Equal(t, [2]string{"apps/v1/Deployment", "prod/web"}, [2]string{typ, name})
	doc, err := tree.Document()
	require.NoError(t, err)
	require.Equal(t, "apps/v1/Deployment/prod/web", doc.Resources[0].Key())

	typ, name = open(t, configdata.AppConfigYAML, "apiVersion: v1\n").Resources[0].Identity(configdata.AppConfigYAML)
	require.Equal(t, [2]string{"", ""}, [2]string{typ, name}, "only Kubernetes data has resources")
	require.Empty(t, open(t, configdata.KubernetesYAML, "").Resources, "empty Kubernetes data has no resources")
}
