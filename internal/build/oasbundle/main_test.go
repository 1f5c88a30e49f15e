package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestCheckEntity(t *testing.T) {
	components := object{
		"Where":            object{"name": "where", "in": "query"},
		"Include":          object{"name": "include", "in": "query"},
		"UnitWriteInclude": object{"name": "include", "in": "query"},
		"DryRun":           object{"name": "dry_run", "in": "query"},
	}
	ref := func(name string) object { return object{"$ref": "#/components/parameters/" + name} }
	for name, tc := range map[string]struct {
		op, item object
		want     string // a fragment of the problem; empty when there is none
	}{
		"no parameters":         {op: object{}},
		"other parameters":      {op: object{"parameters": []any{ref("DryRun")}}},
		"a write's own include": {op: object{"parameters": []any{ref("UnitWriteInclude"), ref("DryRun")}}},
		"shared where":          {op: object{"parameters": []any{ref("Where")}}, want: "takes where but has no x-hubd-entity"},
		"shared include":        {op: object{"parameters": []any{ref("Include")}}, want: "takes include but has no x-hubd-entity"},
		"inline order_by":       {op: object{"parameters": []any{object{"name": "order_by", "in": "query"}}}, want: "takes order_by"},
		"inline path where":     {op: object{"parameters": []any{object{"name": "where", "in": "path"}}}},
		"on the path item": {op: object{}, item: object{"parameters": []any{ref("Where")}},
			want: "takes where but has no x-hubd-entity"},
		"marked":           {op: object{"parameters": []any{ref("Where")}, "x-hubd-entity": "Unit"}},
		"marked, no name":  {op: object{"parameters": []any{ref("Where")}, "x-hubd-entity": ""}, want: "must be the Name"},
		"marked, a number": {op: object{"x-hubd-entity": 3}, want: "must be the Name"},
	} {
		if tc.item == nil {
			tc.item = object{}
		}
		got := checkEntity(tc.op, tc.item, components)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
}

func TestSharedRulesRefuseAnUnmarkedList(t *testing.T) {
	root := object{
		"openapi": "3.0.3",
		"paths": object{"/thing": object{"get": object{
			"operationId": "ListThings",
			"parameters":  []any{object{"$ref": "#/components/parameters/Where"}},
			"responses":   object{"200": object{"description": "ok"}},
		}}},
		"components": object{"parameters": object{"Where": object{"name": "where", "in": "query", "schema": object{"type": "string"}}}},
	}
	err := applySharedRules(root)
	if err == nil || !strings.Contains(err.Error(), "operation ListThings (GET /thing) takes where but has no x-hubd-entity") {
		t.Fatalf("got %v", err)
	}
}

func TestCheckPermission(t *testing.T) {
	for name, tc := range map[string]struct {
		op   object
		want string // a fragment of the problem; empty when there is none
	}{
		"missing":            {op: object{}, want: `has x-hubd-permission ""`},
		"unknown":            {op: object{"x-hubd-permission": "Root"}, want: "must be one of"},
		"a permission":       {op: object{"x-hubd-permission": "Edit"}},
		"public":             {op: object{"x-hubd-permission": "None", "security": []any{}}},
		"None with a token":  {op: object{"x-hubd-permission": "None"}, want: "None is for operations that need no token"},
		"public but guarded": {op: object{"x-hubd-permission": "View", "security": []any{}}, want: "None is for"},
	} {
		got := checkPermission(tc.op)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
		if tc.want == "" && !strings.HasPrefix(tc.op["description"].(string), "Needs") {
			t.Errorf("%s: the rule is not in the description: %q", name, tc.op["description"])
		}
	}
}

func TestCheckClass(t *testing.T) {
	for name, tc := range map[string]struct {
		op   object
		want string
	}{
		"none":          {op: object{}},
		"long poll":     {op: object{"x-hubd-class": "long-poll"}},
		"streamed read": {op: object{"x-hubd-class": "streamed-read"}},
		"long write":    {op: object{"x-hubd-class": "long-write"}},
		"unknown":       {op: object{"x-hubd-class": "slow"}, want: "must be long-poll, streamed-read or long-write"},
		"not a string":  {op: object{"x-hubd-class": true}, want: "must be long-poll, streamed-read or long-write"},
	} {
		got := checkClass(tc.op)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
}

func TestCheckTags(t *testing.T) {
	root := object{"tags": []any{object{"name": "Space"}}}
	for name, tc := range map[string]struct {
		op   object
		want string
	}{
		"listed":   {op: object{"tags": []any{"Space"}}},
		"untagged": {op: object{}, want: "has no tag"},
		"unlisted": {op: object{"tags": []any{"Spaces"}}, want: "has tag Spaces, which the document's tags list lacks"},
	} {
		got := checkTags(tc.op, root)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
}

func TestShapesSplitSharedSchemasAndRequireResponseFields(t *testing.T) {
	ref := func(name string) object { return object{"$ref": "#/components/schemas/" + name} }
	body := func(name string) object {
		return object{"content": object{"application/json": object{"schema": ref(name)}}}
	}
	root := object{
		"paths": object{"/thing": object{
			"post": object{"x-hubd-family": "Thing", "requestBody": body("Thing"), "responses": object{"200": body("Thing")}},
		}},
		"components": object{"schemas": object{
			"Thing": object{"type": "object", "required": []any{"Slug"}, "properties": object{
				"Slug":   object{"type": "string"},
				"ID":     object{"type": "string", "readOnly": true},
				"Grants": ref("Grants"),
			}},
			"Grants": object{"type": "object", "additionalProperties": ref("Grant")},
			"Grant":  object{"type": "object", "properties": object{"UserIDs": object{"type": "object"}}, "x-omitempty": false},
		}},
	}
	inputs, err := shapeRequestsAndResponses(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(inputs, ","); got != "GrantInput,GrantsInput,ThingInput" {
		t.Fatalf("request forms %s", got)
	}
	schemas := root["components"].(object)["schemas"].(object)
	post := root["paths"].(object)["/thing"].(object)["post"].(object)
	if got := post["requestBody"].(object)["content"].(object)["application/json"].(object)["schema"].(object)["$ref"]; got != "#/components/schemas/ThingInput" {
		t.Errorf("the request body refers to %v", got)
	}
	if got := post["responses"].(object)["200"].(object)["content"].(object)["application/json"].(object)["schema"].(object)["$ref"]; got != "#/components/schemas/Thing" {
		t.Errorf("the response refers to %v", got)
	}
	if got := fmt.Sprint(schemas["Thing"].(object)["required"]); got != "[Grants ID Slug]" {
		t.Errorf("the response form requires %s", got)
	}
	if got := fmt.Sprint(schemas["ThingInput"].(object)["required"]); got != "[Slug]" {
		t.Errorf("the request form requires %s", got)
	}
	if got := schemas["ThingInput"].(object)["properties"].(object)["Grants"].(object)["$ref"]; got != "#/components/schemas/GrantsInput" {
		t.Errorf("the request form's Grants refers to %v", got)
	}
	if _, ok := schemas["GrantInput"].(object)["required"]; ok {
		t.Error("the request form of Grant requires its properties")
	}
	served := withoutGeneratorKeys(root).(object)
	if _, ok := served["components"].(object)["schemas"].(object)["Grant"].(object)["x-omitempty"]; ok {
		t.Error("the served document keeps x-omitempty")
	}
	if _, ok := served["paths"].(object)["/thing"].(object)["post"].(object)["x-hubd-family"]; ok {
		t.Error("the served document keeps x-hubd-family")
	}
	variant := codegenVariant(root, inputs)
	if got := variant["paths"].(object)["/thing"].(object)["post"].(object)["x-hubd-family"]; got != "Thing" {
		t.Errorf("the codegen variant's x-hubd-family is %v", got)
	}
	if got := variant["components"].(object)["schemas"].(object)["ThingInput"]; fmt.Sprint(got) != "map[x-go-type:Thing]" {
		t.Errorf("the codegen variant's ThingInput is %v", got)
	}
}
