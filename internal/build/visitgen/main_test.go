package main

import "testing"

func TestWriterOf(t *testing.T) {
	answer := func(schema map[string]any) map[string]any {
		return map[string]any{"200": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": schema}}}}
	}
	for _, c := range []struct {
		op   operation
		want string
	}{
		{operation{OperationID: "ListUnits", Responses: answer(map[string]any{"type": "array"})}, "pageResponse"},
		{operation{OperationID: "GetUnit", Responses: answer(map[string]any{"$ref": "#/components/schemas/ExtendedUnit"})}, "itemResponse"},
		{operation{OperationID: "SearchUnitData", Class: "streamed-read", Responses: answer(map[string]any{"type": "array"})}, "streamResponse"},
		{operation{OperationID: "BulkPatchUnits", Responses: map[string]any{"200": map[string]any{}, "207": map[string]any{}}}, "bulkResponse"},
	} {
		got, err := writerOf(c.op)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.op.OperationID, got, err, c.want)
		}
	}
	if _, err := writerOf(operation{OperationID: "GetData", Responses: map[string]any{}}); err == nil {
		t.Error("an operation without a JSON answer must be refused")
	}
}
