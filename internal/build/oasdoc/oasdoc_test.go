package oasdoc

import (
	"strings"
	"testing"
)

// testDocument has a path item with a shared parameter and a summary, two operations (one of them with
// a referenced parameter and the generator keys) and a nullable reference.
const testDocument = `{
  "paths": {
    "/space/{space_id}/thing": {
      "summary": "Things",
      "parameters": [{"name": "space_id", "in": "path", "required": true}],
      "get": {"operationId": "ListThings", "x-hubd-entity": "Thing", "x-hubd-family": "Thing",
        "parameters": [{"$ref": "#/components/parameters/Where"}, {"name": "limit", "in": "query"}],
        "responses": {"200": {"content": {"application/json": {"schema": {"type": "array"}}}}}},
      "delete": {"operationId": "DeleteThings", "x-hubd-class": "long-poll"}
    }
  },
  "components": {
    "parameters": {"Where": {"name": "where", "in": "query"}},
    "schemas": {"Item": {"properties": {"Thing": {"allOf": [{"$ref": "#/components/schemas/Thing"}], "nullable": true}}}}
  }
}`

func TestRead(t *testing.T) {
	doc, err := Read([]byte(testDocument))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Operations) != 2 || doc.Operations[0].ID != "DeleteThings" || doc.Operations[1].ID != "ListThings" {
		t.Fatalf("operations %+v", doc.Operations)
	}
	list := doc.Operations[1]
	if list.Path != "/space/{space_id}/thing" || list.Method != "get" || list.Entity != "Thing" || list.Family != "Thing" {
		t.Errorf("ListThings: %+v", list)
	}
	var names []string
	for _, p := range list.Parameters {
		names = append(names, p.In+":"+p.Name)
	}
	if got := strings.Join(names, " "); got != "path:space_id query:where query:limit" {
		t.Errorf("ListThings' parameters (the path's first, references resolved): %s", got)
	}
	if q := list.Query(); len(q) != 2 || q["where"].Name != "where" {
		t.Errorf("ListThings' query parameters: %v", q)
	}
	if a := list.Answer("200", "application/json"); a == nil || a.Type != "array" {
		t.Errorf("ListThings' answer: %v", a)
	}
	if doc.Operations[0].Class != "long-poll" || doc.Operations[0].Answer("200", "application/json") != nil {
		t.Errorf("DeleteThings: %+v", doc.Operations[0])
	}
	if got := doc.Schemas["Item"].Properties["Thing"].Reference(); got != "Thing" {
		t.Errorf("a nullable reference refers to %q", got)
	}
	if _, err := Read([]byte(strings.Replace(testDocument, "parameters/Where", "parameters/Nowhere", 1))); err == nil {
		t.Error("a reference to no parameter must be refused")
	}
}

func TestGoName(t *testing.T) {
	for param, want := range map[string]string{"where": "Where", "include_hidden": "IncludeHidden", "space_id": "SpaceId", "x-y.z": "XYZ"} {
		if got := GoName(param); got != want {
			t.Errorf("GoName(%q) = %q, want %q", param, got, want)
		}
	}
}
