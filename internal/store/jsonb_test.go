package store_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/store"
)

// DecodeJSON decodes every column value as json.Unmarshal would, the empty-map shortcut included.
func TestDecodeJSONIsUnmarshal(t *testing.T) {
	type meta struct{ A string }
	for _, raw := range []string{"{}", `{"A":null}`, "", "null"} {
		t.Run(raw, func(t *testing.T) {
			checkDecode[map[string]string](t, raw)
			checkDecode[map[string]bool](t, raw)
			checkDecode[meta](t, raw)
			checkDecode[*meta](t, raw)
		})
	}
}

func checkDecode[T any](t *testing.T, raw string) {
	t.Helper()
	got, err := store.DecodeJSON[T]([]byte(raw))
	require.NoError(t, err)
	var want T
	if raw != "" { // an absent value (SQL NULL) decodes to T's zero value
		require.NoError(t, json.Unmarshal([]byte(raw), &want))
	}
	require.Equal(t, want, got)
	if m, ok := any(got).(map[string]string); ok && raw == "{}" {
		require.NotNil(t, m, "an empty map stays a map, not nil")
	}
}
