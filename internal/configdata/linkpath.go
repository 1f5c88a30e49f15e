package configdata

import "fmt"

// NamedPath is a value a Link reads from its upstream (To) Unit: the value at Path (a path expression: keys,
// list indexes, * and ?Key=value) of the resources of ResourceType (every resource when empty; other
// ToolchainTypes than Kubernetes/YAML have one resource, with an empty type). Name pairs it with the
// DownstreamPath of the same Name; unnamed ones pair by position.
type NamedPath struct {
	Name         string `json:"Name"`
	ResourceType string `json:"ResourceType"`
	Path         string `json:"Path"`
}

// PathExpression is where a Link writes into its downstream (From) Unit: Path of the resource ResourceType
// ResourceName (both empty for data other than Kubernetes/YAML; an empty ResourceName with a ResourceType is
// every resource of that type). Name pairs it with the UpstreamPath of the same Name; unnamed ones pair by
// position. Required says that the downstream needs the value: an upstream that does not provide it is
// reported in the Unit's LinkFindings and NeededPaths.
type PathExpression struct {
	Name         string `json:"Name"`
	ResourceType string `json:"ResourceType"`
	ResourceName string `json:"ResourceName"`
	Path         string `json:"Path"`
	Required     bool   `json:"Required"`
}

// LinkPair pairs an UpstreamPath (index into a Link's UpstreamPaths) with the DownstreamPath it fills.
type LinkPair struct{ Upstream, Downstream int }

// PairLinkPaths pairs every DownstreamPath with one UpstreamPath: by Name when it has one, else by position
// among the unnamed ones. Names are unique in each list. An error names the entry that does not pair
// ("DownstreamPaths.1") and why.
func PairLinkPaths(up []NamedPath, down []PathExpression) ([]LinkPair, error) {
	named := map[string]int{}
	var unnamed []int
	for i, p := range up {
		if p.Name == "" {
			unnamed = append(unnamed, i)
			continue
		}
		if _, dup := named[p.Name]; dup {
			return nil, &PairError{Field: fmt.Sprintf("UpstreamPaths.%d.Name", i), Msg: fmt.Sprintf("the Name %q is given twice", p.Name)}
		}
		named[p.Name] = i
	}
	seen := map[string]bool{}
	next := 0
	pairs := make([]LinkPair, 0, len(down))
	for i, p := range down {
		if p.Name != "" {
			if seen[p.Name] {
				return nil, &PairError{Field: fmt.Sprintf("DownstreamPaths.%d.Name", i), Msg: fmt.Sprintf("the Name %q is given twice", p.Name)}
			}
			seen[p.Name] = true
			u, ok := named[p.Name]
			if !ok {
				return nil, &PairError{Field: fmt.Sprintf("DownstreamPaths.%d.Name", i), Msg: fmt.Sprintf("no UpstreamPath is named %q to pair with", p.Name)}
			}
			pairs = append(pairs, LinkPair{Upstream: u, Downstream: i})
			continue
		}
		if next >= len(unnamed) {
			return nil, &PairError{Field: fmt.Sprintf("DownstreamPaths.%d", i), Msg: "no unnamed UpstreamPath pairs with it (unnamed paths pair by position); add one or give both the same Name"}
		}
		pairs = append(pairs, LinkPair{Upstream: unnamed[next], Downstream: i})
		next++
	}
	if next < len(unnamed) {
		return nil, &PairError{Field: fmt.Sprintf("UpstreamPaths.%d", unnamed[next]), Msg: "no unnamed DownstreamPath pairs with it (unnamed paths pair by position); add one or give both the same Name"}
	}
	for i, p := range up {
		if p.Name != "" && !seen[p.Name] {
			return nil, &PairError{Field: fmt.Sprintf("UpstreamPaths.%d.Name", i), Msg: fmt.Sprintf("no DownstreamPath is named %q to pair with", p.Name)}
		}
	}
	return pairs, nil
}

// PairError says which path of a Link does not pair, and why.
type PairError struct{ Field, Msg string }

func (e *PairError) Error() string { return e.Field + ": " + e.Msg }
