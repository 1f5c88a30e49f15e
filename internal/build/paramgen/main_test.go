package main

import (
	"strings"
	"testing"
)

// testDocument holds, in the bundled document's form, a list with shared and referenced parameters, a bulk
// copy, an operation taking where without naming its entity, and a read of one entity.
const testDocument = `{
  "paths": {
    "/space/{space_id}/thing": {
      "parameters": [{"name": "space_id", "in": "path", "required": true}],
      "get": {"operationId": "ListThings", "x-hubd-entity": "Thing", "parameters": [
        {"$ref": "#/components/parameters/Where"}, {"name": "limit", "in": "query"},
        {"name": "where_data", "in": "query"}, {"name": "include_hidden", "in": "query"}]},
      "post": {"operationId": "BulkCreateThings", "x-hubd-entity": "Thing", "parameters": [
        {"$ref": "#/components/parameters/Where"}, {"name": "name_prefixes", "in": "query"}, {"name": "dry_run", "in": "query"}]},
      "summary": "Things"
    },
    "/thing/{thing_id}": {
      "get": {"operationId": "GetThing", "x-hubd-entity": "Thing", "parameters": [{"name": "select", "in": "query"}]},
      "delete": {"operationId": "ForgetThing", "parameters": [{"$ref": "#/components/parameters/Where"}]}
    }
  },
  "components": {"parameters": {"Where": {"name": "where", "in": "query"}}}
}`

func TestOperations(t *testing.T) {
	ops, err := operations([]byte(testDocument))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, op := range ops {
		ids = append(ids, op.ID)
	}
	if got := strings.Join(ids, " "); got != "BulkCreateThings ForgetThing GetThing ListThings" {
		t.Fatalf("operations: %s", got)
	}
	list := ops[3]
	if list.Entity != "Thing" || len(list.Query) != 4 {
		t.Errorf("ListThings: entity %q, query parameters %v", list.Entity, list.Query)
	}
	if _, ok := list.Query["where"]; !ok {
		t.Error("a referenced parameter must be resolved")
	}
	if _, ok := list.Query["space_id"]; ok {
		t.Error("path parameters are not converted")
	}
	if _, err := operations([]byte(strings.Replace(testDocument, "parameters/Where\"}, {\"name\": \"limit", "parameters/Nowhere\"}, {\"name\": \"limit", 1))); err == nil {
		t.Error("a reference to no parameter must be refused")
	}
}

func TestGenerate(t *testing.T) {
	ops, err := operations([]byte(testDocument))
	if err != nil {
		t.Fatal(err)
	}
	src, err := generate(ops)
	if err != nil {
		t.Fatal(err)
	}
	out := string(src)
	for _, want := range []string{
		"type listParamsStruct interface {\n\tapi.BulkCreateThingsParams |\n\t\tapi.GetThingParams |\n\t\tapi.ListThingsParams\n}",
		"func listParamsOf[P listParamsStruct](p P) listquery.Params { return listParamsOfAny(p) }",
		"case api.ListThingsParams:\n\t\treturn listquery.Params{Where: string(deref(p.Where)), IncludeHidden: string(deref(p.IncludeHidden)), Limit: (*int)(p.Limit)}",
		"case api.GetThingParams:\n\t\treturn listquery.Params{Select: string(deref(p.Select))}",
		"type copyParamsStruct interface {\n\tapi.BulkCreateThingsParams\n}",
		"case api.BulkCreateThingsParams:\n\t\treturn copyParams{NamePrefixes: (*string)(p.NamePrefixes), DryRun: (*bool)(p.DryRun)}",
		"case api.ListThingsParams:\n\t\treturn unit.DataFilter{WhereData: string(deref(p.WhereData))}",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the source lacks\n%s\n\nin\n%s", want, out)
		}
	}
	if strings.Contains(out, "ForgetThing") {
		t.Error("an operation that does not name its entity has no list parameters")
	}

	ops[3].Query["limit"] = parameter{Name: "limit", In: "query", Required: true}
	if _, err := generate(ops); err == nil || !strings.Contains(err.Error(), "ListThings requires limit") {
		t.Errorf("a required parameter must be refused, naming it: %v", err)
	}
	ops[3].Query["limit"] = parameter{Name: "limit", In: "query"}
	delete(ops[3].Query, "where_data")
	if _, err := generate(ops); err == nil || !strings.Contains(err.Error(), "dataFilterOf would convert nothing") {
		t.Errorf("a conversion of no operation must be refused: %v", err)
	}
}

func TestGoName(t *testing.T) {
	for param, want := range map[string]string{"where": "Where", "include_hidden": "IncludeHidden", "order_by": "OrderBy", "x-y.z": "XYZ"} {
		if got := goName(param); got != want {
			t.Errorf("goName(%q) = %q, want %q", param, got, want)
		}
	}
}
