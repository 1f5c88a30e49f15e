package configdata

import (
	"encoding/json"
	"sort"

	"github.com/pmezard/go-difflib/difflib"
)

// Change kinds of a path between two versions of data.
const (
	Added   = "Added"
	Removed = "Removed"
	Changed = "Changed"
)

// Change is one path whose value differs between two versions.
type Change struct {
	ResourceType string
	ResourceName string
	Path         string
	Change       string
	Old          any
	New          any
}

// Diff is the difference between two versions of data: a unified text diff and the changed paths.
type Diff struct {
	Unified string
	Changes []Change
}

// Compare diffs two versions of data of one ToolchainType (nil documents are empty data).
func Compare(fromText, toText []byte, from, to *Document) Diff {
	unified, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(string(fromText)), B: difflib.SplitLines(string(toText)),
		FromFile: "from", ToFile: "to", Context: 3,
	})
	type leafAt struct {
		typ, name string
		leaf      Leaf
	}
	index := func(d *Document) map[string]leafAt {
		out := map[string]leafAt{}
		if d == nil {
			return out
		}
		names := map[string][2]string{}
		for _, r := range d.Resources {
			names[r.Key()] = [2]string{r.Type, r.Name}
		}
		for _, l := range d.Leaves() {
			tn := names[l.Resource]
			out[l.Key()] = leafAt{tn[0], tn[1], l}
		}
		return out
	}
	before, after := index(from), index(to)
	var changes []Change
	for k, a := range after {
		b, ok := before[k]
		switch {
		case !ok:
			changes = append(changes, Change{a.typ, a.name, a.leaf.Path, Added, nil, a.leaf.Value})
		case encode(b.leaf.Value) != encode(a.leaf.Value):
			changes = append(changes, Change{a.typ, a.name, a.leaf.Path, Changed, b.leaf.Value, a.leaf.Value})
		}
	}
	for k, b := range before {
		if _, ok := after[k]; !ok {
			changes = append(changes, Change{b.typ, b.name, b.leaf.Path, Removed, b.leaf.Value, nil})
		}
	}
	sort.Slice(changes, func(i, j int) bool {
		a, b := changes[i], changes[j]
		if a.ResourceType+"/"+a.ResourceName != b.ResourceType+"/"+b.ResourceName {
			return a.ResourceType+"/"+a.ResourceName < b.ResourceType+"/"+b.ResourceName
		}
		return a.Path < b.Path
	})
	if changes == nil {
		changes = []Change{}
	}
	return Diff{Unified: unified, Changes: changes}
}

func encode(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
