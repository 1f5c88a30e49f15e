package main

import (
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

// generateFrom generates from a document's text.
func generateFrom(t *testing.T, text string) ([]byte, error) {
	t.Helper()
	doc, err := oasdoc.Read([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return generate(doc)
}

func TestGenerate(t *testing.T) {
	src, err := generateFrom(t, testDocument)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"return thingEdge.list(ctx, h.base, &r.SpaceId, listParams(ctx, r.Params))",
		"return thingEdge.get(ctx, h.base, r.SpaceId, r.ThingId.String(), r.Params.Select, nil)",
		"out, err := thingEdge.patch(ctx, h.base, r.SpaceId, r.ThingId.String(), flag(r.Params.DryRun), r.JSONBody, r.ApplicationMergePatchPlusJSONBody)",
		"return api.PatchThing200JSONResponse{Body: out}, nil",
		"clonedInBulk(ctx, h.s, thingEdge.of(h.base), r.Params, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, bulkItemOf(thingEdge, thingWritten))",
		"deletedInBulk(ctx, thingEdge.of(h.base), thingEdge.listing.Name, r.Params, r.Params.DryRun)",
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
