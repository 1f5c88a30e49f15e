package httpapi

import (
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
		err := checkJSONText([]byte(body))
		require.Error(t, err, body)
		e := apierr.From(err)
		require.Equal(t, apierr.TypeUserInput, e.Type, body)
		require.Equal(t, item, e.Items[0].Item, body)
	}
	for _, body := range []string{
		`{"DisplayName": "caf\u00e9 \ud83d\ude00 ok", "Labels": {"é": "😀"}, "N": [1, true, null, "\\ud800"]}`,
		`{"a": "\u0000"}`, `not json`, `{"a": "unterminated`, `[]`, `"plain"`,
	} {
		require.NoError(t, checkJSONText([]byte(body)), body)
	}
}
