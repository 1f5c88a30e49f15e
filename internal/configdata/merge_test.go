package configdata_test

import (
	"encoding/json"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/configdata"
)

func parse(t testing.TB, toolchain, data string) *configdata.Document {
	t.Helper()
	if data == "" && toolchain == "" {
		return nil
	}
	doc, err := configdata.Parse(toolchain, []byte(data))
	require.NoError(t, err, data)
	return doc
}

// merged runs Merge over YAML data and answers the result's data and conflicts ("reason path" each).
func merged(t *testing.T, toolchain string, base *string, theirs, ours string, opts configdata.MergeOptions) (string, []string, []configdata.MergeConflict) {
	t.Helper()
	var b *configdata.Document
	if base != nil {
		b = parse(t, toolchain, *base)
	}
	tree, err := configdata.Open(toolchain, []byte(ours))
	require.NoError(t, err)
	res, err := configdata.Merge(b, parse(t, toolchain, theirs), tree, opts)
	require.NoError(t, err)
	out, err := tree.Render()
	require.NoError(t, err)
	var reasons []string
	for _, c := range res.Conflicts {
		reasons = append(reasons, c.Reason+" "+c.Path)
	}
	return string(out), reasons, res.Conflicts
}

func str(s string) *string { return &s }

func TestMergeRules(t *testing.T) {
	const y = configdata.AppConfigYAML
	cases := []struct {
		name                string
		base                *string
		theirs, ours        string
		subtract            bool
		want                string
		conflicts           []string
		withholdProtectedAt string
	}{
		{name: "only upstream changed", base: str("a: 1\nb: 2\n"), theirs: "a: 1\nb: 3\n", ours: "a: 1\nb: 2\n", want: "a: 1\nb: 3\n"},
		{name: "only downstream changed", base: str("a: 1\nb: 2\n"), theirs: "a: 1\nb: 2\n", ours: "a: 5\nb: 2\n", want: "a: 5\nb: 2\n"},
		{name: "both, same value", base: str("a: 1\n"), theirs: "a: 2\n", ours: "a: 2\n", want: "a: 2\n"},
		{name: "both, different values", base: str("a: 1\n"), theirs: "a: 2\n", ours: "a: 3\n", want: "a: 3\n", conflicts: []string{"UnresolvedPath a"}},
		{name: "disjoint changes", base: str("a: 1\nb: 1\n"), theirs: "a: 2\nb: 1\n", ours: "a: 1\nb: 2\n", want: "a: 2\nb: 2\n"},
		{name: "added upstream", base: str("a: 1\n"), theirs: "a: 1\nn:\n  x: 1\n", ours: "a: 1\n", want: "a: 1\nn:\n  x: 1\n"},
		{name: "deleted downstream, changed upstream", base: str("a: 1\nb: 1\n"), theirs: "a: 1\nb: 2\n", ours: "a: 1\n", want: "a: 1\n",
			conflicts: []string{"DeleteShadowed b"}},
		{name: "deleted upstream, subtraction off", base: str("a: 1\nb: 1\n"), theirs: "a: 1\n", ours: "a: 1\nb: 1\n", want: "a: 1\nb: 1\n",
			conflicts: []string{"Subtracted b"}},
		{name: "deleted upstream, subtraction on", base: str("a: 1\nb: 1\n"), theirs: "a: 1\n", ours: "a: 1\nb: 1\n", subtract: true, want: "a: 1\n"},
		{name: "deleted upstream, changed downstream", base: str("a: 1\nb: 1\n"), theirs: "a: 1\n", ours: "a: 1\nb: 2\n", subtract: true,
			want: "a: 1\nb: 2\n", conflicts: []string{"UnresolvedPath b"}},
		{name: "type change upstream is taken whole", base: str("a:\n  x: 1\n  y: 2\n"), theirs: "a: flat\n", ours: "a:\n  x: 1\n  y: 2\n", want: "a: flat\n"},
		{name: "type change against a downstream change", base: str("a:\n  x: 1\n"), theirs: "a: flat\n", ours: "a:\n  x: 2\n", want: "a:\n  x: 2\n",
			conflicts: []string{"UnresolvedPath a"}},
		{name: "lists by index", base: str("l: [1, 2, 3]\n"), theirs: "l: [1, 9, 3, 4]\n", ours: "l: [0, 2, 3]\n", want: "l: [0, 9, 3, 4]\n"},
		{name: "list shortened upstream", base: str("l: [1, 2, 3]\n"), theirs: "l: [1]\n", ours: "l: [1, 2, 3]\n", subtract: true, want: "l: [1]\n"},
		{name: "first merge", base: nil, theirs: "a: 1\nb: 2\nc: 3\n", ours: "a: 1\nb: 5\n", want: "a: 1\nb: 5\nc: 3\n", conflicts: []string{"UnresolvedPath b"}},
		{name: "protected path", base: str("a: 1\nb: 1\n"), theirs: "a: 2\nb: 2\n", ours: "a: 1\nb: 1\n", withholdProtectedAt: "b", want: "a: 2\nb: 1\n",
			conflicts: []string{"ProtectedPath b"}},
		{name: "protected path both sides changed", base: str("a: 1\nb: 1\n"), theirs: "a: 1\nb: 2\n", ours: "a: 1\nb: 3\n", withholdProtectedAt: "b",
			want: "a: 1\nb: 3\n", conflicts: []string{"ProtectedPath b"}},
		{name: "protection below a replaced container", base: str("m:\n  k: 1\n"), theirs: "m: flat\n", ours: "m:\n  k: 1\n", withholdProtectedAt: "m.k",
			want: "m:\n  k: 1\n", conflicts: []string{"ProtectedPath m"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := configdata.MergeOptions{Subtract: c.subtract}
			if c.withholdProtectedAt != "" {
				opts.Withhold = func(_, _, path string) (string, map[string]string) {
					if path == c.withholdProtectedAt || strings.HasPrefix(path, c.withholdProtectedAt+".") {
						return configdata.ConflictProtectedPath, nil
					}
					return "", nil
				}
			}
			out, conflicts, _ := merged(t, y, c.base, c.theirs, c.ours, opts)
			require.Equal(t, leaves(t, y, []byte(c.want)), leaves(t, y, []byte(out)), out)
			require.Equal(t, c.conflicts, conflicts)
		})
	}
}

func TestMergeConflictValuesAndGuards(t *testing.T) {
	_, _, cs := merged(t, configdata.AppConfigYAML, str("a: 1\nb: x\n"), "a: 2\nb: y\n", "a: 3\nb: x\n", configdata.MergeOptions{
		Withhold: func(_, _, path string) (string, map[string]string) {
			if path == "b" {
				return configdata.ConflictGuarded, map[string]string{"owner": "sre"}
			}
			return "", nil
		}})
	require.Len(t, cs, 2)
	require.Equal(t, configdata.MergeConflict{Path: "a", Reason: configdata.ConflictUnresolvedPath, Details: cs[0].Details,
		Base: json.RawMessage("1"), Theirs: json.RawMessage("2"), Ours: json.RawMessage("3")}, cs[0])
	require.Equal(t, configdata.ConflictGuarded, cs[1].Reason)
	require.Equal(t, map[string]string{"owner": "sre"}, cs[1].Guards)
	require.Equal(t, `"y"`, string(cs[1].Theirs))
}

// TestMergeKeepsOursComments: upstream's changes are written into ours' Tree, so its comments and key
// order survive; resources are matched by type and name, added and (with subtraction) removed whole.
func TestMergeKubernetesResources(t *testing.T) {
	const k = configdata.KubernetesYAML
	base := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"1\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\ndata: {}\n"
	theirs := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"2\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\ndata: {}\n"
	ours := "# ours\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  z: local # kept\n  x: \"1\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\ndata: {}\n"
	out, conflicts, _ := merged(t, k, &base, theirs, ours, configdata.MergeOptions{})
	require.Equal(t, []string{"Subtracted "}, conflicts)
	require.Contains(t, out, "# ours")
	require.Contains(t, out, "z: local # kept\n  x: \"2\"")
	require.Contains(t, out, "name: new")
	require.Contains(t, out, "name: gone")
	out, conflicts, _ = merged(t, k, &base, theirs, ours, configdata.MergeOptions{Subtract: true})
	require.Empty(t, conflicts)
	require.NotContains(t, out, "name: gone")
}

// randomValue makes a small random JSON value.
func randomValue(r *rand.Rand, depth int) any {
	switch n := r.Intn(10); {
	case depth > 2 || n < 4:
		switch r.Intn(4) {
		case 0:
			return int64(r.Intn(5))
		case 1:
			return "s" + strconv.Itoa(r.Intn(4))
		case 2:
			return r.Intn(2) == 0
		}
		return nil
	case n < 8:
		m := map[string]any{}
		for i := r.Intn(4); i > 0; i-- {
			m["k"+strconv.Itoa(r.Intn(5))] = randomValue(r, depth+1)
		}
		return m
	default:
		var l []any
		for i := r.Intn(4); i > 0; i-- {
			l = append(l, randomValue(r, depth+1))
		}
		if l == nil {
			l = []any{}
		}
		return l
	}
}

// mutate changes some of v at random.
func mutate(r *rand.Rand, v any, depth int) any {
	if r.Intn(4) == 0 {
		return randomValue(r, depth)
	}
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			switch r.Intn(5) {
			case 0: // deleted
			case 1:
				out[k] = mutate(r, e, depth+1)
			default:
				out[k] = e
			}
		}
		if r.Intn(3) == 0 {
			out["k"+strconv.Itoa(r.Intn(6))] = randomValue(r, depth+1)
		}
		return out
	case []any:
		out := []any{}
		for _, e := range t {
			if r.Intn(6) > 0 {
				out = append(out, mutate(r, e, depth+1))
			}
		}
		if r.Intn(3) == 0 {
			out = append(out, randomValue(r, depth+1))
		}
		return out
	}
	return v
}

func jsonDoc(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func mergeJSON(t testing.TB, base, theirs, ours string, opts configdata.MergeOptions) (string, configdata.MergeResult) {
	t.Helper()
	const j = configdata.AppConfigJSON
	tree, err := configdata.Open(j, []byte(ours))
	require.NoError(t, err)
	res, err := configdata.Merge(parse(t, j, base), parse(t, j, theirs), tree, opts)
	require.NoError(t, err)
	out, err := tree.Render()
	require.NoError(t, err)
	return string(out), res
}

func sameData(t testing.TB, want, got string) {
	t.Helper()
	w, g := parse(t, configdata.AppConfigJSON, want), parse(t, configdata.AppConfigJSON, got)
	wj, _ := json.Marshal(w.Resources)
	gj, _ := json.Marshal(g.Resources)
	require.JSONEq(t, string(wj), string(gj), "want %s\ngot %s", want, got)
}

// FuzzMerge checks Merge's properties on random data: theirs unchanged leaves ours as it is; ours unchanged
// becomes theirs (with subtraction, nothing withheld) without conflicts; and merging the same upstream
// again changes nothing.
func FuzzMerge(f *testing.F) {
	for _, seed := range []int64{1, 2, 3, 42, 1000} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		r := rand.New(rand.NewSource(seed))
		baseV := map[string]any{"root": randomValue(r, 0)}
		base := jsonDoc(t, baseV)
		// The data stays an object: the merge is of paths, not of what a format holds at its top.
		theirs := jsonDoc(t, map[string]any{"root": mutate(r, baseV["root"], 1)})
		ours := jsonDoc(t, map[string]any{"root": mutate(r, baseV["root"], 1)})

		out, res := mergeJSON(t, base, base, ours, configdata.MergeOptions{})
		sameData(t, ours, out)
		require.Empty(t, res.Conflicts)

		out, res = mergeJSON(t, base, theirs, base, configdata.MergeOptions{Subtract: true})
		sameData(t, theirs, out)
		require.Empty(t, res.Conflicts, "base %s theirs %s", base, theirs)

		result, _ := mergeJSON(t, base, theirs, ours, configdata.MergeOptions{Subtract: r.Intn(2) == 0})
		again, res := mergeJSON(t, theirs, theirs, result, configdata.MergeOptions{})
		sameData(t, result, again)
		require.Empty(t, res.Conflicts)
	})
}

// TestPutValue: applying a conflict writes the upstream value (JSON) at its path, deletes the path for a
// nil value, adds a whole resource, and refuses a path of a resource the data lacks.
func TestPutValue(t *testing.T) {
	const k = configdata.KubernetesYAML
	tree := open(t, k, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"1\" # kept\n  y: \"2\"\n")
	require.NoError(t, configdata.PutValue(tree, "v1/ConfigMap", "a", "data.x", json.RawMessage(`"9"`)))
	require.NoError(t, configdata.PutValue(tree, "v1/ConfigMap", "a", "data.y", nil))
	require.NoError(t, configdata.PutValue(tree, "v1/ConfigMap", "b", "",
		json.RawMessage(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}, "data": {"n": 12345678901234}}`)))
	out := string(render(t, tree))
	require.Contains(t, out, `x: "9" # kept`)
	require.NotContains(t, out, "y:")
	require.Contains(t, out, `"n": 12345678901234`)
	var ee *configdata.EditError
	require.ErrorAs(t, configdata.PutValue(tree, "v1/ConfigMap", "c", "data.x", json.RawMessage(`1`)), &ee)
}
