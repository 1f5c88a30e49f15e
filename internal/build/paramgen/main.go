// Command paramgen writes the conversions of the generated parameter structs (gen/api's <Operation>Params)
// into the HTTP layer's own terms, from the bundled document, so no handler reads query parameters by
// their JSON tags and a parameter added to an operation is converted by regenerating:
//   - listParamsOf: the list and selection parameters (where, filter, view, limit, ...) of every operation
//     that names its entity (x-hubd-entity), into listquery.Params;
//   - copyParamsOf: what a bulk copy takes beyond its selection (where_space, filter_space, name_prefixes,
//     allow_exists, dry_run), into copyParams;
//   - dataFilterOf: the data condition of a Unit list or selection (where_data, resource_type), into
//     unit.DataFilter.
//
// Each is generic over a constraint that names exactly the parameter structs it converts, so a handler
// passing any other does not compile; it calls one non-generic function holding one case per struct.
//
// Usage: paramgen <bundled document> <output file>
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"os"
	"sort"
	"strings"
)

// A conversion is one function paramgen writes: from the parameter struct of every operation it applies
// to, into target.
type conversion struct {
	name   string // the function is <name>Of, its constraint <name>Struct
	target string // the Go type it returns
	doc    string // what it converts, for its comment
	// marked limits it to operations that name their entity (x-hubd-entity).
	marked bool
	// keys are the parameters that make an operation one it applies to (any of them), fields what it
	// converts of those the operation takes.
	keys   []string
	fields []field
}

// A field is one query parameter and the field of the target it fills: a string (text), from a parameter
// of a string type, or a *goType (pointer), from a parameter whose type's underlying type is goType.
type field struct {
	param, target, pointer string
}

func text(param, target string) field { return field{param: param, target: target} }
func pointer(param, target, goType string) field {
	return field{param: param, target: target, pointer: goType}
}

var listFields = []field{
	text("where", "Where"), text("contains", "Contains"), text("select", "Select"), text("include", "Include"),
	text("include_hidden", "IncludeHidden"), text("order_by", "OrderBy"), text("continue", "Continue"),
	text("filter", "Filter"), text("view", "View"), pointer("limit", "Limit", "int"), pointer("offset", "Offset", "int"),
}

var conversions = []conversion{
	{name: "listParams", target: "listquery.Params", marked: true, keys: params(listFields), fields: listFields,
		doc: "the list and selection parameters of an operation that names its entity (x-hubd-entity)"},
	{name: "copyParams", target: "copyParams", keys: []string{"where_space", "filter_space", "name_prefixes"},
		doc: "what a bulk copy takes beyond its selection",
		fields: []field{pointer("where_space", "WhereSpace", "string"), pointer("filter_space", "FilterSpace", "string"),
			pointer("name_prefixes", "NamePrefixes", "string"), pointer("allow_exists", "AllowExists", "string"),
			pointer("dry_run", "DryRun", "bool")}},
	{name: "dataFilter", target: "unit.DataFilter", keys: []string{"where_data", "resource_type"},
		doc:    "the data condition of a Unit list or selection",
		fields: []field{text("where_data", "WhereData"), text("resource_type", "ResourceType")}},
}

// imports are the packages the conversions' targets and sources are in.
var imports = []string{"github.com/hubd/hubd/gen/api", "github.com/hubd/hubd/internal/listquery", "github.com/hubd/hubd/internal/unit"}

func params(fields []field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.param
	}
	return out
}

// operation is what paramgen reads of an operation: its query parameters, with those of its path.
type operation struct {
	ID     string
	Entity string
	Query  map[string]parameter
}

type parameter struct {
	Ref      string `json:"$ref"`
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
}

type document struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]parameter `json:"parameters"`
	} `json:"components"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: paramgen <bundled document> <output file>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "paramgen:", err)
		os.Exit(1)
	}
}

func run(docPath, outPath string) error {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	ops, err := operations(raw)
	if err != nil {
		return err
	}
	src, err := generate(ops)
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, src, 0o644)
}

// operations reads the operations of a bundled document, their parameters' references resolved, ordered
// by operationId.
func operations(raw []byte) ([]operation, error) {
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	resolve := func(p parameter) (parameter, error) {
		if p.Ref == "" {
			return p, nil
		}
		name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
		target, found := doc.Components.Parameters[name]
		if !ok || !found {
			return p, fmt.Errorf("parameter reference %s names no parameter of the document's components", p.Ref)
		}
		return target, nil
	}
	var out []operation
	for path, item := range doc.Paths {
		var shared []parameter
		if rawShared, ok := item["parameters"]; ok {
			if err := json.Unmarshal(rawShared, &shared); err != nil {
				return nil, fmt.Errorf("%s: parameters: %w", path, err)
			}
		}
		for method, rawOp := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				ID         string      `json:"operationId"`
				Entity     string      `json:"x-hubd-entity"`
				Parameters []parameter `json:"parameters"`
			}
			if err := json.Unmarshal(rawOp, &op); err != nil || op.ID == "" {
				continue // not an operation (servers, summary)
			}
			o := operation{ID: op.ID, Entity: op.Entity, Query: map[string]parameter{}}
			for _, p := range append(append([]parameter{}, shared...), op.Parameters...) {
				p, err := resolve(p)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", op.ID, err)
				}
				if p.In == "query" {
					o.Query[p.Name] = p
				}
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// generate writes the source of every conversion for ops.
func generate(ops []operation) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/build/paramgen from the bundled document; DO NOT EDIT.\n\npackage httpapi\n\nimport (\n")
	for _, imp := range imports {
		fmt.Fprintf(&b, "\t%q\n", imp)
	}
	b.WriteString(")\n")
	for _, c := range conversions {
		if err := c.write(&b, ops); err != nil {
			return nil, err
		}
	}
	return format.Source(b.Bytes())
}

// write writes the constraint, the generic function and its cases for the operations c applies to.
func (c conversion) write(b *bytes.Buffer, ops []operation) error {
	var structs, cases []string
	for _, op := range ops {
		if !c.appliesTo(op) {
			continue
		}
		var values []string
		for _, f := range c.fields {
			p, ok := op.Query[f.param]
			if !ok {
				continue
			}
			if p.Required {
				return fmt.Errorf("%s requires %s; the parameters paramgen converts are optional", op.ID, f.param)
			}
			values = append(values, f.target+": "+f.value("p."+goName(f.param)))
		}
		structs = append(structs, "api."+op.ID+"Params")
		cases = append(cases, fmt.Sprintf("\tcase api.%sParams:\n\t\treturn %s{%s}\n", op.ID, c.target, strings.Join(values, ", ")))
	}
	if len(cases) == 0 {
		return fmt.Errorf("no operation takes %s: %sOf would convert nothing", strings.Join(c.keys, ", "), c.name)
	}
	fmt.Fprintf(b, "\n// %sStruct is the parameter struct of every operation %sOf converts.\n", c.name, c.name)
	fmt.Fprintf(b, "type %sStruct interface {\n\t%s\n}\n", c.name, strings.Join(structs, " |\n\t"))
	fmt.Fprintf(b, "\n// %sOf converts %s.\n", c.name, c.doc)
	fmt.Fprintf(b, "func %sOf[P %sStruct](p P) %s { return %sOfAny(p) }\n", c.name, c.name, c.target, c.name)
	fmt.Fprintf(b, "\nfunc %sOfAny(p any) %s {\n\tswitch p := p.(type) {\n%s\t}\n", c.name, c.target, strings.Join(cases, ""))
	fmt.Fprintf(b, "\tpanic(\"%sStruct names only the types above\")\n}\n", c.name)
	return nil
}

// appliesTo reports whether op's parameters are converted by c.
func (c conversion) appliesTo(op operation) bool {
	if c.marked && op.Entity == "" {
		return false
	}
	for _, k := range c.keys {
		if _, ok := op.Query[k]; ok {
			return true
		}
	}
	return false
}

// value is the expression converting the generated field src.
func (f field) value(src string) string {
	if f.pointer != "" {
		return fmt.Sprintf("(*%s)(%s)", f.pointer, src)
	}
	return fmt.Sprintf("string(deref(%s))", src)
}

// goName is the field oapi-codegen names after a query parameter: each word of the snake_case name
// capitalized (include_hidden: IncludeHidden).
func goName(param string) string {
	words := strings.FieldsFunc(param, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, "")
}
