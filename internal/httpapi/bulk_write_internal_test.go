package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
)

// TestBulkResponseWritesAsTheEncoder: a bulk answer written item by item is the bytes json.Encoder
// writes for the whole slice (nil, empty, HTML-escaped text, more than a buffer's worth).
func TestBulkResponseWritesAsTheEncoder(t *testing.T) {
	big := make([]api.DeleteResponse, 2000)
	for i := range big {
		big[i] = api.DeleteResponse{Message: strings.Repeat("<&>", 20), Error: &api.ResponseError{Message: "x"}}
	}
	for name, out := range map[string][]api.DeleteResponse{
		"nil": nil, "empty": {}, "one": {{Message: "gone"}}, "big": big,
	} {
		var want bytes.Buffer
		require.NoError(t, json.NewEncoder(&want).Encode(out))
		r, err := answeredInBulk(out, true, nil)
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		require.NoError(t, r.write(rec))
		require.Equal(t, http.StatusMultiStatus, rec.Code, name)
		require.Equal(t, want.String(), rec.Body.String(), name)
	}
}
