// Package oasdoc reads the bundled OpenAPI document for the generators of internal/build that write the
// HTTP layer's code (visitgen, paramgen, edgegen): its operations, their parameters resolved, and the
// schemas they refer to; and runs such a generator from the command line.
package oasdoc

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Schema is what the generators read of a schema.
type Schema struct {
	Ref        string            `json:"$ref"`
	Type       string            `json:"type"`
	Format     string            `json:"format"`
	Items      *Schema           `json:"items"`
	AllOf      []Schema          `json:"allOf"`
	Properties map[string]Schema `json:"properties"`
}

// Reference is the name of the schema s refers to (itself, or as a nullable reference: allOf of one
// $ref); empty when it refers to none.
func (s Schema) Reference() string {
	ref := s.Ref
	if ref == "" && len(s.AllOf) == 1 {
		ref = s.AllOf[0].Ref
	}
	return strings.TrimPrefix(ref, "#/components/schemas/")
}

// Parameter is a parameter of an operation.
type Parameter struct {
	Ref      string  `json:"$ref"`
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Required bool    `json:"required"`
	Schema   *Schema `json:"schema"`
}

// Content is a request body's or response's content, by media type.
type Content map[string]struct {
	Schema Schema `json:"schema"`
}

// Operation is an operation of the document, with the generator keys of hubd's own.
type Operation struct {
	Path, Method string
	ID           string `json:"operationId"`
	// Entity, Class and Family are x-hubd-entity, x-hubd-class and x-hubd-family.
	Entity string `json:"x-hubd-entity"`
	Class  string `json:"x-hubd-class"`
	Family string `json:"x-hubd-family"`
	// Parameters are those of its path, then its own, references resolved.
	Parameters  []Parameter `json:"parameters"`
	RequestBody *struct {
		Content Content `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content Content `json:"content"`
	} `json:"responses"`
}

// Query are the operation's query parameters, by name.
func (o Operation) Query() map[string]Parameter {
	out := map[string]Parameter{}
	for _, p := range o.Parameters {
		if p.In == "query" {
			out[p.Name] = p
		}
	}
	return out
}

// Answer is the schema of the operation's answer of status under media type, or nil.
func (o Operation) Answer(status, media string) *Schema {
	c, ok := o.Responses[status].Content[media]
	if !ok {
		return nil
	}
	return &c.Schema
}

// Document is what the generators read of a bundled document.
type Document struct {
	// Operations are ordered by operationId.
	Operations []Operation
	Schemas    map[string]Schema
}

// Read reads a bundled document.
func Read(raw []byte) (*Document, error) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]Parameter `json:"parameters"`
			Schemas    map[string]Schema    `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	resolve := func(params []Parameter) ([]Parameter, error) {
		out := make([]Parameter, len(params))
		for i, p := range params {
			if p.Ref != "" {
				name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
				target, found := doc.Components.Parameters[name]
				if !ok || !found {
					return nil, fmt.Errorf("parameter reference %s names no parameter of the document's components", p.Ref)
				}
				p = target
			}
			out[i] = p
		}
		return out, nil
	}
	out := &Document{Schemas: doc.Components.Schemas}
	for path, item := range doc.Paths {
		var shared []Parameter
		if rawShared, ok := item["parameters"]; ok {
			if err := json.Unmarshal(rawShared, &shared); err != nil {
				return nil, fmt.Errorf("%s: parameters: %w", path, err)
			}
		}
		for method, rawOp := range item {
			var op Operation
			if method == "parameters" || json.Unmarshal(rawOp, &op) != nil || op.ID == "" {
				continue // not an operation (servers, summary)
			}
			op.Path, op.Method = path, method
			var err error
			if op.Parameters, err = resolve(append(append([]Parameter{}, shared...), op.Parameters...)); err != nil {
				return nil, fmt.Errorf("%s: %w", op.ID, err)
			}
			out.Operations = append(out.Operations, op)
		}
	}
	sort.Slice(out.Operations, func(i, j int) bool { return out.Operations[i].ID < out.Operations[j].ID })
	return out, nil
}

// GoName is the field oapi-codegen names after a parameter: each word of the snake_case name
// capitalized (include_hidden: IncludeHidden).
func GoName(param string) string {
	words := strings.FieldsFunc(param, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, "")
}

// Main runs a generator named name as a command: `<name> <document> <output file>` reads the document and
// writes what generate makes of it.
func Main(name string, generate func(*Document) ([]byte, error)) {
	MainWriting(name, "output file", func(doc *Document, outPath string) error {
		src, err := generate(doc)
		if err != nil {
			return err
		}
		return os.WriteFile(outPath, src, 0o644)
	})
}

// MainWriting runs a generator named name that writes its output itself, such as several files:
// `<name> <document> <output>` reads the document and hands it to write with the output argument (what
// output is, as its usage says it).
func MainWriting(name, output string, write func(doc *Document, out string) error) {
	if len(os.Args) != 3 {
		fmt.Fprintf(os.Stderr, "usage: %s <bundled document> <%s>\n", name, output)
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], write); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

func run(docPath, out string, write func(*Document, string) error) error {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	doc, err := Read(raw)
	if err != nil {
		return err
	}
	return write(doc, out)
}
