package store

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// EncodeJSON encodes a map or struct for a jsonb column. A nil map is stored as {} so reads have one form.
func EncodeJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the service's own map and struct types reach here; they always encode.
		panic(fmt.Sprintf("store: encoding jsonb: %v", err))
	}
	if string(b) == "null" {
		return []byte("{}")
	}
	return b
}

// DecodeJSON decodes a jsonb column into a fresh value of T.
func DecodeJSON[T any](raw []byte) (T, error) {
	var v T
	if len(raw) == 0 {
		return v, nil
	}
	// Most maps are empty: decoded without the decoder, to the same (empty, not nil) map.
	if rv := reflect.ValueOf(&v).Elem(); string(raw) == "{}" && rv.Kind() == reflect.Map {
		rv.Set(reflect.MakeMap(rv.Type()))
		return v, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("decoding jsonb column: %w", err)
	}
	return v, nil
}
