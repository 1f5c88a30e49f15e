package function

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/listquery"
)

// Value is one value a reading function found.
type Value struct {
	ResourceType string `json:"ResourceType"`
	ResourceName string `json:"ResourceName"`
	Path         string `json:"Path"`
	Value        any    `json:"Value"`
}

// Path is one path a function lists.
type Path struct {
	ResourceType string `json:"ResourceType"`
	ResourceName string `json:"ResourceName"`
	Path         string `json:"Path"`
}

// Validation is what a validating function returns: whether the data passed, and why not.
type Validation struct {
	Passed  bool     `json:"Passed"`
	Details []string `json:"Details"`
}

// call is a Call running over one Tree: the resources WhereResource selects.
type call struct {
	*Call
	tree      *configdata.Tree
	resources []*configdata.TreeResource
}

// Run applies the call to tree (only to the resources WhereResource selects) and returns its output: a
// list of Values, Paths or resources, a Validation, or nil for a mutating function (the tree is the
// result). An edit the data cannot take is 422 Unprocessable.
func (c *Call) Run(tree *configdata.Tree) (any, error) {
	x := &call{Call: c, tree: tree}
	for _, r := range tree.Resources {
		if c.where.Match(resourceAttrs(tree.Toolchain, r)) {
			x.resources = append(x.resources, r)
		}
	}
	out, err := c.Function.run(x)
	if ee, ok := err.(*configdata.EditError); ok {
		return nil, apierr.Unprocessable("%s cannot be applied to this data: %s", c.FunctionName, ee.Msg)
	}
	return out, err
}

func resourceAttrs(toolchain string, r *configdata.TreeResource) listquery.Attributes {
	typ, name := r.Identity(toolchain)
	a := listquery.Attributes{"ResourceType": typ, "ResourceName": name, "Kind": "", "APIVersion": "", "Name": name, "Namespace": ""}
	if i := strings.LastIndex(typ, "/"); i >= 0 {
		a["APIVersion"], a["Kind"] = typ[:i], typ[i+1:]
	}
	if ns, n, ok := strings.Cut(name, "/"); ok {
		a["Namespace"], a["Name"] = ns, n
	}
	return a
}

// ParsePath reads a path argument in the where language's form: keys and indexes joined by dots, *
// for every element, ?Key=value for the list elements whose Key is value, 'quoted' keys holding dots
// or slashes (metadata.labels.'app.kubernetes.io/name'). The empty path is the whole value.
func ParsePath(src string) ([]configdata.PathSegment, error) {
	if src == "" {
		return nil, nil
	}
	segs, err := listquery.ParsePath(src)
	if err != nil {
		return nil, fmt.Errorf("the path %q is not valid: %w", src, err)
	}
	out := make([]configdata.PathSegment, len(segs))
	for i, s := range segs {
		switch {
		case s.Star:
			out[i] = configdata.PathSegment{Star: true}
		case s.Match != nil:
			v := s.Match.Value.Str
			switch s.Match.Value.Kind {
			case listquery.LitInt:
				v = fmt.Sprint(s.Match.Value.Int)
			case listquery.LitBool:
				v = fmt.Sprint(s.Match.Value.Bool)
			}
			out[i] = configdata.PathSegment{Match: true, MatchKey: s.Match.Key, MatchValue: v}
		default:
			out[i] = configdata.PathSegment{Key: s.Name}
		}
	}
	return out, nil
}

// path reads a path argument (checked by Bind).
func (x *call) path(name string) []configdata.PathSegment {
	p, _ := ParsePath(x.str(name))
	return p
}

func (x *call) find(segs []configdata.PathSegment) []Value {
	var out []Value
	for _, r := range x.resources {
		typ, name := r.Identity(x.tree.Toolchain)
		for _, l := range configdata.Find(r.Root, segs) {
			v, err := configdata.NodeValue(l.Node)
			if err != nil {
				continue
			}
			out = append(out, Value{ResourceType: typ, ResourceName: name, Path: l.Path, Value: v})
		}
	}
	return out
}

func (x *call) set(segs []configdata.PathSegment, value any) error {
	n, err := configdata.ValueNode(value)
	if err != nil {
		return err
	}
	for _, r := range x.resources {
		if _, err := configdata.Set(r.Root, segs, n); err != nil {
			return err
		}
	}
	return nil
}

// setIn writes value at path under each of the nodes (a map each), creating the maps the path lacks.
func setIn(nodes []configdata.Located, path string, value any) error {
	segs, err := ParsePath(path)
	if err != nil {
		return err
	}
	n, err := configdata.ValueNode(value)
	if err != nil {
		return err
	}
	for _, l := range nodes {
		if _, err := configdata.Set(l.Node, segs, n); err != nil {
			return err
		}
	}
	return nil
}

// mapping is a fresh empty map node.
func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }
