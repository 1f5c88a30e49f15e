// Command edgegen writes the HTTP handlers of the operations every entity family serves alike, from the
// document oapi-codegen reads (the bundler's codegen variant, which keeps the generator keys), so a
// family's list, get, create, update, patch, delete, bulk and document operations need no hand-written
// handler.
//
// An operation marked x-hubd-family: <Family> is one of them. What it is follows from its method and its
// operationId (ListAll..., List..., Get<Family>, Create<Family>, Update<Family>, Patch<Family>,
// Delete<Family>, BulkPatch..., BulkDelete..., BulkCreate... (a copy), BulkMove..., Get<Family>Document,
// Update<Family>FromDocument); its Space is its space_id path parameter, and the entity it names the last
// path parameter. Each handler is a call of the family's edge (<family>Edge, declared with its converters
// in internal/httpapi) or of the bulk helpers: the work is theirs, the generated code only binds the
// operation's own types. An operation of another shape marked x-hubd-family fails the generation, naming
// it, as does an answer that is not the family's (its schema <Family>).
//
// Each family's handlers go to a file of their own in the output directory, edge_<family>.gen.go
// (edge_bridge_worker.gen.go for BridgeWorker); an edge_*.gen.go it did not write is removed, so a family
// no longer marked leaves no handlers behind.
//
// Usage: edgegen <codegen variant document> <output directory>
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/hubd/hubd/internal/build/oasdoc"
)

// familyExtension marks an operation whose handler edgegen writes, naming its family.
const familyExtension = "x-hubd-family"

func main() { oasdoc.MainWriting("edgegen", "output directory", write) }

// An operation is what edgegen reads of a marked operation.
type operation struct {
	id, family, method, path string
	kind                     kind
	// space is the Go field of its space_id parameter, ref the expression of the entity it names ("" when
	// it has none).
	space, ref string
	query      map[string]bool
	// bodies are the Go fields of its request bodies, by media type order.
	bodies []string
	// answer is the schema name of its 200 answer (of its items, for an array).
	answer string
}

// A kind is one of the operations a family serves alike.
type kind string

const (
	list          kind = "list"
	get           kind = "get"
	create        kind = "create"
	update        kind = "update"
	patch         kind = "patch"
	remove        kind = "delete"
	getDocument   kind = "document"
	applyDocument kind = "apply document"
	bulkPatch     kind = "bulk patch"
	bulkDelete    kind = "bulk delete"
	bulkCopy      kind = "bulk copy"
	bulkMove      kind = "bulk move"
)

// kindOf tells what a marked operation is from its method and operationId.
func kindOf(method, id, family string) (kind, bool) {
	switch method {
	case "get":
		switch {
		case strings.HasPrefix(id, "List"):
			return list, true
		case id == "Get"+family+"Document":
			return getDocument, true
		case id == "Get"+family:
			return get, true
		}
	case "post":
		switch {
		case id == "Create"+family:
			return create, true
		case id == "Update"+family+"FromDocument":
			return applyDocument, true
		case strings.HasPrefix(id, "BulkCreate"):
			return bulkCopy, true
		case strings.HasPrefix(id, "BulkMove"):
			return bulkMove, true
		}
	case "put":
		return update, id == "Update"+family
	case "patch":
		if strings.HasPrefix(id, "BulkPatch") {
			return bulkPatch, true
		}
		return patch, id == "Patch"+family
	case "delete":
		if strings.HasPrefix(id, "BulkDelete") {
			return bulkDelete, true
		}
		return remove, id == "Delete"+family
	}
	return "", false
}

// needsRef says whether a kind names one entity by its last path parameter.
func (k kind) needsRef() bool {
	switch k {
	case get, update, patch, remove, getDocument, applyDocument:
		return true
	}
	return false
}

// bulk says whether a kind writes a selection, answering an item for each entity.
func (k kind) bulk() bool {
	switch k {
	case bulkPatch, bulkDelete, bulkCopy, bulkMove:
		return true
	}
	return false
}

// bodyFields are the Go fields oapi-codegen binds a request body to, when an operation takes more than one
// media type.
var bodyFields = map[string]string{"application/json": "JSONBody", "application/merge-patch+json": "ApplicationMergePatchPlusJSONBody"}

// operations reads the marked operations of a document, ordered by operationId.
func operations(doc *oasdoc.Document) ([]operation, error) {
	var out []operation
	var problems []string
	for _, op := range doc.Operations {
		if op.Family == "" {
			continue
		}
		o, err := read(doc, op)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (%s %s): %v", op.ID, strings.ToUpper(op.Method), op.Path, err))
			continue
		}
		out = append(out, o)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return out, nil
}

// read reads one marked operation.
func read(doc *oasdoc.Document, op oasdoc.Operation) (operation, error) {
	k, ok := kindOf(op.Method, op.ID, op.Family)
	if !ok {
		return operation{}, fmt.Errorf("marked %s %s, but not an operation every family serves alike (see internal/build/edgegen)", familyExtension, op.Family)
	}
	o := operation{id: op.ID, family: op.Family, method: op.Method, path: op.Path, kind: k, query: map[string]bool{}}
	pathParams := map[string]oasdoc.Parameter{}
	for _, p := range op.Parameters {
		switch p.In {
		case "path":
			pathParams[p.Name] = p
		case "query":
			o.query[p.Name] = true
		}
	}
	names := pathParamNames(op.Path)
	last := ""
	if len(names) > 0 {
		last = names[len(names)-1]
	}
	if k.needsRef() {
		if last == "" {
			return o, fmt.Errorf("a %s names its entity by its last path parameter, and it has none", k)
		}
		o.ref = "r." + oasdoc.GoName(last)
		if s := pathParams[last].Schema; s != nil && s.Format == "uuid" {
			o.ref += ".String()"
		}
	}
	for _, n := range names {
		if n == "space_id" && (n != last || !k.needsRef()) {
			o.space = "r." + oasdoc.GoName(n)
		}
	}
	if op.RequestBody != nil {
		types := make([]string, 0, len(op.RequestBody.Content))
		for t := range op.RequestBody.Content {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, t := range types {
			field := "Body"
			if len(types) > 1 {
				if field = bodyFields[t]; field == "" {
					return o, fmt.Errorf("takes %s, whose request body edgegen does not bind", t)
				}
			}
			o.bodies = append(o.bodies, field)
		}
	}
	if answer := op.Answer("200", "application/json"); answer != nil {
		if answer.Type == "array" && answer.Items != nil {
			answer = answer.Items
		}
		o.answer = answer.Reference()
	}
	return o, o.check(doc)
}

// check refuses an operation whose answer or parameters are not those of its kind.
func (o operation) check(doc *oasdoc.Document) error {
	want := map[kind]string{get: "Extended" + o.family, list: "Extended" + o.family, create: o.family, update: o.family, patch: o.family,
		remove: "DeleteResponse", getDocument: "EntityDocument", applyDocument: "EntityDocument", bulkDelete: "DeleteResponse"}[o.kind]
	if o.kind.bulk() && o.kind != bulkDelete {
		if _, err := o.itemField(doc); err != nil {
			return err
		}
	} else if o.answer != want {
		return fmt.Errorf("a %s of %s answers %s, not %s", o.kind, o.family, o.answer, want)
	}
	if (o.kind == list || o.kind.bulk()) && !o.query["where"] {
		return fmt.Errorf("a %s takes the list parameters (where...)", o.kind)
	}
	switch o.kind {
	case create, update, applyDocument, bulkMove:
		if len(o.bodies) != 1 {
			return fmt.Errorf("a %s takes one JSON body", o.kind)
		}
	case patch, bulkPatch, bulkCopy:
		if len(o.bodies) == 0 {
			return fmt.Errorf("a %s takes a merge patch", o.kind)
		}
	}
	return nil
}

// itemField is the field of a bulk write's item (<Family>CreateOrUpdateResponse) holding the entity
// written: the one property beside Error, of the family's schema.
func (o operation) itemField(doc *oasdoc.Document) (string, error) {
	item, ok := doc.Schemas[o.answer]
	if !ok {
		return "", fmt.Errorf("a %s answers an array of items, not %q", o.kind, o.answer)
	}
	var fields []string
	for name, p := range item.Properties {
		if name != "Error" {
			fields = append(fields, name)
			if p.Reference() != o.family {
				return "", fmt.Errorf("its item %s holds %s, not a %s", o.answer, name, o.family)
			}
		}
	}
	if _, hasError := item.Properties["Error"]; !hasError || len(fields) != 1 {
		return "", fmt.Errorf("its item %s is not {Error, %s}", o.answer, o.family)
	}
	return fields[0], nil
}

// pathParamNames are the names of a path template's parameters, in order.
func pathParamNames(path string) []string {
	var out []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, seg[1:len(seg)-1])
		}
	}
	return out
}

// edgeVar is the Go name of a family's edge (BridgeWorker: bridgeWorkerEdge).
func edgeVar(family string) string { return strings.ToLower(family[:1]) + family[1:] + "Edge" }

// ownFiles are the files of its output directory edgegen owns, removed when it does not write them: the
// families' files, and edge.gen.go, the single file of an older edgegen.
var ownFiles = []string{"edge_*.gen.go", "edge.gen.go"}

// write writes the handlers of the marked operations of a document into dir, one file per family, and
// removes the files of families it no longer writes.
func write(doc *oasdoc.Document, dir string) error {
	files, err := generate(doc)
	if err != nil {
		return err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			return err
		}
	}
	for _, pattern := range ownFiles {
		paths, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		for _, path := range paths {
			if _, written := files[filepath.Base(path)]; !written {
				if err := os.Remove(path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// fileOf is the name of the file holding a family's handlers (BridgeWorker: edge_bridge_worker.gen.go).
func fileOf(family string) string {
	var b strings.Builder
	for i, r := range family {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return "edge_" + b.String() + ".gen.go"
}

// generate makes the handlers of the marked operations of a document: the source of each family's file,
// by file name, its handlers ordered by operationId.
func generate(doc *oasdoc.Document) (map[string][]byte, error) {
	ops, err := operations(doc)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("no operation is marked %s", familyExtension)
	}
	byFamily := map[string][]operation{}
	for _, o := range ops {
		byFamily[o.family] = append(byFamily[o.family], o)
	}
	files := make(map[string][]byte, len(byFamily))
	for family, ops := range byFamily {
		src, err := generateFamily(doc, ops)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", family, err)
		}
		files[fileOf(family)] = src
	}
	return files, nil
}

// generateFamily writes the handlers of one family's operations.
func generateFamily(doc *oasdoc.Document, ops []operation) ([]byte, error) {
	var body bytes.Buffer
	items := map[string]string{} // item schema -> the family it holds, for the bulk writes' item functions
	for _, o := range ops {
		call, err := o.call()
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&body, "\n// %s serves %s %s (the %s of %s).\n", o.id, strings.ToUpper(o.method), o.path, o.kind, o.family)
		fmt.Fprintf(&body, "func (h *handlers) %s(ctx context.Context, r api.%sRequestObject) (api.%sResponseObject, error) {\n%s}\n", o.id, o.id, o.id, call)
		if o.kind.bulk() && o.kind != bulkDelete {
			items[o.answer] = o.family
		}
	}
	names := make([]string, 0, len(items))
	for name := range items {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		family := items[name]
		field, _ := operation{family: family, answer: name}.itemField(doc)
		fmt.Fprintf(&body, "\n// %s is one item of a bulk write of the %s family: the entity written, or why not.\n", itemFunc(family), family)
		fmt.Fprintf(&body, "func %s(written *api.%s, e *api.ResponseError) api.%s {\n\treturn api.%s{%s: written, Error: e}\n}\n",
			itemFunc(family), family, name, name, field)
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/build/edgegen from the document; DO NOT EDIT.\n\npackage httpapi\n\nimport (\n\t\"context\"\n")
	if bytes.Contains(body.Bytes(), []byte("json.RawMessage")) {
		b.WriteString("\t\"encoding/json\"\n")
	}
	if bytes.Contains(body.Bytes(), []byte("uuid.Nil")) {
		b.WriteString("\n\t\"github.com/google/uuid\"\n")
	}
	b.WriteString("\n\t\"github.com/hubd/hubd/gen/api\"\n)\n")
	b.Write(body.Bytes())
	return format.Source(b.Bytes())
}

// itemFunc is the Go name of the function building a bulk write's item of a family (Filter: filterWritten).
func itemFunc(family string) string { return strings.ToLower(family[:1]) + family[1:] + "Written" }

// call is the body of o's handler.
func (o operation) call() (string, error) {
	edge := edgeVar(o.family)
	space := o.space
	if space == "" {
		space = "uuid.Nil"
	}
	dryRun := "false"
	if o.query["dry_run"] {
		dryRun = "flag(r.Params.DryRun)"
	}
	bodies := make([]string, len(o.bodies))
	for i, f := range o.bodies {
		bodies[i] = "r." + f
	}
	// answer wraps a call returning (body, error) into the operation's 200 answer.
	answer := func(call string) string {
		return fmt.Sprintf("\tout, err := %s\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn api.%s200JSONResponse{Body: out}, nil\n", call, o.id)
	}
	switch o.kind {
	case list:
		spaceID := "nil"
		if o.space != "" {
			spaceID = "&" + o.space
		}
		return fmt.Sprintf("\tparams, err := listParams(ctx, h.s, %s, r.Params)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn %s.list(ctx, h.base, %s, params)\n",
			spaceID, edge, spaceID), nil
	case get:
		include := "nil"
		if o.query["include"] {
			include = "r.Params.Include"
		}
		return fmt.Sprintf("\treturn %s.get(ctx, h.base, %s, %s, r.Params.Select, %s)\n", edge, space, o.ref, include), nil
	case create:
		allowExists := "false"
		if o.query["allow_exists"] {
			allowExists = "isTrue(r.Params.AllowExists)"
		}
		return answer(fmt.Sprintf("%s.create(ctx, h.base, %s, r.Body, %s, %s)", edge, space, dryRun, allowExists)), nil
	case update:
		return answer(fmt.Sprintf("%s.update(ctx, h.base, %s, %s, r.Body, r.Body.Version, %s)", edge, space, o.ref, dryRun)), nil
	case patch:
		return answer(fmt.Sprintf("%s.patch(ctx, h.base, %s, %s, %s, %s)", edge, space, o.ref, dryRun, strings.Join(bodies, ", "))), nil
	case remove:
		return answer(fmt.Sprintf("%s.delete(ctx, h.base, %s, %s, %s)", edge, space, o.ref, dryRun)), nil
	case getDocument:
		return answer(fmt.Sprintf("%s.document(ctx, h.base, %s, %s)", edge, space, o.ref)), nil
	case applyDocument:
		return answer(fmt.Sprintf("%s.applyDocument(ctx, h.base, %s, %s, r.Body.Base, r.Body.Document, %s)", edge, space, o.ref, dryRun)), nil
	case bulkDelete:
		return fmt.Sprintf("\treturn answeredInBulk(deletedInBulk(ctx, h.s, %s.of(h.base), %s.listing.Name, r.Params, r.Params.DryRun))\n", edge, edge), nil
	}
	item := fmt.Sprintf("bulkItemOf(%s, %s)", edge, itemFunc(o.family))
	patches := "[]*json.RawMessage{" + strings.Join(bodies, ", ") + "}"
	switch o.kind {
	case bulkPatch:
		return fmt.Sprintf("\treturn answeredInBulk(patchedInBulk(ctx, h.s, %s.of(h.base), r.Params, r.Params.DryRun, %s, %s))\n", edge, patches, item), nil
	case bulkCopy:
		return fmt.Sprintf("\treturn answeredInBulk(clonedInBulk(ctx, h.s, %s.of(h.base), r.Params, %s, %s))\n", edge, patches, item), nil
	case bulkMove:
		return fmt.Sprintf("\treturn answeredInBulk(movedInBulk(ctx, h.s, %s.of(h.base), r.Params, r.Params.DryRun, r.Body.ToSpaceID, %s))\n", edge, item), nil
	}
	return "", fmt.Errorf("%s: no handler for a %s", o.id, o.kind)
}
