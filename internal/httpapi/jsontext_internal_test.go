package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
)

func TestCheckJSONText(t *testing.T) {
	for body, item := range map[string]string{
		"{\"DisplayName\": \"a\xffb\"}":                          "DisplayName",
		`{"DisplayName": "a\udc00b"}`:                            "DisplayName",
		`{"DisplayName": "a\ud800b"}`:                            "DisplayName",
		`{"DisplayName": "a\ud800\u0041"}`:                       "DisplayName",
		"{\"Labels\": {\"k\xc3\": \"v\"}}":                       "Labels",
		"{\"Labels\": {\"ok\": \"v\", \"k\": \"\xed\xa0\x80\"}}": "Labels.k",
		`{"Subscriptions": [{"EventTypes": ["a", "\udfff"]}]}`:   "Subscriptions.0.EventTypes.1",
		`{"A": [1, {"B": [[], "x", "\ud800"]}]}`:                 "A.1.B.2",
		"\"\xff\"":                                               "(body)",
	} {
		err := checkJSONText([]byte(body), DefaultMaxJSONDepth, DefaultMaxJSONValues)
		require.Error(t, err, body)
		e := apierr.From(err)
		require.Equal(t, apierr.TypeUserInput, e.Type, body)
		require.Equal(t, item, e.Items[0].Item, body)
	}
	for _, body := range []string{
		`{"DisplayName": "caf\u00e9 \ud83d\ude00 ok", "Labels": {"é": "😀"}, "N": [1, true, null, "\\ud800"]}`,
		`{"a": "\u0000"}`, `not json`, `{"a": "unterminated`, `[]`, `"plain"`,
	} {
		require.NoError(t, checkJSONText([]byte(body), DefaultMaxJSONDepth, DefaultMaxJSONValues), body)
	}
}

// TestCheckJSONLimits: nesting past the depth and keys and values past the count are refused, naming the
// limit and where the body broke it; a body at the limits is accepted.
func TestCheckJSONLimits(t *testing.T) {
	nested := func(levels int) string {
		return `{"Claims": ` + strings.Repeat(`{"a": `, levels-1) + `1` + strings.Repeat(`}`, levels) // the body itself is a level
	}
	require.NoError(t, checkJSONText([]byte(nested(4)), 4, 100))
	err := apierr.From(checkJSONText([]byte(nested(5)), 4, 100))
	require.Equal(t, apierr.TypeUserInput, err.Type)
	require.Contains(t, err.Message, "deeper than 4 levels")
	require.Equal(t, "Claims.a.a.a", err.Items[0].Item, "where the fifth level opens")
	require.Error(t, checkJSONText([]byte(strings.Repeat("[", 9000)+strings.Repeat("]", 9000)), DefaultMaxJSONDepth, DefaultMaxJSONValues))

	keys := func(n int) string { // n keys and n values in one object: 2n+1 counted
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d": %d`, i, i)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	require.NoError(t, checkJSONText([]byte(keys(50)), 4, 101))
	err = apierr.From(checkJSONText([]byte(keys(51)), 4, 101))
	require.Equal(t, apierr.TypeUserInput, err.Type)
	require.Contains(t, err.Message, "more than 101 JSON keys and values")
}
