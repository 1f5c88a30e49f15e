package apitest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
)

// TestValidateCatchesContractBreaks proves the response check can fail: each broken response is refused.
func TestValidateCatchesContractBreaks(t *testing.T) {
	id := uuid.New()
	good := api.ExtendedSpace{Space: api.Space{
		SpaceID: id, OrganizationID: uuid.New(), Slug: "dev", Labels: api.Labels{}, Annotations: api.Annotations{},
		DeleteGates: api.DeleteGates{}, Permissions: api.Permissions{}, TriggerIDs: []uuid.UUID{}, EntityType: "Space",
		CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC(), Version: 1,
	}}
	goodBody, err := json.Marshal(good)
	require.NoError(t, err)
	var asMap map[string]any
	require.NoError(t, json.Unmarshal(goodBody, &asMap))

	headers := func() http.Header {
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("X-Request-Id", "r1")
		h.Set("Hubd-Version", "v0")
		return h
	}
	check := func(path string, status int, h http.Header, body []byte) error {
		req, err := http.NewRequest(http.MethodGet, "http://hubd.test"+path, nil)
		require.NoError(t, err)
		_, err = validate(req, nil, &http.Response{StatusCode: status, Header: h}, body)
		return err
	}
	spacePath := "/api/space/" + id.String()

	require.NoError(t, check(spacePath, 200, headers(), goodBody))

	missing := map[string]any{"Error": nil}
	b, _ := json.Marshal(missing)
	require.Error(t, check(spacePath, 200, headers(), b), "a required field is missing")

	wrongType := map[string]any{"Error": nil, "Space": map[string]any{"Slug": "dev", "Version": "1"}}
	b, _ = json.Marshal(wrongType)
	require.Error(t, check(spacePath, 200, headers(), b), "a field has the wrong type")

	require.Error(t, check(spacePath, http.StatusTeapot, headers(), goodBody), "an undeclared status")

	h := headers()
	h.Del("X-Request-Id")
	require.Error(t, check(spacePath, 200, h, goodBody), "a missing X-Request-Id")

	require.Error(t, check("/api/not/a/path", 200, headers(), goodBody), "an unknown path must be 404")
	errBody := []byte(`{"Error":{"Message":"m","Type":"NotFound","Status":404,"Details":[],"ErrorMetadata":{"EntityType":"","EntityID":"","EntitySlug":"","Items":[]}},"message":"m"}`)
	require.NoError(t, check("/api/not/a/path", 404, headers(), errBody))
	require.Error(t, check("/api/not/a/path", 404, headers(), []byte(`{"error":"nope"}`)), "404 without the error body")
}
