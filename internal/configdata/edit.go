package configdata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"
)

// Tree is configuration data opened for editing. Every format is edited as YAML node trees (one per
// resource), so one set of path operations serves them all. YAML and Kubernetes/YAML data keep their
// comments and key order, and JSON its key order; the other formats are rewritten from their values
// when rendered (keys sorted; INI, Properties and Env comments are not kept).
type Tree struct {
	Toolchain string
	Resources []*TreeResource
}

// TreeResource is one resource of a Tree: Root is its value (a Kubernetes resource's mapping).
type TreeResource struct {
	Root *yaml.Node
	doc  *yaml.Node // the YAML document node holding Root, with its comments
}

// Identity is the resource's ResourceType and ResourceName as the path model names them (Kubernetes
// apiVersion/kind and [namespace/]name; empty for other formats). It reads the current tree, so an
// edit of metadata.namespace renames the resource.
func (r *TreeResource) Identity(toolchain string) (string, string) {
	if toolchain != KubernetesYAML || r.Root.Kind != yaml.MappingNode {
		return "", ""
	}
	str := func(n *yaml.Node) string {
		if n == nil || n.Kind != yaml.ScalarNode {
			return ""
		}
		return n.Value
	}
	apiVersion, kind := str(mapValue(r.Root, "apiVersion")), str(mapValue(r.Root, "kind"))
	var name, ns string
	if meta := mapValue(r.Root, "metadata"); meta != nil && meta.Kind == yaml.MappingNode {
		name, ns = str(mapValue(meta, "name")), str(mapValue(meta, "namespace"))
	}
	if ns != "" {
		name = ns + "/" + name
	}
	return apiVersion + "/" + kind, name
}

// Open parses data of toolchain into a Tree. The data must already be valid (Parse).
func Open(toolchain string, data []byte) (*Tree, error) {
	t := &Tree{Toolchain: toolchain}
	switch toolchain {
	case KubernetesYAML, AppConfigYAML, AppConfigJSON:
		docs, err := yamlDocuments(data)
		if err != nil {
			return nil, err
		}
		if len(docs) == 0 && toolchain != KubernetesYAML {
			empty := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			docs = []*yaml.Node{{Kind: yaml.DocumentNode, Content: []*yaml.Node{empty}}}
		}
		for _, d := range docs {
			t.Resources = append(t.Resources, &TreeResource{Root: d.Content[0], doc: d})
		}
		return t, nil
	}
	doc, err := Parse(toolchain, data)
	if err != nil {
		return nil, err
	}
	for _, r := range doc.Resources {
		n, err := ValueNode(r.Value)
		if err != nil {
			return nil, err
		}
		t.Resources = append(t.Resources, &TreeResource{Root: n})
	}
	return t, nil
}

// ValueNode is the YAML node of a JSON-typed value.
func ValueNode(v any) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding a value: %w", err)
	}
	return &n, nil
}

// NodeValue is the JSON-typed value of a node (maps, lists, strings, int64, float64, bools, nil).
func NodeValue(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

// Document is the tree's path model, as Parse gives it for the rendered data.
func (t *Tree) Document() (*Document, error) {
	d := &Document{Toolchain: t.Toolchain}
	for _, r := range t.Resources {
		v, err := NodeValue(r.Root)
		if err != nil {
			return nil, err
		}
		typ, name := r.Identity(t.Toolchain)
		d.Resources = append(d.Resources, Resource{Type: typ, Name: name, Value: v})
	}
	return d, nil
}

// Render writes the tree as data of its ToolchainType. A value the format cannot hold (a nested table
// in INI, say) is an *EditError.
func (t *Tree) Render() ([]byte, error) {
	switch t.Toolchain {
	case KubernetesYAML, AppConfigYAML:
		if len(t.Resources) == 0 {
			return []byte{}, nil // no resources (empty Kubernetes data): yaml.v3 cannot close an empty stream
		}
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		for _, r := range t.Resources {
			doc := r.doc
			if doc == nil {
				doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{r.Root}}
			}
			if err := enc.Encode(doc); err != nil {
				return nil, err
			}
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case AppConfigJSON:
		var b bytes.Buffer
		if err := writeJSON(&b, t.Resources[0].Root, ""); err != nil {
			return nil, err
		}
		b.WriteByte('\n')
		return b.Bytes(), nil
	}
	v, err := NodeValue(t.Resources[0].Root)
	if err != nil {
		return nil, err
	}
	switch t.Toolchain {
	case AppConfigText:
		s, ok := v.(string)
		if !ok {
			return nil, &EditError{Msg: "AppConfig/Text data is one text value"}
		}
		return []byte(s), nil
	case AppConfigTOML:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &EditError{Msg: "AppConfig/TOML data is a table"}
		}
		return toml.Marshal(m)
	case AppConfigINI:
		return renderINI(v)
	case AppConfigProperties:
		return renderProperties(v)
	case AppConfigEnv:
		return renderEnv(v)
	}
	return nil, &EditError{Msg: "unknown ToolchainType " + t.Toolchain}
}

// EditError is an edit the data cannot take: a path through a scalar, an index beyond a list, a value
// the format cannot hold.
type EditError struct{ Msg string }

func (e *EditError) Error() string { return e.Msg }

func writeJSON(b *bytes.Buffer, n *yaml.Node, indent string) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSON(b, n.Alias, indent)
	case yaml.MappingNode, yaml.SequenceNode:
		// A mapping's Content alternates keys and values; a sequence's is its elements.
		open, closing, step := "[", "]", 1
		if n.Kind == yaml.MappingNode {
			open, closing, step = "{", "}", 2
		}
		if len(n.Content) == 0 {
			b.WriteString(open + closing)
			return nil
		}
		b.WriteString(open + "\n")
		for i := 0; i < len(n.Content); i += step {
			b.WriteString(indent + "  ")
			if step == 2 {
				key, _ := json.Marshal(n.Content[i].Value)
				b.Write(key)
				b.WriteString(": ")
			}
			if err := writeJSON(b, n.Content[i+step-1], indent+"  "); err != nil {
				return err
			}
			if i+step < len(n.Content) {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + closing)
		return nil
	}
	v, err := NodeValue(n)
	if err != nil {
		return err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return &EditError{Msg: err.Error()}
	}
	b.Write(out)
	return nil
}

// scalarText is a scalar value as INI, Properties and Env hold it: text.
func scalarText(path string, v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case nil:
		return "", nil
	case map[string]any, []any:
		return "", &EditError{Msg: fmt.Sprintf("%s would hold a structured value; this format holds text values only", path)}
	}
	return fmt.Sprint(v), nil
}

func renderINI(v any) ([]byte, error) {
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, &EditError{Msg: "AppConfig/INI data is a set of keys and sections"}
	}
	var top, sections []string
	for k, e := range doc {
		if _, isSection := e.(map[string]any); isSection {
			sections = append(sections, k)
		} else {
			top = append(top, k)
		}
	}
	sort.Strings(top)
	sort.Strings(sections)
	var b strings.Builder
	writeKeys := func(prefix string, m map[string]any, keys []string) error {
		for _, k := range keys {
			s, err := scalarText(join(prefix, k), m[k])
			if err != nil {
				return err
			}
			// A value ending with a backslash is quoted too: bare, ini.v1 reads the backslash as a line
			// continuation and joins the next line to it.
			if strings.ContainsAny(s, "\n\"`") || strings.TrimSpace(s) != s || strings.ContainsAny(s, ";#") || strings.HasSuffix(s, `\`) {
				s = "`" + s + "`"
				if strings.Contains(s[1:len(s)-1], "`") {
					return &EditError{Msg: fmt.Sprintf("%s holds both a backquote and characters INI must quote", join(prefix, k))}
				}
			}
			fmt.Fprintf(&b, "%s = %s\n", k, s)
		}
		return nil
	}
	if err := writeKeys("", doc, top); err != nil {
		return nil, err
	}
	for _, name := range sections {
		m := doc[name].(map[string]any)
		keys := sortedKeys(m)
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s]\n", name)
		if err := writeKeys(name, m, keys); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}

// flatten lists the scalar values of nested maps under dotted keys, as Properties and Env hold them.
func flatten(prefix string, v any, out map[string]string) error {
	m, ok := v.(map[string]any)
	if !ok {
		s, err := scalarText(prefix, v)
		out[prefix] = s
		return err
	}
	for k, e := range m {
		if err := flatten(join(prefix, k), e, out); err != nil {
			return err
		}
	}
	return nil
}

func renderProperties(v any) ([]byte, error) {
	flat := map[string]string{}
	if err := flatten("", v, flat); err != nil {
		return nil, err
	}
	p := properties.NewProperties()
	p.DisableExpansion = true
	for _, k := range sortedKeys(flat) {
		if _, _, err := p.Set(k, flat[k]); err != nil {
			return nil, &EditError{Msg: err.Error()}
		}
	}
	var b bytes.Buffer
	if _, err := p.Write(&b, properties.UTF8); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func renderEnv(v any) ([]byte, error) {
	flat := map[string]string{}
	if err := flatten("", v, flat); err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, k := range sortedKeys(flat) {
		if !envKey.MatchString(k) {
			return nil, &EditError{Msg: fmt.Sprintf("%q is not an AppConfig/Env key (letters, digits, _, . and -, not starting with a digit)", k)}
		}
		fmt.Fprintf(&b, "%s=%s\n", k, envQuote(flat[k]))
	}
	return []byte(b.String()), nil
}

// envQuote writes a value so parseEnv reads it back as it is: bare when it holds nothing special,
// single-quoted when it holds no single quote and does not end with a backslash (\' does not close a
// single-quoted value), else double-quoted with \, " and line breaks escaped.
func envQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@,+=%", r))
	}) < 0
	switch {
	case plain:
		return s
	case !strings.Contains(s, "'") && !strings.HasSuffix(s, `\`):
		return "'" + s + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// PathSegment is one step of an edit path: a map key or list index (Key), every element or entry
// (Star), or the list elements that are maps whose MatchKey holds MatchValue.
type PathSegment struct {
	Key        string
	Star       bool
	MatchKey   string
	MatchValue string
	Match      bool
}

// Located is a node an edit path reached, with its concrete path (keys and indexes).
type Located struct {
	Path string
	Node *yaml.Node
}

// Find returns the nodes of root at path, in document order.
func Find(root *yaml.Node, path []PathSegment) []Located {
	cur := []Located{{Node: root}}
	for _, seg := range path {
		var next []Located
		for _, l := range cur {
			next = append(next, children(l, seg)...)
		}
		cur = next
	}
	return cur
}

func children(l Located, seg PathSegment) []Located {
	n := l.Node
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	var out []Located
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if seg.Star || (!seg.Match && k == seg.Key) {
				out = append(out, Located{Path: join(l.Path, k), Node: n.Content[i+1]})
			}
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			switch {
			case seg.Star:
			case seg.Match:
				v := mapValue(e, seg.MatchKey)
				if v == nil || v.Kind != yaml.ScalarNode || v.Value != seg.MatchValue {
					continue
				}
			default:
				if seg.Key != strconv.Itoa(i) {
					continue
				}
			}
			out = append(out, Located{Path: join(l.Path, strconv.Itoa(i)), Node: e})
		}
	}
	return out
}

// mapValue is the value of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Set writes value at path of root and returns the concrete paths written. A path of keys and indexes
// only creates the maps it lacks (and appends to a list at the index just past its end); a path through
// * or ?Key=value writes where it finds matches and nowhere else.
func Set(root *yaml.Node, path []PathSegment, value *yaml.Node) ([]string, error) {
	if len(path) == 0 {
		*root = *cloneNode(value)
		return []string{""}, nil
	}
	parents := Find(root, path[:len(path)-1])
	if len(parents) == 0 && exact(path) {
		var err error
		if parents, err = ensure(root, path[:len(path)-1]); err != nil {
			return nil, err
		}
	}
	last := path[len(path)-1]
	var written []string
	for _, p := range parents {
		n := p.Node
		switch {
		case n.Kind == yaml.MappingNode && !last.Match:
			if last.Star {
				for i := 1; i < len(n.Content); i += 2 {
					replaceNode(n.Content[i], value)
					written = append(written, join(p.Path, n.Content[i-1].Value))
				}
				continue
			}
			if v := mapValue(n, last.Key); v != nil {
				replaceNode(v, value)
			} else {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: last.Key}, cloneNode(value))
			}
			written = append(written, join(p.Path, last.Key))
		case n.Kind == yaml.SequenceNode:
			found := children(p, last)
			for _, c := range found {
				replaceNode(c.Node, value)
				written = append(written, c.Path)
			}
			if len(found) == 0 && !last.Star && !last.Match && last.Key == strconv.Itoa(len(n.Content)) {
				n.Content = append(n.Content, cloneNode(value))
				written = append(written, join(p.Path, last.Key))
			} else if len(found) == 0 && !last.Star && !last.Match {
				return nil, &EditError{Msg: fmt.Sprintf("%s has %d elements: index %s is beyond its end", pathOrTop(p.Path), len(n.Content), last.Key)}
			}
		case exact(path):
			return nil, &EditError{Msg: fmt.Sprintf("%s is a %s, not a map or list", pathOrTop(p.Path), kindName(n))}
		}
	}
	return written, nil
}

// ensure creates the maps of an exact path that are missing and returns the node it ends at.
func ensure(root *yaml.Node, path []PathSegment) ([]Located, error) {
	cur := Located{Node: root}
	for _, seg := range path {
		n := cur.Node
		if found := children(cur, seg); len(found) == 1 {
			cur = found[0]
			continue
		}
		if n.Kind != yaml.MappingNode {
			return nil, &EditError{Msg: fmt.Sprintf("%s is a %s: it has no %q to write under", pathOrTop(cur.Path), kindName(n), seg.Key)}
		}
		child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg.Key}, child)
		cur = Located{Path: join(cur.Path, seg.Key), Node: child}
	}
	return []Located{cur}, nil
}

// Delete removes what path reaches in root and returns the concrete paths removed.
func Delete(root *yaml.Node, path []PathSegment) []string {
	if len(path) == 0 {
		return nil
	}
	last := path[len(path)-1]
	var removed []string
	for _, p := range Find(root, path[:len(path)-1]) {
		n := p.Node
		gone := map[*yaml.Node]bool{}
		for _, c := range children(p, last) {
			gone[c.Node] = true
			removed = append(removed, c.Path)
		}
		if len(gone) == 0 {
			continue
		}
		var kept []*yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if !gone[n.Content[i+1]] {
					kept = append(kept, n.Content[i], n.Content[i+1])
				}
			}
		case yaml.SequenceNode:
			for _, e := range n.Content {
				if !gone[e] {
					kept = append(kept, e)
				}
			}
		}
		n.Content = kept
	}
	return removed
}

func exact(path []PathSegment) bool {
	for _, s := range path {
		if s.Star || s.Match {
			return false
		}
	}
	return true
}

// replaceNode puts a copy of value in dst's place, keeping dst's comments.
func replaceNode(dst, value *yaml.Node) {
	head, line, foot := dst.HeadComment, dst.LineComment, dst.FootComment
	*dst = *cloneNode(value)
	dst.HeadComment, dst.LineComment, dst.FootComment = head, line, foot
}

func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		c.Content[i] = cloneNode(e)
	}
	return &c
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	}
	return "scalar value"
}

func pathOrTop(p string) string {
	if p == "" {
		return "the top of the data"
	}
	return p
}
