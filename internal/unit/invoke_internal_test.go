package unit

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apierr/apierrtest"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
)

func args(vs ...any) []function.Argument {
	out := make([]function.Argument, len(vs))
	for i, v := range vs {
		out[i] = function.Argument{Value: v}
	}
	return out
}

func TestCheckSubgroup(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "a", "Release42", strings.Repeat("x", 64), "myhubd"} {
		require.NoError(t, CheckSubgroup(s), s)
	}
	for _, s := range []string{"with space", "dash-ed", strings.Repeat("x", 65), "hubd", "HubdSync", "hubd1"} {
		apierrtest.Require(t, CheckSubgroup(s), apierr.TypeValidation, "subgroup")
	}
}

// TestBind: a request's invocations are bound for every ToolchainType it may reach; a function some
// types lack fails only their Units, one no type has fails the request.
func TestBind(t *testing.T) {
	t.Parallel()
	setImage := function.Invocation{FunctionName: "set-image", Arguments: args("main", "nginx:2")}
	setValue := function.Invocation{FunctionName: "set-value", Arguments: args("a.b", "x")}

	b, err := bind(InvokeRequest{Invocations: []function.Invocation{setValue, setImage}})
	require.NoError(t, err)
	require.Len(t, b.calls[configdata.KubernetesYAML], 2)
	require.NoError(t, b.errors[configdata.KubernetesYAML])
	for _, tc := range configdata.ToolchainTypes[1:] {
		apierrtest.Require(t, b.errors[tc], apierr.TypeValidation, "FunctionInvocations.1.FunctionName")
	}

	b, err = bind(InvokeRequest{Invocations: []function.Invocation{setValue}, ToolchainType: configdata.AppConfigEnv})
	require.NoError(t, err)
	require.Len(t, b.calls, 1, "only the request's ToolchainType is bound")
	require.Len(t, b.calls[configdata.AppConfigEnv], 1)

	refusals := []struct {
		name string
		req  InvokeRequest
		typ  apierr.Type
		item string
	}{
		{"no invocation", InvokeRequest{}, apierr.TypeValidation, "FunctionInvocations"},
		{"too many", InvokeRequest{Invocations: make([]function.Invocation, MaxInvocations+1)}, apierr.TypeValidation, "FunctionInvocations"},
		{"too many with the stored ones", InvokeRequest{Invocations: make([]function.Invocation, MaxInvocations),
			Stored: []StoredCalls{{Field: "Triggers.0", ToolchainType: configdata.AppConfigEnv, Calls: []function.Invocation{setValue}}}},
			apierr.TypeValidation, "FunctionInvocations"},
		{"an unknown ToolchainType", InvokeRequest{Invocations: []function.Invocation{setValue}, ToolchainType: "AppConfig/XML"}, apierr.TypeValidation, "ToolchainType"},
		{"a function no type has", InvokeRequest{Invocations: []function.Invocation{setValue, {FunctionName: "nope"}}}, apierr.TypeValidation, "FunctionInvocations.1.FunctionName"},
		{"a function the request's type lacks", InvokeRequest{Invocations: []function.Invocation{setImage}, ToolchainType: configdata.AppConfigEnv},
			apierr.TypeValidation, "FunctionInvocations.0.FunctionName"},
		{"a value that does not convert", InvokeRequest{Invocations: []function.Invocation{{FunctionName: "set-value", Arguments: args("a..b", "x")}}},
			apierr.TypeUnprocessable, ""},
		{"stored calls of another type than the request's", InvokeRequest{ToolchainType: configdata.AppConfigYAML,
			Stored: []StoredCalls{{Field: "Invocations.0", ToolchainType: configdata.AppConfigEnv, Calls: []function.Invocation{setValue}}}},
			apierr.TypeValidation, "Invocations.0"},
	}
	for _, tt := range refusals {
		_, err := bind(tt.req)
		var items []string
		if tt.item != "" {
			items = []string{tt.item}
		}
		apierrtest.Require(t, err, tt.typ, items...)
	}

	// Stored calls run on Units of their ToolchainType only.
	origin := Origin{TriggerID: ptr(uuid.New())}
	b, err = bind(InvokeRequest{Stored: []StoredCalls{{Field: "Triggers.0", ToolchainType: configdata.AppConfigEnv, Calls: []function.Invocation{setValue}, Origin: origin}}})
	require.NoError(t, err)
	require.Len(t, b.calls[configdata.AppConfigEnv], 1)
	require.Equal(t, origin, b.calls[configdata.AppConfigEnv][0].origin)
	apierrtest.Require(t, b.errors[configdata.AppConfigYAML], apierr.TypeValidation, "Triggers.0")
}

func ptr[T any](v T) *T { return &v }

// run binds inv for toolchain and runs it on tree.
func run(t *testing.T, tree *configdata.Tree, inv function.Invocation) *function.Call {
	t.Helper()
	c, err := function.Bind(tree.Toolchain, inv, "")
	require.NoError(t, err)
	_, err = c.Run(tree)
	require.NoError(t, err)
	return c
}

func open(t *testing.T, toolchain, data string) *configdata.Tree {
	t.Helper()
	tree, err := configdata.Open(toolchain, []byte(data))
	require.NoError(t, err)
	return tree
}

func document(t *testing.T, tree *configdata.Tree) *configdata.Document {
	t.Helper()
	doc, err := tree.Document()
	require.NoError(t, err)
	return doc
}

// TestSettle: after a mutating call, each changed value whose guards the clearance does not clear is put
// back (an added one removed, a removed one restored) and reported; what it could write is stamped.
func TestSettle(t *testing.T) {
	t.Parallel()
	const y = configdata.AppConfigYAML
	guarded := annotations{}.stamp("", "", "server", map[string]string{"owner": "team-a"}, false)
	tests := []struct {
		name      string
		data      string
		inv       function.Invocation
		clearance []function.Requirement
		wrote     bool
		conflicts []string
		after     map[string]any
	}{
		{"an unguarded path is written", "server:\n  port: 80\nname: a\n", function.Invocation{FunctionName: "set-value", Arguments: args("name", "b")},
			nil, true, nil, map[string]any{"name": "b", "server.port": int64(80)}},
		{"a guarded change is put back", "server:\n  port: 80\nname: a\n", function.Invocation{FunctionName: "set-values", Arguments: args("server.port", int64(81), "name", "b")},
			nil, true, []string{"server.port"}, map[string]any{"name": "b", "server.port": int64(80)}},
		{"a guarded addition is removed", "server:\n  port: 80\n", function.Invocation{FunctionName: "set-value", Arguments: args("server.host", "h")},
			nil, false, []string{"server.host"}, map[string]any{"server.port": int64(80)}},
		{"a guarded removal is undone", "server:\n  port: 80\n  host: h\n", function.Invocation{FunctionName: "delete-path", Arguments: args("server.host")},
			nil, false, []string{"server.host"}, map[string]any{"server.port": int64(80), "server.host": "h"}},
		{"the clearance lets it through", "server:\n  port: 80\n", function.Invocation{FunctionName: "set-value", Arguments: args("server.port", int64(81))},
			[]function.Requirement{{Key: "owner", Operator: function.OpIn, Values: []string{"team-a"}}}, true, nil, map[string]any{"server.port": int64(81)}},
		{"a clearance for another value does not", "server:\n  port: 80\n", function.Invocation{FunctionName: "set-value", Arguments: args("server.port", int64(81))},
			[]function.Requirement{{Key: "owner", Operator: function.OpIn, Values: []string{"team-b"}}}, false, []string{"server.port"}, map[string]any{"server.port": int64(80)}},
		{"writing the same value changes nothing", "server:\n  port: 80\n", function.Invocation{FunctionName: "set-value", Arguments: args("server.port", int64(80))},
			nil, false, nil, map[string]any{"server.port": int64(80)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := open(t, y, tt.data)
			before := document(t, tree)
			c := run(t, tree, tt.inv)
			w, err := settle(tree, c, before, guarded, tt.clearance, nil, false)
			require.NoError(t, err)
			require.Equal(t, tt.wrote, w.wrote)
			var paths []string
			for _, cf := range w.conflicts {
				require.Equal(t, ConflictGuarded, cf.Reason)
				require.Equal(t, map[string]string{"owner": "team-a"}, cf.Guards)
				require.Contains(t, cf.Details, tt.inv.FunctionName+" did not write "+cf.Path+": its guards owner=team-a are not cleared")
				paths = append(paths, cf.Path)
			}
			require.Equal(t, tt.conflicts, paths)
			got := map[string]any{}
			for _, l := range document(t, tree).Leaves() {
				got[l.Path] = l.Value
			}
			require.Equal(t, tt.after, got, "the tree after")
			require.Equal(t, document(t, tree).Leaves(), w.after.Leaves(), "the document after is the tree's")
			require.False(t, w.notesChanged)
		})
	}

	// Stamps and protection go on the paths written, and only those.
	tree := open(t, y, "a: 1\nb: 2\nserver:\n  port: 80\n")
	before := document(t, tree)
	c := run(t, tree, function.Invocation{FunctionName: "set-values", Arguments: args("a", int64(10), "server.port", int64(81))})
	w, err := settle(tree, c, before, guarded, nil, map[string]string{"ticket": "7"}, true)
	require.NoError(t, err)
	require.True(t, w.notesChanged)
	require.Equal(t, map[string]string{"ticket": "7"}, w.notes.guards("", "a"))
	require.True(t, w.notes.protected("", "a"))
	require.Nil(t, w.notes.guards("", "b"))
	require.Equal(t, map[string]string{"owner": "team-a"}, w.notes.guards("", "server.port"), "a withheld change is not stamped")
	require.False(t, w.notes.protected("", "server.port"))
	require.Len(t, guarded, 1, "the notes settle started from are left as they were")
}

// TestChangedLeaves: the leaves two documents differ in, of every resource, in order.
func TestChangedLeaves(t *testing.T) {
	t.Parallel()
	const k = configdata.KubernetesYAML
	before := parse(t, k, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: '1', y: '2'}\n")
	after := parse(t, k, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: '1', y: '3', z: '4'}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")
	type leaf struct {
		resource, path string
		existed        bool
		before         any
	}
	var got []leaf
	for _, l := range changedLeaves(before, after) {
		got = append(got, leaf{l.resource, l.path, l.existed, l.before})
	}
	require.Equal(t, []leaf{
		{"v1/ConfigMap/a", "data.y", true, "2"},
		{"v1/ConfigMap/a", "data.z", false, nil},
		{"v1/Secret/s", "apiVersion", false, nil},
		{"v1/Secret/s", "kind", false, nil},
		{"v1/Secret/s", "metadata.name", false, nil},
	}, got)
	removed := changedLeaves(after, before)
	require.Len(t, removed, 5)
	require.True(t, removed[0].existed)
	require.Empty(t, changedLeaves(before, before))
}

// TestTriggerRun: what a Trigger runs carries its Guards (the call's own win) and its Clearance where
// the call has none; a stored Invocation is filled with the Trigger's Params, and its Mutations record both.
func TestTriggerRun(t *testing.T) {
	t.Parallel()
	triggerID, invocationID := uuid.New(), uuid.New()
	own := function.Requirement{Key: "own", Operator: function.OpExists}
	inherited := function.Requirement{Key: "trigger", Operator: function.OpExists}
	r := TriggerRun{TriggerID: triggerID, Call: function.Invocation{FunctionName: "set-value", Arguments: args("a", "1"),
		Guards: map[string]string{"k": "call"}}, Guards: map[string]string{"k": "trigger", "t": "x"}, Clearance: []function.Requirement{inherited}}
	invs, origin, err := r.Invocations("Params", function.NewBudget())
	require.NoError(t, err)
	require.Equal(t, Origin{TriggerID: &triggerID}, origin)
	require.Len(t, invs, 1)
	require.Equal(t, map[string]string{"k": "call", "t": "x"}, invs[0].Guards)
	require.Equal(t, []function.Requirement{inherited}, invs[0].Clearance)

	r.Invocation = &StoredInvocation{ID: invocationID,
		FunctionInvocations: []function.Invocation{
			{FunctionName: "set-value", Arguments: args("replicas", "{{ .n }}")},
			{FunctionName: "set-value", Arguments: args("b", "2"), Clearance: []function.Requirement{own}},
		},
		Parameters: []function.Parameter{{ParameterName: "n", DataType: "int", Required: true}}}
	r.Params = map[string]any{"n": float64(3)}
	invs, origin, err = r.Invocations("Params", function.NewBudget())
	require.NoError(t, err)
	require.Equal(t, Origin{TriggerID: &triggerID, InvocationID: &invocationID, Params: r.Params}, origin)
	require.Len(t, invs, 2, "the stored Invocation runs instead of the Trigger's own call")
	require.Equal(t, []function.Requirement{inherited}, invs[0].Clearance)
	require.Equal(t, []function.Requirement{own}, invs[1].Clearance, "a call's own Clearance is kept")
	require.Equal(t, map[string]string{"k": "trigger", "t": "x"}, invs[1].Guards)

	r.Params = map[string]any{}
	_, _, err = r.Invocations("Params", function.NewBudget())
	apierrtest.Require(t, err, apierr.TypeValidation, "Params")

	require.Equal(t, []string{TriggerEventPostClone, TriggerEventMutation}, triggerEvents(SourceClone))
	for _, s := range []string{SourceDataPut, SourceRestore, SourceFunction} {
		require.Equal(t, []string{TriggerEventMutation}, triggerEvents(s), s)
	}
}

// TestLocate: a guard or protection edit names paths (with * and ?Key=value) of one resource; each must
// reach something.
func TestLocate(t *testing.T) {
	t.Parallel()
	k := open(t, configdata.KubernetesYAML, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: main\n      image: a\n    - name: side\n      image: b\n")
	paths, err := locate(k, "v1/Pod", "p", "spec.containers.*.image", "ResourceGuards.0.Set")
	require.NoError(t, err)
	require.Equal(t, []string{"spec.containers.0.image", "spec.containers.1.image"}, paths)
	paths, err = locate(k, "v1/Pod", "p", "spec.containers.?name=side.image", "ResourceGuards.0.Set")
	require.NoError(t, err)
	require.Equal(t, []string{"spec.containers.1.image"}, paths)

	env := open(t, configdata.AppConfigEnv, "A=1\n")
	refusals := []struct {
		tree            *configdata.Tree
		typ, name, path string
		item, inMessage string
	}{
		{k, "v1/Pod", "p", "", "ResourceGuards.0.Set", "a path is required"},
		{k, "v1/Pod", "p", "spec..x", "ResourceGuards.0.Set.spec..x", ""},
		{k, "v1/Pod", "p", "spec.volumes", "ResourceGuards.0.Set.spec.volumes", "the path spec.volumes is not in the data"},
		{k, "v1/Pod", "other", "spec", "ResourceGuards.0.Set", "the data has no resource v1/Pod other"},
		{env, "", "", "B", "ResourceGuards.0.Set.B", "the path B is not in the data"},
		{env, "v1/Pod", "p", "A", "ResourceGuards.0.Set", "only Kubernetes/YAML data has resources; leave ResourceType and ResourceName empty"},
		{k, "", "", "spec", "ResourceGuards.0.Set", "name one with ResourceType and ResourceName"},
	}
	for _, r := range refusals {
		_, err := locate(r.tree, r.typ, r.name, r.path, "ResourceGuards.0.Set")
		e := apierrtest.Require(t, err, apierr.TypeValidation, r.item)
		require.Contains(t, e.Message, r.inMessage)
	}
	_, err = locate(env, "", "", "A", "ResourceGuards.0.Set")
	require.NoError(t, err)
}

// TestGuardEditClearance: changing a guard's value or removing it needs its clearance; adding one does not.
func TestGuardEditClearance(t *testing.T) {
	t.Parallel()
	notes := annotations{}.stamp("", "", "a", map[string]string{"owner": "x", "tier": "1"}, false)
	edit := GuardEdit{}
	require.Equal(t, map[string]string{"owner": "x"}, changedKeys(notes, edit, "a", map[string]string{"owner": "y", "tier": "1", "new": "z"}))
	require.Empty(t, changedKeys(notes, edit, "b", map[string]string{"owner": "y"}), "a path without guards holds none")

	require.NoError(t, requireClearance("a", map[string]string{}, nil))
	require.NoError(t, requireClearance("a", map[string]string{"owner": "x"}, []function.Requirement{{Key: "owner", Operator: function.OpNotIn, Values: []string{"y"}}}))
	err := requireClearance("a", map[string]string{"owner": "x", "tier": "1"}, []function.Requirement{{Key: "owner", Operator: function.OpExists}})
	e := apierrtest.Require(t, err, apierr.TypeConflict)
	require.Contains(t, e.Message, "the guards tier=1 of path a are not cleared")
}
