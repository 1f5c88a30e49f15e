package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubd/hubd/internal/build/oasdoc"
)

// testDocument holds, in the codegen variant's form, a Space-resident family Thing with a list, a get
// (its ID a uuid), a merge patch of two media types, a bulk copy and a bulk delete, and an unmarked
// operation of another shape.
const testDocument = `{
  "paths": {
    "/space/{space_id}/thing": {
      "parameters": [{"$ref": "#/components/parameters/SpaceID"}],
      "get": {"operationId": "ListThings", "x-hubd-family": "Thing", "parameters": [{"$ref": "#/components/parameters/Where"}],
        "responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/ExtendedThing"}}}}}}}
    },
    "/space/{space_id}/thing/{thing_id}": {
      "parameters": [{"$ref": "#/components/parameters/SpaceID"}, {"name": "thing_id", "in": "path", "schema": {"type": "string", "format": "uuid"}}],
      "get": {"operationId": "GetThing", "x-hubd-family": "Thing", "parameters": [{"name": "select", "in": "query"}],
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ExtendedThing"}}}}}},
      "patch": {"operationId": "PatchThing", "x-hubd-family": "Thing", "parameters": [{"name": "dry_run", "in": "query"}],
        "requestBody": {"content": {"application/merge-patch+json": {}, "application/json": {}}},
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}},
      "post": {"operationId": "PolishThing", "responses": {}}
    },
    "/thing": {
      "post": {"operationId": "BulkCreateThings", "x-hubd-family": "Thing", "parameters": [{"$ref": "#/components/parameters/Where"}],
        "requestBody": {"content": {"application/merge-patch+json": {}, "application/json": {}}},
        "responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/ThingCreateOrUpdateResponse"}}}}}}},
      "delete": {"operationId": "BulkDeleteThings", "x-hubd-family": "Thing", "parameters": [{"$ref": "#/components/parameters/Where"}],
        "responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/DeleteResponse"}}}}}}}
    }
  },
  "components": {
    "parameters": {
      "SpaceID": {"name": "space_id", "in": "path", "schema": {"type": "string", "format": "uuid"}},
      "Where": {"name": "where", "in": "query"}
    },
    "schemas": {
      "ThingCreateOrUpdateResponse": {"properties": {"Error": {"$ref": "#/components/schemas/ResponseError"}, "Thing": {"allOf": [{"$ref": "#/components/schemas/Thing"}], "nullable": true}}}
    }
  }
}`

// readDocument reads a document's text.
func readDocument(t *testing.T, text string) *oasdoc.Document {
	t.Helper()
	doc, err := oasdoc.Read([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// generateFrom generates from a document's text.
func generateFrom(t *testing.T, text string) (map[string][]byte, error) {
	t.Helper()
	return generate(readDocument(t, text))
}

func TestGenerate(t *testing.T) {
	files, err := generateFrom(t, testDocument)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("one family, and files %v", slices.Sorted(maps.Keys(files)))
	}
	src, ok := files["edge_thing.gen.go"]
	if !ok {
		t.Fatalf("the family Thing has no edge_thing.gen.go, but %v", slices.Sorted(maps.Keys(files)))
	}
	for _, want := range []string{
		"params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)",
		"return thingEdge.list(ctx, h.base, &r.SpaceId, params)",
		"return thingEdge.get(ctx, h.base, r.SpaceId, r.ThingId.String(), r.Params.Select, nil)",
		"out, err := thingEdge.patch(ctx, h.base, r.SpaceId, r.ThingId.String(), flag(r.Params.DryRun), r.JSONBody, r.ApplicationMergePatchPlusJSONBody)",
		"return api.PatchThing200JSONResponse{Body: out}, nil",
		"clonedInBulk(ctx, h.s, thingEdge.of(h.base), r.Params, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, bulkItemOf(thingEdge, thingWritten))",
		"deletedInBulk(ctx, h.s, thingEdge.of(h.base), thingEdge.listing.Name, r.Params, r.Params.DryRun)",
		"return api.ThingCreateOrUpdateResponse{Thing: written, Error: e}",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the generated code lacks %s", want)
		}
	}
	if strings.Contains(string(src), "PolishThing") {
		t.Error("an unmarked operation got a handler")
	}
}

// TestWrite checks that each family gets a file of its own, and that the files of families no longer
// marked are removed while the directory's other files stay.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"edge.gen.go", "edge_gone.gen.go", "edge.go", "params.gen.go"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("package httpapi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A second family, BigThing, with a get of its own.
	doc := strings.Replace(testDocument, `"/thing": {`, `"/big_thing/{big_thing_id}": {
      "get": {"operationId": "GetBigThing", "x-hubd-family": "BigThing", "parameters": [{"name": "big_thing_id", "in": "path"}],
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ExtendedBigThing"}}}}}}
    },
    "/thing": {`, 1)
	if err := write(readDocument(t, doc), dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"edge.go", "edge_big_thing.gen.go", "edge_thing.gen.go", "params.gen.go"}; !slices.Equal(names, want) {
		t.Errorf("the directory holds %v, want %v", names, want)
	}
	src, err := os.ReadFile(filepath.Join(dir, "edge_big_thing.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "func (h *handlers) GetBigThing(") || strings.Contains(string(src), "ListThings") {
		t.Errorf("edge_big_thing.gen.go holds other than BigThing's handlers:\n%s", src)
	}
}

func TestRefusals(t *testing.T) {
	for name, edit := range map[string][2]string{
		"an operation of another shape":  {`"operationId": "PolishThing"`, `"operationId": "PolishThing", "x-hubd-family": "Thing"`},
		"an answer of another family":    {`"$ref": "#/components/schemas/Thing"}}}}}}`, `"$ref": "#/components/schemas/Other"}}}}}}`},
		"a list without list parameters": {`"operationId": "ListThings", "x-hubd-family": "Thing", "parameters": [{"$ref": "#/components/parameters/Where"}]`, `"operationId": "ListThings", "x-hubd-family": "Thing"`},
	} {
		doc := strings.Replace(testDocument, edit[0], edit[1], 1)
		if doc == testDocument {
			t.Fatalf("%s: the edit does not apply", name)
		}
		if _, err := generateFrom(t, doc); err == nil {
			t.Errorf("%s must be refused", name)
		}
	}
}

func TestKindOf(t *testing.T) {
	for _, c := range []struct {
		method, id string
		want       kind
	}{
		{"get", "ListAllThings", list}, {"get", "GetThingDocument", getDocument}, {"post", "UpdateThingFromDocument", applyDocument},
		{"post", "BulkMoveThings", bulkMove}, {"patch", "BulkPatchThings", bulkPatch}, {"delete", "DeleteThing", remove},
	} {
		if got, ok := kindOf(c.method, c.id, "Thing"); !ok || got != c.want {
			t.Errorf("%s %s: %q, %v; want %q", c.method, c.id, got, ok, c.want)
		}
	}
	if _, ok := kindOf("put", "UpdateOther", "Thing"); ok {
		t.Error("a PUT of another family's operation must not be the family's update")
	}
}
