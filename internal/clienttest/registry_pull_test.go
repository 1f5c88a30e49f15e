package clienttest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/stretchr/testify/require"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/gen/client"
	"github.com/hubd/hubd/internal/apitest"
	hubdauth "github.com/hubd/hubd/internal/auth"
)

// publishedRelease is a Release of three Kubernetes Units, published for pulling by a ServiceAccount.
type publishedRelease struct {
	release api.Release
	files   map[string]string // bundle file name -> the Unit's data, as read from the API
	repo    string            // <organization slug>/<space slug>/<BundleBaseName>
	token   string            // the ServiceAccount's service token
}

func publishRelease(t *testing.T, env *apitest.Env) publishedRelease {
	t.Helper()
	admin := env.Client(env.Token("acme", "alice", hubdauth.RoleAdmin))
	var sp api.Space
	admin.Post("/api/space", map[string]any{"Slug": "prod"}).Expect(http.StatusOK).JSON(&sp)
	space := "/api/space/" + sp.SpaceID.String()
	var target api.Target
	admin.Post(space+"/target", map[string]any{"Slug": "cluster", "ToolchainType": "Kubernetes/YAML", "ProviderType": "FluxOCI"}).
		Expect(http.StatusOK).JSON(&target)
	p := publishedRelease{files: map[string]string{}, repo: "acme/prod/apps"}
	for slug, data := range map[string]string{
		"web":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  PORT: \"8080\"\n",
		"db":      "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: 5432\n",
		"ingress": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ingress\ndata:\n  host: shop.example.com\n",
	} {
		var u api.UnitCreateOrUpdateResponse
		admin.Post(space+"/unit", map[string]any{"Slug": slug, "ToolchainType": "Kubernetes/YAML", "TargetID": target.TargetID}).
			Expect(http.StatusOK).JSON(&u)
		unit := space + "/unit/" + u.Unit.UnitID.String()
		admin.Put(unit+"/data", apitest.Raw{ContentType: "application/yaml", Data: []byte(data)}).Expect(http.StatusOK)
		p.files[slug+".yaml"] = string(admin.Get(unit + "/data").Expect(http.StatusOK).Body)
	}
	admin.Post(space+"/release", map[string]any{"TargetID": target.TargetID, "BundleBaseName": "apps"}).Expect(http.StatusOK).JSON(&p.release)
	p.token = serviceAccountToken(t, env, newGoClient(t, env, env.Token("acme", "alice", hubdauth.RoleAdmin)), "puller", client.Viewer)
	return p
}

// requireBundle unpacks a pulled layer and compares every file with the Units' data.
func (p publishedRelease) requireBundle(t *testing.T, layer []byte) {
	t.Helper()
	require.Equal(t, p.release.Digest, digest.FromBytes(layer).String(), "the pulled layer is the published bundle")
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		got[h.Name] = string(data)
	}
	require.Equal(t, p.files, got)
}

// TestOrasPull: oras-go, the OCI client library of the oras CLI (and of Flux's and Argo CD's OCI
// sources), pulls a published Release through the challenge and the realm with a ServiceAccount's
// token as Basic password, by tag and by digest.
func TestOrasPull(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := publishRelease(t, env)
	host, err := url.Parse(env.URL)
	require.NoError(t, err)
	repo, err := remote.NewRepository(host.Host + "/" + p.repo)
	require.NoError(t, err)
	repo.PlainHTTP = true
	repo.Client = &auth.Client{
		Client:     env.HTTPClient(),
		Cache:      auth.NewCache(),
		Credential: auth.StaticCredential(host.Host, auth.Credential{Username: "puller", Password: p.token}),
	}
	ctx := context.Background()
	for _, ref := range []string{"latest", "1", p.release.ManifestDigest} {
		store := memory.New()
		desc, err := oras.Copy(ctx, repo, ref, store, "pulled", oras.DefaultCopyOptions)
		require.NoError(t, err, ref)
		require.Equal(t, p.release.ManifestDigest, desc.Digest.String())
		raw, err := content.FetchAll(ctx, store, desc)
		require.NoError(t, err)
		var m ocispec.Manifest
		require.NoError(t, json.Unmarshal(raw, &m))
		require.Len(t, m.Layers, 1)
		layer, err := content.FetchAll(ctx, store, m.Layers[0])
		require.NoError(t, err)
		p.requireBundle(t, layer)
	}
	tags, err := registryTags(ctx, repo)
	require.NoError(t, err)
	require.Equal(t, []string{"1", "latest"}, tags)

	// A wrong password is refused at the realm.
	repo.Client = &auth.Client{Client: env.HTTPClient(), Credential: auth.StaticCredential(host.Host, auth.Credential{Username: "puller", Password: "wrong"})}
	_, err = oras.Copy(ctx, repo, "latest", memory.New(), "pulled", oras.DefaultCopyOptions)
	require.ErrorContains(t, err, "401")
}

func registryTags(ctx context.Context, repo *remote.Repository) ([]string, error) {
	var out []string
	err := repo.Tags(ctx, "", func(tags []string) error {
		out = append(out, tags...)
		return nil
	})
	return out, err
}

// TestSkopeoPull: skopeo (Debian's package, which make test installs) copies a published Release from
// the registry into an OCI layout, through a proxy that checks every answer; the layout's layer is the
// bundle.
func TestSkopeoPull(t *testing.T) {
	t.Parallel()
	skopeo, err := exec.LookPath("skopeo")
	if err != nil {
		t.Fatalf("skopeo is not installed (%v): run make test, which installs Debian's skopeo package", err)
	}
	env := apitest.New(t)
	p := publishRelease(t, env)
	proxy, err := url.Parse(env.CheckedURL())
	require.NoError(t, err)
	dir := t.TempDir()
	out, err := exec.Command(skopeo, "copy", "--src-tls-verify=false", "--src-creds", "puller:"+p.token,
		"docker://"+proxy.Host+"/"+p.repo+":latest", "oci:"+dir+":pulled").CombinedOutput()
	require.NoError(t, err, string(out))

	var index ocispec.Index
	readJSON(t, filepath.Join(dir, "index.json"), &index)
	require.Len(t, index.Manifests, 1)
	require.Equal(t, p.release.ManifestDigest, index.Manifests[0].Digest.String())
	var m ocispec.Manifest
	readJSON(t, blobPath(dir, index.Manifests[0].Digest), &m)
	require.Len(t, m.Layers, 1)
	layer, err := os.ReadFile(blobPath(dir, m.Layers[0].Digest))
	require.NoError(t, err)
	p.requireBundle(t, layer)
}

func blobPath(layout string, d digest.Digest) string {
	return filepath.Join(layout, "blobs", d.Algorithm().String(), d.Encoded())
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// conformanceSuite is the OCI distribution-spec conformance suite, at the version this test runs.
const conformanceSuite = "github.com/opencontainers/distribution-spec/conformance@v0.0.0-20260831232431-97274622c111"

// TestOCIConformancePull runs the OCI distribution-spec conformance suite's pull category (its read-only
// mode: the content is named, nothing is pushed) against a published Release, through a proxy that
// checks every answer: ping, manifests by tag and digest with HEAD, blobs with HEAD, tag listing.
func TestOCIConformancePull(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	p := publishRelease(t, env)
	proxy, err := url.Parse(env.CheckedURL())
	require.NoError(t, err)
	dir := t.TempDir()
	config := fmt.Sprintf(`resultsDir: %q
version: "1.1"
registry: %q
tls: disabled
repo1: %q
repo2: %q
username: puller
password: %q
apis: {pull: true, push: false, blobs: {delete: false}, manifests: {delete: false}, tags: {delete: false, list: true}, referrer: false}
roData:
  tags: ["1", "latest"]
  manifests: [%q]
  blobs: [%q, %q]
`, filepath.Join(dir, "results"), proxy.Host, p.repo, p.repo, p.token, p.release.ManifestDigest, p.release.Digest, ocispec.DescriptorEmptyJSON.Digest)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "oci-conformance.yaml"), []byte(config), 0o600))
	cmd := exec.Command("go", "run", conformanceSuite)
	cmd.Env = append(os.Environ(), "OCI_CONFIGURATION="+filepath.Join(dir, "oci-conformance.yaml"))
	out, _ := cmd.CombinedOutput() // the suite's exit status does not tell its result; its report does
	report := string(out)
	require.Contains(t, report, "OCI Conformance Result: Pass", report)
	require.Regexp(t, `FAIL\.+:\s+0\n`, report)
	require.Regexp(t, `Error\.+:\s+0\n`, report)
	for _, api := range []string{"Ping", "Tag listing", "Blob get", "Blob head", "Manifest get by digest", "Manifest get by tag",
		"Manifest head by digest", "Manifest head by tag", "Read Only Inputs"} {
		require.Regexp(t, regexp.QuoteMeta(api)+`\.+:\s+Pass\n`, report)
	}
}
