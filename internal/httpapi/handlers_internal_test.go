package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
)

// TestPatchBodyNoneBound: a handler given no bound body answers 400, never dereferences nil.
func TestPatchBodyNoneBound(t *testing.T) {
	_, err := patchBody(nil, nil)
	e := apierr.From(err)
	require.Equal(t, apierr.TypeUserInput, e.Type)
	require.Equal(t, http.StatusBadRequest, e.HTTPStatus())
	merge := json.RawMessage(`{"A":1}`)
	got, err := patchBody(nil, &merge)
	require.NoError(t, err)
	require.JSONEq(t, `{"A":1}`, string(got))
}
