package configdata

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseValid(t *testing.T) {
	cases := map[string]struct {
		data   string
		leaves map[string]any // resource\x00path -> value
	}{
		KubernetesYAML: {
			data: "# web\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\nspec:\n  replicas: 3\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n",
			leaves: map[string]any{
				"apps/v1/Deployment/prod/web\x00spec.replicas": int64(3),
				"v1/Service/web\x00kind":                       "Service",
			},
		},
		AppConfigYAML:       {data: "a:\n  b: [1, true]\n", leaves: map[string]any{"\x00a.b.0": int64(1), "\x00a.b.1": true}},
		AppConfigJSON:       {data: `{"a": {"b": 1.5, "c": [], "d": null}}`, leaves: map[string]any{"\x00a.b": 1.5, "\x00a.c": []any{}, "\x00a.d": nil}},
		AppConfigTOML:       {data: "title = 'x'\n[server]\nport = 8080\n", leaves: map[string]any{"\x00title": "x", "\x00server.port": int64(8080)}},
		AppConfigINI:        {data: "top = 1\n[db]\nhost = localhost ; comment\n", leaves: map[string]any{"\x00top": "1", "\x00db.host": "localhost"}},
		AppConfigProperties: {data: "# c\nserver.port=8080\nserver.host = h\nname: x\n", leaves: map[string]any{"\x00server.port": "8080", "\x00server.host": "h", "\x00name": "x"}},
		AppConfigEnv:        {data: "# c\nexport A=1\nB=\"two words\"\n", leaves: map[string]any{"\x00A": "1", "\x00B": "two words"}},
		AppConfigText:       {data: "anything\ngoes", leaves: map[string]any{"\x00": "anything\ngoes"}},
	}
	for tc, c := range cases {
		doc, err := Parse(tc, []byte(c.data))
		require.NoError(t, err, tc)
		got := map[string]any{}
		for _, l := range doc.Leaves() {
			got[l.Key()] = l.Value
		}
		for k, v := range c.leaves {
			require.Contains(t, got, k, tc)
			require.Equal(t, v, got[k], "%s %q", tc, k)
		}
		projection, err := doc.Projection()
		require.NoError(t, err, tc)
		require.NotEmpty(t, projection)
	}
}

// TestParseMalformed: data that does not parse for its ToolchainType is refused by every format in the
// same way: a ParseError naming the line (1-based, within the data) and saying what is wrong on it,
// on one line.
func TestParseMalformed(t *testing.T) {
	t.Parallel()
	type malformed struct {
		data string
		line int
		msg  string
	}
	cases := map[string][]malformed{
		KubernetesYAML: {
			{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n   bad: 1\n", 5, "mapping values are not allowed"},
			{"apiVersion: v1\nkind: 'ConfigMap\nmetadata:\n  name: a\n", 2, "unexpected end of stream"},
			{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n", 4, "YAML indentation cannot use tabs"},
			{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: *n\n", 4, "unknown anchor 'n'"},
			{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\nstray\n", 5, "expected <document start>"},
			{"just text\n", 1, "must be a mapping"},
			{"apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n- a\n- b\n", 5, "must be a mapping"},
			{"apiVersion: v1\nmetadata:\n  name: a\n", 1, "needs apiVersion, kind and metadata.name"},
			{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\nkind: ConfigMap\n", 6, "needs apiVersion, kind and metadata.name"},
			{"apiVersion: v1\nkind: A\nmetadata: {name: x}\n---\napiVersion: v1\nkind: A\nmetadata: {name: x}\n", 5, "resource v1/A/x is defined twice (first at line 1)"},
		},
		AppConfigYAML: {
			{"a: 1\nb: c: d\n", 2, "mapping values are not allowed"},
			{"a:\n  b: 1\n   c: 2\n", 3, "mapping values are not allowed"},
			{"a: 1\nb: 'open\n", 2, "unexpected end of stream"},
			{"a:\n\tb: 1\n", 2, "YAML indentation cannot use tabs"},
			{"\ta: 1\n", 1, "YAML indentation cannot use tabs"},
			{"a:\n  b: 1\n\tc: 2\n", 3, "YAML indentation cannot use tabs"},
			{"a: 1\nb: [1, 2\n", 2, "did not find expected ',' or ']'"},
			{"a: 1\nb: {c: 1\n", 2, "did not find expected ',' or '}'"},
			{"a: 1\nb: 2\n- c\n", 3, "did not find expected key"},
			{"- a\n- b\nc: 1\n", 3, "did not find expected '-' indicator"},
			{"a: 1\nb: *missing\n", 2, "unknown anchor 'missing'"},
			{"a: 1\nq: '*x'\nb: *x\n", 3, "unknown anchor 'x'"},
			{"a: 1\nb: !!int ten\n", 2, "cannot decode !!str `ten` as a !!int"},
			{"a: 1\nb:\n  c: [1, !!bool maybe]\n", 3, "as a !!bool"},
			{"a: 1\n? [k]\n: v\n", 2, "a mapping key must be a scalar"},
			{"a: 1\nb: &x [*x]\n", 2, "contains itself"},
			{"b: \"\\q\"\n", 1, "unknown escape character"},
			{"a: 1\nb: \"\\q\"\n", 2, "unknown escape character"},
			{"a: 1\nb: !x!y z\n", 2, "undefined tag handle"},
			{"a: 1\nb: \x01\n", 2, "control characters are not allowed"},
			{"a: 1\n---\nb: 2\n", 2, "one document"},
			{"a: 1\nb: 2\na: 3\n", 3, `mapping key "a" already defined at line 1`},
		},
		AppConfigTOML: {
			{"a = 1\nb = = 2\n", 2, "unexpected character"},
			{"a = 1\nb = \n", 2, "at start of value"},
			{"a = 1\nb = 'open\n", 2, "literal strings cannot have new lines"},
			{"a = 1\nb = \"\"\"open\n", 2, "not terminated"},
			{"[server\nport = 1\n", 1, "expected ']' to close table name"},
			{"a = 1\n[a]\n", 2, "key a should be a table"},
			{"a = 1\nb = [1,\n", 2, "array is incomplete"},
			{"a = 1\nb = 1 c = 2\n", 2, "expected newline"},
			{"a = 1\n= 2\n", 2, "invalid character at start of key"},
			{"a = 1\nno equals\n", 2, "expected '=' after key"},
			{"a = 1\nb = \"\\q\"\n", 2, "invalid escape character"},
			{"a = 1\nd = 1979-13-01\n", 2, "impossible date"},
			{"a = 1\na = 2\n", 2, "already defined"},
		},
		AppConfigINI: {
			{"[ok]\na = 1\n[broken\n", 3, "unclosed section: [broken"},
			{"a = 1\nno equals here\n", 2, "key-value delimiter not found: no equals here"},
			{"[s]\na = 1\n  stray\n", 3, "key-value delimiter not found: stray"},
			{"a = 1\n= v\n", 2, "empty key name"},
			{"a = 1\n[]\n", 2, "empty section name"},
			{"a = 1\nb = \"\"\"open\nmore\n", 2, "never closed"},
			{"a = \"\"\"x\ny\n\"\"\"\nb = `open\nmore", 4, "never closed"},
			{"[s]\na = 1\n\"q = 1\n", 3, "missing closing key quote"},
		},
		AppConfigJSON: {
			{"{\n  \"a\": 1,\n  \"b\": }\n", 3, "looking for beginning of value"},
			{"{\n  \"a\": 1,\n}\n", 3, "looking for beginning of object key"},
			{"{\n  \"a\": 'x'\n}", 2, "invalid character '\\''"},
			{"{\n  \"a\": [1,\n", 2, "unexpected end of JSON"},
			{"", 1, "unexpected end of JSON"},
			{"{\n  \"a\": 01\n}", 2, "after object key:value pair"},
			{"{\n  \"a\": \"x\\q\"\n}", 2, "in string escape code"},
			{"{\"a\": 1}\n{\"b\": 2}\n", 2, "more than one JSON value"},
			{"// comment\n{}", 1, "invalid character '/'"},
			{"{\"a\": 1,\n \"a\": 2}", 2, "defined twice (first at line 1)"},
		},
		AppConfigProperties: {
			{"a=1\nb=\\u12\n", 2, "invalid unicode literal"},
			{"a=1\nb=\\uZZZZ\n", 2, "invalid unicode literal"},
			{"a=1\nb=x\\\n  \\u12\n", 2, "invalid unicode literal"},
			{"a=1\n=v\n", 2, `a value without a key: "v"`},
			{"a=1\n:v\n", 2, `a value without a key: "v"`},
		},
		AppConfigEnv: {
			{"A=1\nno equals here\n", 2, "not an assignment"},
			{"A=1\nno equals here", 2, "not an assignment"},
			{"A=1\r\nno equals here\r\n", 2, "not an assignment"},
			{"A=1\nB: 2\n", 2, "not an assignment"},
			{"A=1\nexport\n", 2, "export must be followed by an assignment"},
			{"A=1\nexport B\n", 2, "export must be followed by an assignment"},
			{"A=1\nexport # B=1\n", 2, "export must be followed by an assignment"},
			{"A=1\n=v\n", 2, "the key before = is empty"},
			{"A=1\n  = v\n", 2, "the key before = is empty"},
			{"A=1\n1BAD KEY=x\n", 2, `"1BAD KEY" is not a valid key`},
			{"A=1\nA B=1\n", 2, `"A B" is not a valid key`},
			{"A=1\nexport export B=1\n", 2, `"export B" is not a valid key`},
			{"A=1\nB='open\n", 2, "the single-quoted value of B is never closed"},
			{"A=1\nB=\"open\nC=3\n", 2, "the double-quoted value of B is never closed"},
			{"A=1\nB=\"x\\\"\n", 2, "the double-quoted value of B is never closed"},
			{"A=1\nB='x'y\n", 2, "unexpected text after the closing quote of B's value"},
			{"A=1\nB=\"multi\nline\"tail\n", 3, "unexpected text after the closing quote of B's value"},
		},
		AppConfigText: {
			{"ok\n\xff\xfe\n", 2, "UTF-8"},
			{"\xc3\n", 1, "UTF-8"},
			{"a\nb\ncaf\xe9\n", 3, "UTF-8"},
		},
	}
	for _, tc := range ToolchainTypes {
		require.NotEmpty(t, cases[tc], tc)
		for _, c := range cases[tc] {
			_, err := Parse(tc, []byte(c.data))
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "%s %q: %v", tc, c.data, err)
			require.Equal(t, tc, pe.Toolchain)
			require.Equal(t, c.line, pe.Line, "%s %q: %v", tc, c.data, err)
			require.Contains(t, pe.Msg, c.msg, "%s %q", tc, c.data)
			require.NotContains(t, pe.Msg, "\n", "%s %q", tc, c.data)
			require.Contains(t, pe.Error(), fmt.Sprintf("%s: line %d: ", tc, c.line))
		}
	}
}

// Properties are kept as written: ${...} is the reader's to expand, so self and circular references
// are valid data, not errors.
func TestPropertiesKeepReferences(t *testing.T) {
	doc, err := Parse(AppConfigProperties, []byte("a=${a}\nb=${c}\nc=${b}\nhome=${user.home}/x\n"))
	require.NoError(t, err)
	got := map[string]any{}
	for _, l := range doc.Leaves() {
		got[l.Key()] = l.Value
	}
	require.Equal(t, "${a}", got["\x00a"])
	require.Equal(t, "${user.home}/x", got["\x00home"])
}

func TestHashAndMediaType(t *testing.T) {
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", Hash(nil))
	require.Equal(t, "application/yaml", MediaType(KubernetesYAML))
	require.Equal(t, "application/json", MediaType(AppConfigJSON))
	require.Equal(t, "text/plain; charset=utf-8", MediaType(AppConfigEnv))
}

// TestParseRefusesNonFinite: numbers JSON cannot hold are refused as unparseable data, naming where they
// are; the projection never silently becomes empty.
func TestParseRefusesNonFinite(t *testing.T) {
	cases := []struct {
		toolchain, data, path string
		line                  int
	}{
		{AppConfigTOML, "a = 1\n[server]\nlimit = inf\n", "server.limit", 0},
		{AppConfigTOML, "x = -inf\n", "x", 0},
		{AppConfigTOML, "x = nan\n", "x", 0},
		{AppConfigYAML, "a: 1\nb:\n  - .inf\n", "b.0", 3},
		{AppConfigYAML, "x: -.Inf\n", "x", 1},
		{AppConfigYAML, "x: .nan\n", "x", 1},
		{KubernetesYAML, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: .inf\n", "data.x", 6},
		{AppConfigJSON, `{"a": {"b": [1, 1e999]}}`, "a.b.1", 0},
		{AppConfigJSON, `-1e999`, "the value", 0},
	}
	for _, c := range cases {
		_, err := Parse(c.toolchain, []byte(c.data))
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%s %q: %v", c.toolchain, c.data, err)
		require.Contains(t, pe.Msg, c.path, c.data)
		require.Contains(t, pe.Msg, "finite", c.data)
		require.Equal(t, c.line, pe.Line, c.data)
	}
	// Quoted, they are strings.
	doc, err := Parse(AppConfigYAML, []byte("x: '.inf'\n"))
	require.NoError(t, err)
	p, err := doc.Projection()
	require.NoError(t, err)
	require.JSONEq(t, `[{"ResourceType":"","ResourceName":"","Value":{"x":".inf"}}]`, string(p))
	_, err = (&Document{Resources: []Resource{{Value: math.Inf(1)}}}).Projection()
	require.Error(t, err)
}

// TestParseRefusesNonUTF8: every ToolchainType is UTF-8 text; other bytes (Latin-1 here) are refused
// with the line they are on.
func TestParseRefusesNonUTF8(t *testing.T) {
	latin1 := map[string]string{
		KubernetesYAML:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n",
		AppConfigYAML:       "a: 1\nname: caf\xe9\n",
		AppConfigJSON:       "{\"a\": 1,\n\"name\": \"caf\xe9\"}",
		AppConfigTOML:       "a = 1\nname = 'caf\xe9'\n",
		AppConfigINI:        "a = 1\nname = caf\xe9\n",
		AppConfigProperties: "a=1\nname=caf\xe9\n",
		AppConfigEnv:        "A=1\nNAME=caf\xe9\n",
		AppConfigText:       "a\ncaf\xe9\n",
	}
	for _, tc := range ToolchainTypes {
		data, ok := latin1[tc]
		require.True(t, ok, tc)
		_, err := Parse(tc, []byte(data))
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%s: %v", tc, err)
		require.Equal(t, strings.Count(data[:strings.Index(data, "\xe9")], "\n")+1, pe.Line, tc)
		require.Contains(t, pe.Msg, "UTF-8", tc)
		_, err = Parse(tc, []byte(strings.ReplaceAll(data, "\xe9", "é")))
		require.NoError(t, err, tc)
	}
}

// TestParseRefusesDuplicateKeys: a key defined twice is refused by every format with keyed maps, with a
// readable message naming both lines.
func TestParseRefusesDuplicateKeys(t *testing.T) {
	cases := []struct {
		toolchain, data string
		line            int
		msg             string
	}{
		{AppConfigJSON, "{\"a\": 1,\n \"b\": {\"x\": 1,\n  \"x\": 2}}", 3, `key "x" of b is defined twice (first at line 2)`},
		{AppConfigJSON, "{\"a\": 1,\n \"a\": 1}", 2, `key "a" of the top-level object is defined twice (first at line 1)`},
		{AppConfigJSON, "[{\"k\": 1}, {\"k\": 2, \"k\": 3}]", 1, `key "k" of 1 is defined twice`},
		{AppConfigYAML, "a: 1\nb: 2\na: 3\n", 3, `mapping key "a" already defined at line 1`},
		{KubernetesYAML, "apiVersion: v1\nkind: A\nmetadata: {name: x}\nkind: B\n", 4, `mapping key "kind" already defined at line 2`},
		{AppConfigTOML, "a = 1\na = 2\n", 2, "already defined"},
	}
	for _, c := range cases {
		_, err := Parse(c.toolchain, []byte(c.data))
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%s %q: %v", c.toolchain, c.data, err)
		require.Equal(t, c.line, pe.Line, c.data)
		require.Contains(t, pe.Msg, c.msg, c.data)
		require.NotContains(t, pe.Msg, "\n", c.data)
	}
	// The same key in different objects, and keys differing only in case, are fine.
	_, err := Parse(AppConfigJSON, []byte(`{"a": {"k": 1}, "b": {"k": 2}, "K": [{"k": 1}, {"k": 2}]}`))
	require.NoError(t, err)
	// Several YAML decoding errors stay readable, one after the other.
	_, err = Parse(AppConfigYAML, []byte("x:\n  a: 1\n  a: 2\n  b: 1\n  b: 2\n"))
	require.ErrorContains(t, err, `line 3: mapping key "a" already defined at line 2; line 5: mapping key "b" already defined at line 4`)
}

// TestEnvAssignments: AppConfig/Env is read strictly (every line blank, a comment or KEY=value) and kept
// as written: $VAR and ${VAR} are not expanded, as Properties keep ${...}.
func TestEnvAssignments(t *testing.T) {
	t.Parallel()
	data := "# comment\n" +
		"\n" +
		"  INDENTED=1\n" +
		"SPACED = two words # comment\n" +
		"export EXPORTED=x\n" +
		"export = 1\n" +
		"HASH=a#b\n" +
		"EMPTY=\n" +
		"EQ=b=c\n" +
		"REF=$HOME/${USER}\n" +
		"DQ=\"line\\none \\\"q\\\" \\\\ $A \\$B\"\n" +
		"SQ='kept \\n $A' # comment\n" +
		"MULTI=\"-----BEGIN-----\n" +
		"abc\n" +
		"-----END-----\"\n" +
		"app.name-x=dots and dashes\r\n" +
		"TWICE=1\n" +
		"TWICE=2"
	doc, err := Parse(AppConfigEnv, []byte(data))
	require.NoError(t, err)
	require.Equal(t, map[string]any{
		"INDENTED":   "1",
		"SPACED":     "two words",
		"EXPORTED":   "x",
		"export":     "1",
		"HASH":       "a#b",
		"EMPTY":      "",
		"EQ":         "b=c",
		"REF":        "$HOME/${USER}",
		"DQ":         "line\none \"q\" \\ $A \\$B",
		"SQ":         "kept \\n $A",
		"MULTI":      "-----BEGIN-----\nabc\n-----END-----",
		"app.name-x": "dots and dashes",
		"TWICE":      "2",
	}, doc.Resources[0].Value)
}
