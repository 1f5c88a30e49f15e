package main

import (
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
		"unknown":       {op: object{"x-hubd-class": "slow"}, want: "must be long-poll or streamed-read"},
		"not a string":  {op: object{"x-hubd-class": true}, want: "must be long-poll or streamed-read"},
	} {
		got := checkClass(tc.op)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
}
