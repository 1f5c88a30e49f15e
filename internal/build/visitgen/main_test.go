package main

import (
	"testing"

	"github.com/hubd/hubd/internal/build/oasdoc"
)

func TestWriterOf(t *testing.T) {
	doc, err := oasdoc.Read([]byte(`{"paths": {
	  "/unit": {
	    "get": {"operationId": "ListUnits", "responses": {"200": {"content": {"application/json": {"schema": {"type": "array"}}}}}},
	    "patch": {"operationId": "BulkPatchUnits", "responses": {"200": {}, "207": {}}}
	  },
	  "/unit/{id}": {"get": {"operationId": "GetUnit", "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ExtendedUnit"}}}}}}},
	  "/unit_data": {"get": {"operationId": "SearchUnitData", "x-hubd-class": "streamed-read", "responses": {"200": {"content": {"application/json": {"schema": {"type": "array"}}}}}}},
	  "/data": {"get": {"operationId": "GetData", "responses": {}}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ListUnits": "pageResponse", "GetUnit": "itemResponse", "SearchUnitData": "streamResponse", "BulkPatchUnits": "bulkResponse"}
	for _, op := range doc.Operations {
		got, err := writerOf(op)
		if op.ID == "GetData" {
			if err == nil {
				t.Error("an operation without a JSON answer must be refused")
			}
			continue
		}
		if err != nil || got != want[op.ID] {
			t.Errorf("%s: got %q, %v; want %q", op.ID, got, err, want[op.ID])
		}
	}
}
