package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The shapes a generated client sees. Family files write one schema per entity, shaped for what a client
// sends: required lists what a create must carry, read-only properties are marked readOnly. Responses
// always carry every property (null when unset, {} and [] when empty), so bundling derives two shapes:
//   - an entity schema that requests and responses share is split: the request keeps its authored form
//     under <Name>Input (read-only properties stay, marked readOnly, so what a GET returned may be sent
//     back), and the response form under <Name> lists every property as required;
//   - every object a response carries lists every property as required (nullable ones stay nullable).
//
// The served document is clean of generator keys (x-go-*, x-omitempty); oapi-codegen reads a variant
// (codegenVariant) in which the server keeps one Go type per entity.

const schemaPrefix = "#/components/schemas/"

// inputSuffix names the request form of a split schema.
const inputSuffix = "Input"

// shapeRequestsAndResponses splits the schemas requests and responses share and makes every response
// property required. It returns the names of the request forms it created.
func shapeRequestsAndResponses(root object) ([]string, error) {
	components := child(root, "components")
	schemas := child(components, "schemas")
	responses := child(components, "responses")

	requestRoots, responseRoots := map[string]bool{}, map[string]bool{}
	var bodies []object
	for _, item := range child(root, "paths") {
		for _, m := range methods {
			op, ok := item.(object)[m].(object)
			if !ok {
				continue
			}
			if body, ok := op["requestBody"].(object); ok {
				schemaRefs(body, requestRoots)
				bodies = append(bodies, body)
			}
			for _, r := range child(op, "responses") {
				if ref, ok := r.(object)["$ref"].(string); ok {
					schemaRefs(responses[strings.TrimPrefix(ref, "#/components/responses/")], responseRoots)
				} else {
					schemaRefs(r, responseRoots)
				}
			}
		}
	}
	inRequests, inResponses := closure(schemas, requestRoots), closure(schemas, responseRoots)

	// Shared objects are split, and so are shared schemas that hold one (Permissions holds
	// PermissionSubjects), until none is left.
	split := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for name := range inRequests {
			s, _ := schemas[name].(object)
			if split[name] || !inResponses[name] || s["x-go-type"] != nil {
				continue
			}
			if hasProperties(s) || refersTo(s, split) {
				split[name] = true
				changed = true
			}
		}
	}
	var created []string
	for name := range split {
		input := name + inputSuffix
		if _, taken := schemas[input]; taken {
			return nil, fmt.Errorf("schema %s: the request form of %s would take its name", input, name)
		}
		form := deepCopy(schemas[name]).(object)
		rewriteRefs(form, split)
		if desc, _ := form["description"].(string); desc != "" {
			form["description"] = strings.TrimRight(desc, "\n") + "\n\n" + inputNote(name)
		} else {
			form["description"] = inputNote(name)
		}
		schemas[input] = form
		created = append(created, input)
	}
	for _, body := range bodies {
		rewriteRefs(body, split)
	}
	for name := range inRequests {
		if !inResponses[name] {
			rewriteRefs(schemas[name], split)
		}
	}
	for name := range inResponses {
		requireEveryProperty(schemas[name])
	}
	typeNullableRefs(root, schemas)
	for _, r := range responses {
		requireEveryProperty(r)
	}
	for _, item := range child(root, "paths") {
		for _, m := range methods {
			if op, ok := item.(object)[m].(object); ok {
				for _, r := range child(op, "responses") {
					requireEveryProperty(r)
				}
			}
		}
	}
	sort.Strings(created)
	return created, nil
}

func inputNote(name string) string {
	return fmt.Sprintf("The request form of %s: what a client sends. Read-only properties may be sent back as a read returned them (or null); they are ignored.", name)
}

func hasProperties(s object) bool {
	props, _ := s["properties"].(object)
	if len(props) > 0 {
		return true
	}
	// A list of objects (Clearance) is shaped like its items.
	items, _ := s["items"].(object)
	return items != nil && hasProperties(items)
}

// schemaRefs adds the component schemas v refers to directly.
func schemaRefs(v any, acc map[string]bool) {
	switch v := v.(type) {
	case object:
		for k, e := range v {
			if ref, ok := e.(string); k == "$ref" && ok && strings.HasPrefix(ref, schemaPrefix) {
				acc[strings.TrimPrefix(ref, schemaPrefix)] = true
			} else {
				schemaRefs(e, acc)
			}
		}
	case []any:
		for _, e := range v {
			schemaRefs(e, acc)
		}
	}
}

func refersTo(s object, names map[string]bool) bool {
	refs := map[string]bool{}
	schemaRefs(s, refs)
	for n := range refs {
		if names[n] {
			return true
		}
	}
	return false
}

// closure is the set of schemas reachable from roots.
func closure(schemas object, roots map[string]bool) map[string]bool {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		next := map[string]bool{}
		schemaRefs(schemas[name], next)
		for n := range next {
			visit(n)
		}
	}
	for n := range roots {
		visit(n)
	}
	return seen
}

// rewriteRefs points references to split schemas at their request forms.
func rewriteRefs(v any, split map[string]bool) {
	switch v := v.(type) {
	case object:
		for k, e := range v {
			if ref, ok := e.(string); k == "$ref" && ok && split[strings.TrimPrefix(ref, schemaPrefix)] {
				v[k] = ref + inputSuffix
			} else {
				rewriteRefs(e, split)
			}
		}
	case []any:
		for _, e := range v {
			rewriteRefs(e, split)
		}
	}
}

// sparseExtension marks a schema whose properties are present only when they apply (a JWK's members
// depend on its kty): its authored required list stays.
const sparseExtension = "x-hubd-sparse"

// requireEveryProperty lists every property of v, and of the objects inside it, as required.
func requireEveryProperty(v any) {
	switch v := v.(type) {
	case object:
		if _, ref := v["$ref"]; ref || v[sparseExtension] == true {
			return
		}
		if props, ok := v["properties"].(object); ok && v["x-go-type"] == nil {
			names := make([]any, 0, len(props))
			for _, n := range sortedKeys(props) {
				names = append(names, n)
				// readOnly says what a request may leave out; a response form is never sent, and
				// generators make read-only properties optional even when required.
				if p, ok := props[n].(object); ok {
					delete(p, "readOnly")
				}
			}
			v["required"] = names
		}
		for _, e := range v {
			requireEveryProperty(e)
		}
	case []any:
		for _, e := range v {
			requireEveryProperty(e)
		}
	}
}

func sortedKeys(m object) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// typeNullableRefs gives a nullable reference (allOf of one object schema, as OpenAPI 3.0 writes a
// nullable $ref) the type its nullable needs beside it.
func typeNullableRefs(v any, schemas object) {
	switch v := v.(type) {
	case object:
		if all, ok := v["allOf"].([]any); ok && v["nullable"] == true && v["type"] == nil && len(all) == 1 {
			if ref, ok := all[0].(object)["$ref"].(string); ok {
				if target, ok := schemas[strings.TrimPrefix(ref, schemaPrefix)].(object); ok {
					if t, ok := target["type"].(string); ok {
						v["type"] = t
					}
				}
			}
		}
		for _, e := range v {
			typeNullableRefs(e, schemas)
		}
	case []any:
		for _, e := range v {
			typeNullableRefs(e, schemas)
		}
	}
}

// generatorKey reports keys only the code generators read: oapi-codegen's, and x-hubd-family (edgegen:
// the family whose handler it writes for an operation).
func generatorKey(k string) bool {
	return strings.HasPrefix(k, "x-go-") || k == "x-omitempty" || k == "x-oapi-codegen-extra-tags" || k == familyExtension
}

// withoutGeneratorKeys returns a copy of v without generator keys.
func withoutGeneratorKeys(v any) any {
	switch v := v.(type) {
	case object:
		out := object{}
		for k, e := range v {
			if !generatorKey(k) {
				out[k] = withoutGeneratorKeys(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutGeneratorKeys(e)
		}
		return out
	}
	return v
}

// codegenVariant is the document oapi-codegen reads to build the server's models: every property is a
// plain Go value (a pointer when nullable) and always serialized, and each request form is an alias of its
// entity's type, so a handler converts one Go type per entity.
func codegenVariant(root object, inputs []string) object {
	variant := deepCopy(root).(object)
	schemas := child(child(variant, "components"), "schemas")
	for _, s := range schemas {
		alwaysSerialize(s.(object))
	}
	for _, input := range inputs {
		schemas[input] = object{"x-go-type": strings.TrimSuffix(input, inputSuffix)}
	}
	paths := child(variant, "paths")
	for path, item := range paths {
		for _, m := range methods {
			if op, ok := item.(object)[m].(object); ok && op[servedExtension] == "root" {
				delete(item.(object), m)
			}
		}
		if !hasOperation(item.(object)) {
			delete(paths, path)
		}
	}
	for _, item := range paths {
		for _, m := range methods {
			op, ok := item.(object)[m].(object)
			if !ok {
				continue
			}
			if body, ok := op["requestBody"].(object); ok && body[rawBytesExtension] == true {
				body["content"] = object{"*/*": object{"schema": binarySchema()}}
			}
			for _, r := range child(op, "responses") {
				if r := r.(object); r[rawBytesExtension] == true {
					for mt := range child(r, "content") {
						child(r, "content")[mt] = object{"schema": binarySchema()}
					}
				}
			}
		}
	}
	return variant
}

// rawBytesExtension marks a request body or response whose media types all carry configuration data:
// the handler reads or writes its bytes as they are, whatever the media type, so the server's Go types
// see one binary body where the served document tells clients what each media type holds.
const rawBytesExtension = "x-go-raw-bytes"

func hasOperation(item object) bool {
	for _, m := range methods {
		if _, ok := item[m]; ok {
			return true
		}
	}
	return false
}

func binarySchema() object { return object{"type": "string", "format": "binary"} }

func deepCopy(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // v came from YAML or JSON: it marshals
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}
