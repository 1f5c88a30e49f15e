// Package configdata understands the configuration a Unit holds: it checks data against its
// ToolchainType with a well-kept parser per format, and gives every format one path model (resources,
// and dot-separated paths of map keys and array indexes to scalar leaves) that where_data, mutation
// sources and diffs share. The data itself is stored exactly as written; what this package derives
// from it (the projection) is for querying only.
package configdata

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hubd/hubd/internal/apierr"
)

// The ToolchainTypes the API accepts.
const (
	KubernetesYAML      = "Kubernetes/YAML"
	AppConfigProperties = "AppConfig/Properties"
	AppConfigYAML       = "AppConfig/YAML"
	AppConfigTOML       = "AppConfig/TOML"
	AppConfigINI        = "AppConfig/INI"
	AppConfigJSON       = "AppConfig/JSON"
	AppConfigEnv        = "AppConfig/Env"
	AppConfigText       = "AppConfig/Text"
)

// ToolchainTypes lists them in a stable order.
var ToolchainTypes = []string{KubernetesYAML, AppConfigProperties, AppConfigYAML, AppConfigTOML, AppConfigINI, AppConfigJSON, AppConfigEnv, AppConfigText}

// Valid reports whether t is a known ToolchainType.
func Valid(t string) bool {
	for _, k := range ToolchainTypes {
		if k == t {
			return true
		}
	}
	return false
}

// CheckToolchain returns a Validation error on the ToolchainType field, with description, unless t is a
// known ToolchainType.
func CheckToolchain(t, description string) error {
	if Valid(t) {
		return nil
	}
	return apierr.Validation(fmt.Sprintf("ToolchainType %q is not one of %v", t, ToolchainTypes),
		apierr.Item{Item: "ToolchainType", Description: description})
}

// sortedKeys lists a map's keys in order (in one allocation: walk runs on every map of every write).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// MediaType is the Content-Type a Unit's data is served with.
func MediaType(toolchain string) string {
	switch toolchain {
	case KubernetesYAML, AppConfigYAML:
		return "application/yaml"
	case AppConfigJSON:
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// Hash is the DataHash of data: lowercase hex SHA-256.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ParseError is data that does not parse for its ToolchainType.
type ParseError struct {
	Toolchain string
	Line      int // 1-based; 0 when the parser does not say
	Msg       string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("the data is not valid %s: line %d: %s", e.Toolchain, e.Line, e.Msg)
	}
	return fmt.Sprintf("the data is not valid %s: %s", e.Toolchain, e.Msg)
}

// Resource is one addressable part of the data: a Kubernetes resource (Type apiVersion/kind, Name
// [namespace/]name), or the whole document of other types (Type and Name empty).
type Resource struct {
	Type  string `json:"ResourceType"`
	Name  string `json:"ResourceName"`
	Value any    `json:"Value"`
}

// Document is parsed configuration data.
type Document struct {
	Toolchain string
	Resources []Resource
}

// Parse checks data for toolchain and returns its path model.
func Parse(toolchain string, data []byte) (*Document, error) {
	parse, ok := parsers[toolchain]
	if !ok {
		return nil, &ParseError{Toolchain: toolchain, Msg: "unknown ToolchainType"}
	}
	// Every ToolchainType is text: bytes of another encoding (Latin-1, say) would be mangled wherever the
	// data is served inside JSON (/unit_data, include=ConfigData).
	if !utf8.Valid(data) {
		return nil, &ParseError{Toolchain: toolchain, Line: firstInvalidUTF8Line(data), Msg: "the data is not valid UTF-8 text"}
	}
	resources, err := parse(data)
	if err != nil {
		var pe *ParseError
		if asParseError(err, &pe) {
			pe.Toolchain = toolchain
			if pe.Line > 0 {
				pe.Line = clampLine(data, pe.Line)
			}
			return nil, pe
		}
		return nil, &ParseError{Toolchain: toolchain, Msg: err.Error()}
	}
	for _, r := range resources {
		if path, v, found := nonFinite(r.Value, ""); found {
			return nil, &ParseError{Toolchain: toolchain, Msg: nonFiniteMsg(r.Key(), path, v)}
		}
	}
	return &Document{Toolchain: toolchain, Resources: resources}, nil
}

// nonFinite finds a number of v that JSON cannot hold (±Inf, NaN: TOML inf and nan, YAML .inf and .nan,
// JSON numbers beyond float64 such as 1e999), with its path. Such data is refused when written: the
// projection, where_data, mutation sources and diffs are all JSON.
func nonFinite(v any, path string) (string, float64, bool) {
	switch t := v.(type) {
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return path, t, true
		}
	case map[string]any:
		keys := sortedKeys(t)
		for _, k := range keys {
			if p, f, ok := nonFinite(t[k], join(path, k)); ok {
				return p, f, ok
			}
		}
	case []any:
		for i, e := range t {
			if p, f, ok := nonFinite(e, join(path, strconv.Itoa(i))); ok {
				return p, f, ok
			}
		}
	}
	return "", 0, false
}

func nonFiniteMsg(resource, path string, v float64) string {
	where := path
	if where == "" {
		where = "the value"
	}
	if resource != "" {
		where = resource + " " + where
	}
	return fmt.Sprintf("%s is %v: numbers must be finite (infinity and NaN have no JSON form)", where, v)
}

func asParseError(err error, target **ParseError) bool {
	pe, ok := err.(*ParseError)
	if ok {
		*target = pe
	}
	return ok
}

var parsers = map[string]func([]byte) ([]Resource, error){
	KubernetesYAML:      parseKubernetes,
	AppConfigYAML:       parseYAML,
	AppConfigJSON:       parseJSON,
	AppConfigTOML:       parseTOML,
	AppConfigINI:        parseINI,
	AppConfigProperties: parseProperties,
	AppConfigEnv:        parseEnv,
	AppConfigText:       parseText,
}

// Projection is the document as JSON, for where_data: an array of resources. Parse refuses what JSON
// cannot hold, so an error here is a bug to report, never a reason to store an empty projection.
func (d *Document) Projection() ([]byte, error) {
	if d == nil {
		return []byte("[]"), nil
	}
	out, err := json.Marshal(d.Resources)
	if err != nil {
		return nil, fmt.Errorf("projecting %s data: %w", d.Toolchain, err)
	}
	return out, nil
}

// Leaf is one scalar (or empty container) of the data, at a path of a resource.
type Leaf struct {
	Resource string // Type/Name for Kubernetes resources, empty otherwise
	Path     string
	Value    any
}

// Key identifies a leaf across versions of the data.
func (l Leaf) Key() string { return l.Resource + "\x00" + l.Path }

// ResourceKey is how a resource is named in leaves, diffs and mutation sources.
func (r Resource) Key() string {
	if r.Type == "" {
		return ""
	}
	return r.Type + "/" + r.Name
}

// Leaves lists every leaf of the document in a stable order.
func (d *Document) Leaves() []Leaf {
	var out []Leaf
	if d == nil {
		return out
	}
	for _, r := range d.Resources {
		walk(r.Key(), "", r.Value, &out)
	}
	return out
}

func walk(resource, path string, v any, out *[]Leaf) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			*out = append(*out, Leaf{resource, path, t})
			return
		}
		keys := sortedKeys(t)
		for _, k := range keys {
			walk(resource, join(path, k), t[k], out)
		}
	case []any:
		if len(t) == 0 {
			*out = append(*out, Leaf{resource, path, t})
			return
		}
		for i, e := range t {
			walk(resource, join(path, strconv.Itoa(i)), e, out)
		}
	default:
		*out = append(*out, Leaf{resource, path, v})
	}
}

func join(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// normalize turns decoded values into JSON's types: string-keyed maps, []any, string, int64, float64,
// bool, nil (times become RFC 3339 strings).
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = normalize(e)
		}
		return t
	case []map[string]any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	case int:
		return int64(t)
	case int32:
		return int64(t)
	case uint64:
		return float64(t)
	case float32:
		return float64(t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case time.Time:
		return t.Format(time.RFC3339Nano)
	case fmt.Stringer:
		return t.String()
	}
	return v
}

// firstInvalidUTF8Line is the 1-based line of the first byte that is not UTF-8.
func firstInvalidUTF8Line(data []byte) int {
	for i, line := range strings.Split(string(data), "\n") {
		if !utf8.ValidString(line) {
			return i + 1
		}
	}
	return 0
}

// lineOf is the 1-based line of a byte offset.
func lineOf(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return strings.Count(string(data[:offset]), "\n") + 1
}

// clampLine keeps a line a parser names (some name the line after the last, where they met the end)
// within data's lines; lines below 1 become 1.
func clampLine(data []byte, line int) int {
	n := strings.Count(string(data), "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	if line > n {
		line = n
	}
	if line < 1 {
		line = 1
	}
	return line
}

// firstFailingLine is the smallest n for which the first n lines of data fail as data does (fails
// says so; data itself must fail), found by bisection. For a parser that names no line this is the line
// its failure is on: lines before it parse, and so does every prefix up to it, unless cutting the data
// changes the failure.
func firstFailingLine(data []byte, fails func(prefix []byte) bool) int {
	var ends []int
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	if len(ends) == 0 {
		return 1
	}
	lo, hi := 1, len(ends)
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(data[:ends[mid-1]]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
