package configdata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
	"github.com/pelletier/go-toml/v2"
	"gopkg.in/ini.v1"
	"gopkg.in/yaml.v3"
)

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// yamlError splits a yaml.v3 error into its line and message. yaml.v3 writes "yaml: line N: msg", or
// for decoding errors "yaml: unmarshal errors:\n  line N: msg" (one line each); the first error's
// "line N: " becomes the Line, the rest of the text is kept as written (its own "at line M" references
// included). The Line is as yaml.v3 wrote it: see yamlStreamError and yamlDecodeError.
func yamlError(err error) *ParseError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:")
	var parts []string
	for _, p := range strings.Split(msg, "\n") {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	line := 0
	if len(parts) > 0 {
		if m := yamlLine.FindStringSubmatch(parts[0]); m != nil {
			line, _ = strconv.Atoi(m[1])
			parts[0] = strings.TrimPrefix(parts[0], m[0])
		}
	}
	return &ParseError{Line: line, Msg: strings.Join(parts, "; ")}
}

// yamlParserProblems are the problems of yaml.v3's parser (as opposed to its scanner). yaml.v3 writes
// the 1-based line of a scanner problem but the 0-based line of a parser problem (the line before the
// one meant), and no line at all for either when its mark is on the first line.
var yamlParserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found undefined tag handle":             true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// yamlStreamError reports an error reading data's YAML documents with the line it is on. Parser lines
// are made 1-based; an error yaml.v3 names no line for (anything on the first line, an alias of an
// unknown anchor, a character YAML does not allow) is placed on the first line whose prefix of the data
// fails the same way.
func yamlStreamError(data []byte, err error) *ParseError {
	pe := yamlError(err)
	switch {
	case yamlParserProblems[pe.Msg]:
		pe.Line++
	case pe.Line == 0:
		pe.Line = firstFailingLine(data, func(prefix []byte) bool {
			_, perr := readYAMLStream(prefix)
			return perr != nil && perr.Error() == err.Error()
		})
	}
	pe.Line = clampLine(data, pe.Line)
	// A tab in indentation: yaml.v3 names the line, or for "a tab character that violates indentation"
	// the line where the scalar before it starts; the tab is on the first tab-indented line from there.
	if strings.Contains(pe.Msg, "cannot start any token") || strings.Contains(pe.Msg, "tab character") {
		lines := strings.Split(string(data), "\n")
		for i := pe.Line - 1; i < len(lines); i++ {
			l := lines[i]
			if strings.Contains(l[:len(l)-len(strings.TrimLeft(l, " \t"))], "\t") {
				pe.Line = i + 1
				pe.Msg += " (YAML indentation cannot use tabs)"
				break
			}
			if !strings.Contains(pe.Msg, "tab character") {
				break // "cannot start any token" is on the named line or is not about tabs
			}
		}
	}
	return pe
}

// yamlDecodeError reports an error decoding the document n. yaml.v3 names the line of some (a key
// defined twice) but not of others (a value its tag refuses, such as !!int x; a mapping key that is a
// collection; an alias inside its own anchor): those are placed on the innermost node that does not
// decode on its own.
func yamlDecodeError(n *yaml.Node, err error) *ParseError {
	pe := yamlError(err)
	if pe.Line > 0 {
		return pe
	}
	bad := undecodable(n)
	pe.Line = bad.Line
	if strings.HasPrefix(pe.Msg, "invalid map key") {
		pe.Msg = "a mapping key must be a scalar, not a sequence or mapping"
	}
	return pe
}

// undecodable is the innermost node of n (which does not decode) that does not decode on its own; a
// mapping failing for a key that is a collection gives that key.
func undecodable(n *yaml.Node) *yaml.Node {
	for _, c := range n.Content {
		var v any
		if c.Decode(&v) != nil {
			return undecodable(c)
		}
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind == yaml.SequenceNode || k.Kind == yaml.MappingNode {
				return n.Content[i]
			}
		}
	}
	return n
}

// yamlDocuments decodes a YAML stream into its documents' nodes (empty documents skipped).
func yamlDocuments(data []byte) ([]*yaml.Node, error) {
	docs, err := readYAMLStream(data)
	if err != nil {
		return nil, yamlStreamError(data, err)
	}
	return docs, nil
}

// readYAMLStream is yamlDocuments with yaml.v3's own errors.
func readYAMLStream(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			continue
		}
		docs = append(docs, &n)
	}
}

func decodeNode(n *yaml.Node) (any, error) {
	if line, path, f, found := nonFiniteNode(n, ""); found {
		return nil, &ParseError{Line: line, Msg: nonFiniteMsg("", path, f)}
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, yamlDecodeError(n, err)
	}
	return normalize(v), nil
}

// nonFiniteNode finds a float scalar (.inf, .nan) of a YAML tree, with its line and path, so that the
// refusal Parse would make names the line.
func nonFiniteNode(n *yaml.Node, path string) (int, string, float64, bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if line, p, f, ok := nonFiniteNode(c, path); ok {
				return line, p, f, ok
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if line, p, f, ok := nonFiniteNode(c, join(path, strconv.Itoa(i))); ok {
				return line, p, f, ok
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if line, p, f, ok := nonFiniteNode(n.Content[i+1], join(path, n.Content[i].Value)); ok {
				return line, p, f, ok
			}
		}
	case yaml.ScalarNode:
		var f float64
		if n.ShortTag() == "!!float" && n.Decode(&f) == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return n.Line, path, f, true
		}
	}
	return 0, "", 0, false
}

func parseYAML(data []byte) ([]Resource, error) {
	docs, err := yamlDocuments(data)
	if err != nil {
		return nil, err
	}
	if len(docs) > 1 {
		return nil, &ParseError{Line: docs[1].Line, Msg: "AppConfig/YAML holds one document; this is a second one"}
	}
	var v any = map[string]any{}
	if len(docs) == 1 {
		if v, err = decodeNode(docs[0]); err != nil {
			return nil, err
		}
	}
	return []Resource{{Value: v}}, nil
}

// parseKubernetes reads a stream of resources, each a mapping with apiVersion, kind and metadata.name.
func parseKubernetes(data []byte) ([]Resource, error) {
	docs, err := yamlDocuments(data)
	if err != nil {
		return nil, err
	}
	out := make([]Resource, 0, len(docs))
	seen := map[string]int{}
	for _, d := range docs {
		v, err := decodeNode(d)
		if err != nil {
			return nil, err
		}
		line := d.Content[0].Line
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &ParseError{Line: line, Msg: "a Kubernetes resource must be a mapping"}
		}
		apiVersion, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if apiVersion == "" || kind == "" || name == "" {
			return nil, &ParseError{Line: line, Msg: "a Kubernetes resource needs apiVersion, kind and metadata.name"}
		}
		if ns, _ := meta["namespace"].(string); ns != "" {
			name = ns + "/" + name
		}
		r := Resource{Type: apiVersion + "/" + kind, Name: name, Value: m}
		if first, dup := seen[r.Key()]; dup {
			return nil, &ParseError{Line: line, Msg: fmt.Sprintf("resource %s is defined twice (first at line %d)", r.Key(), first)}
		}
		seen[r.Key()] = line
		out = append(out, r)
	}
	return out, nil
}

func parseJSON(data []byte) ([]Resource, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, &ParseError{Line: lineOf(data, se.Offset), Msg: se.Error()}
		case errors.As(err, &te):
			return nil, &ParseError{Line: lineOf(data, te.Offset), Msg: te.Error()}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, &ParseError{Line: lineOf(data, int64(len(data))), Msg: "unexpected end of JSON"}
		}
		return nil, &ParseError{Msg: err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &ParseError{Line: lineOf(data, dec.InputOffset()), Msg: "more than one JSON value"}
	}
	if err := jsonDuplicateKey(json.NewDecoder(bytes.NewReader(data)), data, ""); err != nil {
		return nil, err
	}
	return []Resource{{Value: normalize(v)}}, nil
}

// jsonDuplicateKey refuses an object naming a key twice, as the YAML and TOML parsers do (encoding/json
// would silently keep the last value). It reads the next value of dec, which holds valid JSON.
func jsonDuplicateKey(dec *json.Decoder, data []byte, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return nil // Decode has accepted the data; nothing more to say
	}
	switch tok {
	case json.Delim('{'):
		keys := map[string]int{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil
			}
			k, _ := kt.(string)
			line := lineOf(data, dec.InputOffset())
			if first, dup := keys[k]; dup {
				where := "the top-level object"
				if path != "" {
					where = path
				}
				return &ParseError{Line: line, Msg: fmt.Sprintf("key %q of %s is defined twice (first at line %d)", k, where, first)}
			}
			keys[k] = line
			if err := jsonDuplicateKey(dec, data, join(path, k)); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := jsonDuplicateKey(dec, data, join(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	default:
		return nil // a scalar
	}
	_, _ = dec.Token() // the closing delimiter
	return nil
}

func parseTOML(data []byte) ([]Resource, error) {
	var v map[string]any
	if err := toml.Unmarshal(data, &v); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, &ParseError{Line: row, Msg: strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, &ParseError{Msg: err.Error()}
	}
	if v == nil {
		v = map[string]any{}
	}
	return []Resource{{Value: normalize(v)}}, nil
}

var iniOptions = ini.LoadOptions{AllowBooleanKeys: false, SpaceBeforeInlineComment: true}

func parseINI(data []byte) ([]Resource, error) {
	f, err := ini.LoadSources(iniOptions, data)
	if err != nil {
		return nil, iniError(data, err)
	}
	doc := map[string]any{}
	for _, sec := range f.Sections() {
		target := doc
		if sec.Name() != ini.DefaultSection {
			m := map[string]any{}
			doc[sec.Name()] = m
			target = m
		}
		for _, k := range sec.Keys() {
			target[k.Name()] = k.Value()
		}
	}
	return []Resource{{Value: doc}}, nil
}

// iniUnclosed is ini.v1's message for a """ or ` value never closed: from the value's first line to the
// last line read, which differs between the data and its prefixes.
var iniUnclosed = regexp.MustCompile(`^missing closing key quote from ("(?:[^"\\]|\\.)*") to `)

// iniError reports an ini.v1 error with its line. ini.v1 names no line, so the line is the first whose
// prefix of the data fails the same way (the format is read line by line, so this is exact).
func iniError(data []byte, err error) *ParseError {
	kind := func(err error) string {
		if m := iniUnclosed.FindStringSubmatch(err.Error()); m != nil {
			return m[1]
		}
		return err.Error()
	}
	want := kind(err)
	line := firstFailingLine(data, func(prefix []byte) bool {
		_, perr := ini.LoadSources(iniOptions, prefix)
		return perr != nil && kind(perr) == want
	})
	msg := strings.TrimSpace(err.Error())
	if m := iniUnclosed.FindStringSubmatch(msg); m != nil {
		msg = "a value opened with \"\"\" or ` is never closed"
	}
	return &ParseError{Line: line, Msg: msg}
}

var propertiesLine = regexp.MustCompile(`^Line (\d+): `)

func parseProperties(data []byte) ([]Resource, error) {
	// Kept as written: ${...} references are the reader's to expand (a=${a} is valid data).
	p, err := (&properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}).LoadBytes(data)
	if err != nil {
		// The library writes "properties: Line N: msg".
		line := 0
		msg := strings.TrimPrefix(err.Error(), "properties: ")
		if m := propertiesLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = strings.TrimPrefix(msg, m[0])
		}
		if strings.HasPrefix(msg, `"`) {
			// The parser met a value where a key belongs: the line starts with = or :.
			msg = "a value without a key: " + msg
		}
		return nil, &ParseError{Line: line, Msg: msg}
	}
	doc := map[string]any{}
	for _, k := range p.Keys() {
		v, _ := p.Get(k)
		setDotted(doc, k, v)
	}
	return []Resource{{Value: doc}}, nil
}

// setDotted stores a dotted property key as nested maps (a.b.c=1 is at path a.b.c); a key that clashes
// with another's nesting stays whole at the top level.
func setDotted(doc map[string]any, key string, v string) {
	parts := strings.Split(key, ".")
	m := doc
	for i, p := range parts {
		if i == len(parts)-1 {
			if _, isMap := m[p].(map[string]any); isMap {
				doc[key] = v
				return
			}
			m[p] = v
			return
		}
		next, ok := m[p]
		if !ok {
			n := map[string]any{}
			m[p] = n
			m = n
			continue
		}
		nm, isMap := next.(map[string]any)
		if !isMap {
			doc[key] = v
			return
		}
		m = nm
	}
}

func parseText(data []byte) ([]Resource, error) {
	// Parse has checked that the data is UTF-8, as for every ToolchainType.
	// Text has no paths: the resource's value is the text itself, one leaf.
	return []Resource{{Value: string(data)}}, nil
}
