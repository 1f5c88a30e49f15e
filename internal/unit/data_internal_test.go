package unit

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apierr/apierrtest"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
)

func parse(t *testing.T, toolchain, data string) *configdata.Document {
	t.Helper()
	doc, err := configdata.Parse(toolchain, []byte(data))
	require.NoError(t, err)
	return doc
}

func TestETagMatches(t *testing.T) {
	t.Parallel()
	const hash = "abc123"
	tests := []struct {
		header       string
		weak, strong bool
	}{
		{`"abc123"`, true, true},
		{`abc123`, true, true},
		{`*`, true, true},
		{`"other", "abc123"`, true, true},
		{` "other" ,abc123 `, true, true},
		{`W/"abc123"`, true, false},
		{`W/"other", "abc123"`, true, true},
		{`"other"`, false, false},
		{`"abc1234"`, false, false},
		{``, false, false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.weak, ETagMatches(tt.header, hash), "If-None-Match: %s", tt.header)
		require.Equal(t, tt.strong, ETagMatchesStrong(tt.header, hash), "If-Match: %s", tt.header)
	}
}

// TestUploadData: a JSON string body carries text for every ToolchainType but AppConfig/JSON, whose data
// is the JSON itself; other bodies are the data as sent.
func TestUploadData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mediaType, toolchain, body, want string
	}{
		{"application/json", configdata.AppConfigEnv, `"A=1\nB=2\n"`, "A=1\nB=2\n"},
		{"application/json", configdata.KubernetesYAML, " \n\"kind: x\"", "kind: x"},
		{"application/json", configdata.AppConfigJSON, `"just a string"`, `"just a string"`},
		{"application/json", configdata.AppConfigYAML, `{"a": 1}`, `{"a": 1}`},
		{"application/json", configdata.AppConfigText, ``, ``},
		{"text/plain", configdata.AppConfigEnv, `"A=1"`, `"A=1"`},
		{"application/yaml", configdata.AppConfigYAML, `"a"`, `"a"`},
	}
	for _, tt := range tests {
		got, err := Upload{Body: []byte(tt.body), MediaType: tt.mediaType}.Data(tt.toolchain)
		require.NoError(t, err, tt.body)
		require.Equal(t, tt.want, string(got), "%s %s %q", tt.mediaType, tt.toolchain, tt.body)
	}
	_, err := Upload{Body: []byte(`"unterminated`), MediaType: "application/json"}.Data(configdata.AppConfigText)
	apierrtest.Require(t, err, apierr.TypeData, "data")
	_, err = Upload{Body: []byte(`"a" "b"`), MediaType: "application/json"}.Data(configdata.AppConfigText)
	apierrtest.Require(t, err, apierr.TypeData, "data")
}

// TestDataErrors: data that does not parse is 400 Data naming its line; DiffTexts names the side too.
func TestDataErrors(t *testing.T) {
	t.Parallel()
	_, err := configdata.Parse(configdata.AppConfigEnv, []byte("A=1\nbroken\n"))
	e := apierrtest.Require(t, dataError(err), apierr.TypeData, "line 2")
	require.Contains(t, e.Message, "not an assignment")
	apierrtest.Require(t, dataError(&configdata.ParseError{Toolchain: "x", Msg: "bad"}), apierr.TypeData, "data")
	other := errors.New("the database is gone")
	require.Same(t, other, dataError(other), "only parse errors are the data's fault")

	_, err = DiffTexts(configdata.AppConfigEnv, []byte("A=1\n"), []byte("A=1\nbroken\n"))
	e = apierrtest.Require(t, err, apierr.TypeData, "line 2")
	require.Equal(t, []string{"in To"}, e.Details)
	_, err = DiffTexts(configdata.AppConfigEnv, []byte("broken\n"), []byte("A=1\n"))
	e = apierrtest.Require(t, err, apierr.TypeData, "line 1")
	require.Equal(t, []string{"in From"}, e.Details)
	_, err = DiffTexts("AppConfig/XML", nil, nil)
	apierrtest.Require(t, err, apierr.TypeValidation, "ToolchainType")

	d, err := DiffTexts(configdata.AppConfigEnv, []byte("A=1\n"), []byte("A=2\n"))
	require.NoError(t, err)
	require.Equal(t, []configdata.Change{{Path: "A", Change: configdata.Changed, Old: "1", New: "2"}}, d.Changes)
}

// TestAttributeSources: a new Revision's mutation sources keep the Mutation that last set each unchanged
// value and name the new one for every value it added or changed; values it removed have none.
func TestAttributeSources(t *testing.T) {
	t.Parallel()
	const k = configdata.KubernetesYAML
	prev := parse(t, k, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  keep: x\n  change: y\n  drop: z\n")
	prevSources := attributeSources(&configdata.Document{}, nil, prev, 1, 1)
	for _, s := range prevSources {
		require.Equal(t, [2]int64{1, 1}, [2]int64{s.MutationNum, s.RevisionNum}, "everything of the first Revision is its Mutation's")
		require.Equal(t, "v1/ConfigMap", s.ResourceType)
		require.Equal(t, "a", s.ResourceName)
	}

	next := parse(t, k, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  keep: x\n  change: Y\n  add: w\n"+
		"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n")
	got := map[string][2]int64{}
	for _, s := range attributeSources(prev, prevSources, next, 5, 3) {
		got[s.ResourceType+" "+s.Path] = [2]int64{s.MutationNum, s.RevisionNum}
	}
	require.Equal(t, map[string][2]int64{
		"v1/ConfigMap apiVersion": {1, 1}, "v1/ConfigMap kind": {1, 1}, "v1/ConfigMap metadata.name": {1, 1},
		"v1/ConfigMap data.keep": {1, 1}, "v1/ConfigMap data.change": {5, 3}, "v1/ConfigMap data.add": {5, 3},
		"v1/Service apiVersion": {5, 3}, "v1/Service kind": {5, 3}, "v1/Service metadata.name": {5, 3},
	}, got)

	// A value equal to the previous one but without a recorded source is the new Mutation's.
	env := parse(t, configdata.AppConfigEnv, "A=1\n")
	sources := attributeSources(env, []Source{}, env, 2, 2)
	require.Equal(t, []Source{{Path: "A", MutationNum: 2, RevisionNum: 2}}, sources)
	require.Equal(t, []Source{{Path: "", MutationNum: 3, RevisionNum: 3}}, attributeSources(env, sources, parse(t, configdata.AppConfigEnv, ""), 3, 3),
		"the value removed has no source; the empty top left is the new Mutation's")
}

// TestPathAnnotations: guards apply to their path and everything below it, in their resource only; a
// path's guards are those of every annotated path above it; protection likewise.
func TestPathAnnotations(t *testing.T) {
	t.Parallel()
	notes := annotations{}.
		stamp("v1/ConfigMap", "a", "data", map[string]string{"owner": "team-a"}, false).
		stamp("v1/ConfigMap", "a", "data.key", map[string]string{"reason": "pinned", "owner": "team-b"}, false).
		stamp("v1/ConfigMap", "b", "", map[string]string{"all": "x"}, true).
		stamp("v1/ConfigMap", "a", "data", nil, false) // says nothing: no change
	require.Len(t, notes, 3)
	const a, b = "v1/ConfigMap/a", "v1/ConfigMap/b"

	require.Equal(t, map[string]string{"owner": "team-a"}, notes.guards(a, "data"))
	require.Equal(t, map[string]string{"owner": "team-a"}, notes.guards(a, "data.other"))
	require.Equal(t, map[string]string{"owner": "team-b", "reason": "pinned"}, notes.guards(a, "data.key.sub"), "the deeper path's value wins")
	require.Nil(t, notes.guards(a, "database"), "data is not a prefix of database")
	require.Nil(t, notes.guards(a, "metadata.name"))
	require.Equal(t, map[string]string{"all": "x"}, notes.guards(b, "anything.at.all"), "the empty path is the whole resource")
	require.Nil(t, notes.guards("v1/ConfigMap/c", "data"))

	require.False(t, notes.protected(a, "data.key"))
	require.True(t, notes.protected(b, "x"))
	notes = notes.stamp("v1/ConfigMap", "a", "data.key", nil, true)
	require.True(t, notes.protected(a, "data.key.sub"))
	require.False(t, notes.protected(a, "data"), "protection applies below, not above")

	// Stamping adds to what a path holds.
	notes = notes.stamp("v1/ConfigMap", "a", "data", map[string]string{"ticket": "42"}, false)
	require.Equal(t, map[string]string{"owner": "team-a", "ticket": "42"}, notes.guards(a, "data"))

	clearance := []function.Requirement{{Key: "owner", Operator: function.OpIn, Values: []string{"team-a"}}}
	require.Nil(t, notes.uncleared(a, "data.x", []function.Requirement{{Key: "owner", Operator: function.OpExists}, {Key: "ticket", Operator: function.OpExists}}))
	require.Equal(t, map[string]string{"ticket": "42"}, notes.uncleared(a, "data.x", clearance))
	require.Equal(t, map[string]string{"owner": "team-b", "reason": "pinned", "ticket": "42"}, notes.uncleared(a, "data.key", clearance))
	require.Nil(t, notes.uncleared(a, "metadata", nil), "an unguarded path is always cleared")

	// Annotations that say nothing any more are dropped.
	i := notes.find("v1/ConfigMap", "b", "")
	notes[i].Guards, notes[i].Protected = map[string]string{}, false
	require.Len(t, notes.pruned(), 2)
	require.Equal(t, annotations{}, annotations{}.pruned())

	u := Unit{PathAnnotations: notes}
	annotated := u.Annotate([]Source{{ResourceType: "v1/ConfigMap", ResourceName: "a", Path: "data.key"}, {ResourceType: "v1/ConfigMap", ResourceName: "a", Path: "kind"}})
	require.Equal(t, map[string]string{"owner": "team-b", "reason": "pinned", "ticket": "42"}, annotated[0].Guards)
	require.True(t, annotated[0].Protected)
	require.Nil(t, annotated[1].Guards)
	require.False(t, annotated[1].Protected)
}
