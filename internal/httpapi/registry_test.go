package httpapi_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	distspec "github.com/opencontainers/distribution-spec/specs-go/v1"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// registryGet makes a request of the OCI registry with an Authorization header (none when empty).
func registryGet(t *testing.T, env *apitest.Env, method, path, authorization string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, env.URL+path, nil)
	require.NoError(t, err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := env.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// registryErrorCode reads the one code of an OCI error body.
func registryErrorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e distspec.ErrorResponse
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	require.Len(t, e.Errors, 1, string(body))
	require.NotEmpty(t, e.Errors[0].Message)
	return e.Errors[0].Code
}

// TestRegistryProtocol: the pull side of the OCI distribution API over published Releases: the token
// challenge, Bearer and Basic credentials, manifests by tag and digest (with HEAD), blobs, tag lists
// with pages, withdrawn Releases, and the refusals, each with its OCI error code.
func TestRegistryProtocol(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newReleaseFixture(t, env)
	bearer := "Bearer " + env.Token("acme", "alice", auth.RoleAdmin)
	var r1, r2 api.Release
	f.admin.Post(f.space+"/release", map[string]any{"TargetID": f.target.TargetID, "BundleBaseName": "shop-envs"}).Expect(http.StatusOK).JSON(&r1)
	f.admin.Put(f.units["web"]+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("PORT=9090\n")}).Expect(http.StatusOK)
	f.admin.Post(f.space+"/release", map[string]any{"TargetID": f.target.TargetID, "BundleBaseName": "shop-envs"}).Expect(http.StatusOK).JSON(&r2)
	repo := "/v2/acme/shop/shop-envs"

	// Without a token: the challenge that sends docker-style clients to the realm.
	resp, body := registryGet(t, env, http.MethodGet, "/v2/", "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, "UNAUTHORIZED", registryErrorCode(t, body))
	require.Equal(t, `Bearer realm="`+env.URL+`/v2/token",service="hubd"`, resp.Header.Get("WWW-Authenticate"))
	resp, _ = registryGet(t, env, http.MethodGet, repo+"/manifests/latest", "Bearer not-a-token")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, resp.Header.Get("WWW-Authenticate"), `scope="repository:acme/shop/shop-envs:pull"`)

	// A service token as Bearer, or as Basic's password; the realm answers the token it was given.
	resp, _ = registryGet(t, env, http.MethodGet, "/v2/", bearer)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "registry/2.0", resp.Header.Get("Docker-Distribution-API-Version"))
	token := strings.TrimPrefix(bearer, "Bearer ")
	req, _ := http.NewRequest(http.MethodGet, env.URL+"/v2/token?service=hubd&scope=repository:acme/shop/shop-envs:pull", nil)
	req.SetBasicAuth("anyone", token)
	tr, err := env.HTTPClient().Do(req)
	require.NoError(t, err)
	var issued struct{ Token, AccessToken string }
	require.NoError(t, json.NewDecoder(tr.Body).Decode(&issued))
	tr.Body.Close()
	require.Equal(t, http.StatusOK, tr.StatusCode)
	require.Equal(t, token, issued.Token)
	req.SetBasicAuth("anyone", "wrong")
	tr, err = env.HTTPClient().Do(req)
	require.NoError(t, err)
	tr.Body.Close()
	require.Equal(t, http.StatusUnauthorized, tr.StatusCode)

	// Manifests by tag: the ReleaseNum, and latest; the bytes are those published (ManifestDigest).
	manifest := func(ref string, want api.Release) ocispec.Manifest {
		t.Helper()
		resp, body := registryGet(t, env, http.MethodGet, repo+"/manifests/"+ref, bearer)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		require.Equal(t, ocispec.MediaTypeImageManifest, resp.Header.Get("Content-Type"))
		require.Equal(t, want.ManifestDigest, resp.Header.Get("Docker-Content-Digest"))
		sum := sha256.Sum256(body)
		require.Equal(t, want.ManifestDigest, "sha256:"+hex.EncodeToString(sum[:]))
		var m ocispec.Manifest
		require.NoError(t, json.Unmarshal(body, &m))
		return m
	}
	m1 := manifest("1", r1)
	require.Len(t, m1.Layers, 1)
	require.Equal(t, r1.Digest, m1.Layers[0].Digest.String())
	require.Equal(t, ocispec.MediaTypeImageLayerGzip, m1.Layers[0].MediaType)
	require.Equal(t, r2.Digest, manifest("latest", r2).Layers[0].Digest.String())
	require.Equal(t, r1.Digest, manifest(r1.ManifestDigest, r1).Layers[0].Digest.String())
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ci:"+token))
	resp, _ = registryGet(t, env, http.MethodGet, repo+"/manifests/1", basic)
	require.Equal(t, http.StatusOK, resp.StatusCode, "Basic with a service token as password, without the realm")
	resp, body = registryGet(t, env, http.MethodHead, repo+"/manifests/2", bearer)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)
	require.Equal(t, r2.ManifestDigest, resp.Header.Get("Docker-Content-Digest"))

	// Blobs: the bundle (the bytes GET .../data serves) and the empty config.
	resp, body = registryGet(t, env, http.MethodGet, repo+"/blobs/"+r1.Digest, bearer)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, f.admin.Get(f.space+"/release/"+r1.ReleaseID.String()+"/data").Expect(http.StatusOK).Body, body)
	require.Equal(t, r1.Digest, resp.Header.Get("Docker-Content-Digest"))
	resp, body = registryGet(t, env, http.MethodGet, repo+"/blobs/"+m1.Config.Digest.String(), bearer)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "{}", string(body))
	resp, body = registryGet(t, env, http.MethodHead, repo+"/blobs/"+r2.Digest, bearer)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, body)
	require.NotEqual(t, "0", resp.Header.Get("Content-Length"))

	// The tag list, lexically ordered, a page at a time.
	var tags distspec.TagList
	resp, body = registryGet(t, env, http.MethodGet, repo+"/tags/list", bearer)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.Unmarshal(body, &tags))
	require.Equal(t, distspec.TagList{Name: "acme/shop/shop-envs", Tags: []string{"1", "2", "latest"}}, tags)
	resp, body = registryGet(t, env, http.MethodGet, repo+"/tags/list?n=1&last=1", bearer)
	require.NoError(t, json.Unmarshal(body, &tags))
	require.Equal(t, []string{"2"}, tags.Tags)
	require.Equal(t, `</v2/acme/shop/shop-envs/tags/list?last=2&n=1>; rel="next"`, resp.Header.Get("Link"))

	// A withdrawn Release loses its tag, and latest moves back; its content stays readable by digest.
	f.admin.Post(f.space+"/release/"+r2.ReleaseID.String()+"/withdraw", nil).Expect(http.StatusOK)
	require.Equal(t, r1.Digest, manifest("latest", r1).Layers[0].Digest.String())
	resp, body = registryGet(t, env, http.MethodGet, repo+"/manifests/2", bearer)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "MANIFEST_UNKNOWN", registryErrorCode(t, body))
	manifest(r2.ManifestDigest, r2)
	resp, body = registryGet(t, env, http.MethodGet, repo+"/tags/list", bearer)
	require.NoError(t, json.Unmarshal(body, &tags))
	require.Equal(t, []string{"1", "latest"}, tags.Tags)

	// Refusals, each with its code.
	for _, c := range []struct{ method, path, code string }{
		{http.MethodGet, "/v2/acme/shop/nothing/manifests/latest", "NAME_UNKNOWN"},
		{http.MethodGet, "/v2/acme/nowhere/shop-envs/manifests/latest", "NAME_UNKNOWN"},
		{http.MethodGet, "/v2/other/shop/shop-envs/manifests/latest", "NAME_UNKNOWN"},
		{http.MethodGet, "/v2/shop/shop-envs/tags/list", "NAME_UNKNOWN"},
		{http.MethodGet, repo + "/manifests/3", "MANIFEST_UNKNOWN"},
		{http.MethodGet, repo + "/manifests/01", "MANIFEST_UNKNOWN"},
		{http.MethodGet, repo + "/manifests/sha256:" + strings.Repeat("0", 64), "MANIFEST_UNKNOWN"},
		{http.MethodGet, repo + "/blobs/sha256:" + strings.Repeat("0", 64), "BLOB_UNKNOWN"},
		{http.MethodGet, repo + "/blobs/" + r1.ManifestDigest, "BLOB_UNKNOWN"},
		{http.MethodGet, repo + "/blobs/latest", "DIGEST_INVALID"},
		{http.MethodPut, repo + "/manifests/3", "UNSUPPORTED"},
		{http.MethodPost, repo + "/blobs/uploads/", "UNSUPPORTED"},
		{http.MethodDelete, repo + "/manifests/1", "UNSUPPORTED"},
	} {
		resp, body := registryGet(t, env, c.method, c.path, bearer)
		require.Equal(t, c.code, registryErrorCode(t, body), "%s %s", c.method, c.path)
		if c.code == "UNSUPPORTED" {
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
			require.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
		}
	}
}

// TestRegistryTenancy: a repository exists only for callers of its organization who may see into its
// Space and view its Releases; anyone else gets NAME_UNKNOWN or MANIFEST_UNKNOWN, as for a name that
// does not exist.
func TestRegistryTenancy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newReleaseFixture(t, env)
	var r api.Release
	f.admin.Post(f.space+"/release", map[string]any{"TargetID": f.target.TargetID}).Expect(http.StatusOK).JSON(&r)
	repo := "/v2/acme/shop/" + r.BundleBaseName
	code := func(token, path string) string {
		t.Helper()
		resp, body := registryGet(t, env, http.MethodGet, path, "Bearer "+token)
		if resp.StatusCode == http.StatusOK {
			return "OK"
		}
		return registryErrorCode(t, body)
	}
	require.Equal(t, "OK", code(env.Token("acme", "vera", auth.RoleViewer), repo+"/manifests/latest"))
	// Another organization, also of a User who belongs to both: its token names its own organization.
	require.Equal(t, "NAME_UNKNOWN", code(env.Token("globex", "gus", auth.RoleAdmin), repo+"/manifests/latest"))
	require.Equal(t, "NAME_UNKNOWN", code(env.Token("globex", "gus", auth.RoleAdmin), "/v2/globex/shop/"+r.BundleBaseName+"/manifests/latest"))
	env.Token("acme", "dual", auth.RoleAdmin)
	require.Equal(t, "NAME_UNKNOWN", code(env.Token("globex", "dual", auth.RoleAdmin), repo+"/tags/list"))
	require.Equal(t, "NAME_UNKNOWN", code(env.Token("globex", "dual", auth.RoleAdmin), repo+"/blobs/"+r.Digest))
	// A guest sees into no Space without a grant.
	require.Equal(t, "NAME_UNKNOWN", code(env.Token("acme", "gil", auth.RoleGuest), repo+"/manifests/latest"))

	// A grant of View on the Space lets the guest pull.
	gil := env.Principal("acme", "gil", auth.RoleGuest)
	f.admin.Patch(f.space, map[string]any{"Permissions": map[string]any{
		"View": map[string]any{"UserIDs": map[string]bool{gil.UserID.String(): true}}}}).Expect(http.StatusOK)
	require.Equal(t, "OK", code(env.Token("acme", "gil", auth.RoleGuest), repo+"/manifests/latest"))
	require.Equal(t, "OK", code(env.Token("acme", "gil", auth.RoleGuest), repo+"/blobs/"+r.Digest))
}
