package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	distspec "github.com/opencontainers/distribution-spec/specs-go/v1"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/release"
	"github.com/hubd/hubd/internal/store"
)

// The registry serves published Releases to OCI clients (Flux's OCIRepository, Argo CD, oras, skopeo,
// crane) at {base}/v2/: the pull side of the OCI distribution API, read-only. A Release is the manifest
// tagged with its ReleaseNum in repository "<organization slug>/<space slug>/<BundleBaseName>"; "latest"
// is the newest published one. Its one layer is the bundle (GET .../release/{id}/data), its config the
// empty JSON object. Requests carry a service token, as Bearer or as the password of HTTP Basic (any
// user name), which docker-style clients send after the challenge; the token's organization is the
// only one whose repositories exist for the caller.

// registryFail answers an OCI error body {"errors":[{code, message, detail}]}.
func registryFail(c echo.Context, status int, code, message string) error {
	if c.Request().Method == http.MethodHead {
		return c.NoContent(status)
	}
	return c.JSON(status, distspec.ErrorResponse{Errors: []distspec.ErrorInfo{{Code: code, Message: message}}})
}

// registryError answers err: a miss of the registry as its OCI code, anything else as the service's
// failure (logged; 503 when the database cannot take requests).
func (s *Server) registryError(c echo.Context, err error) error {
	switch {
	case errors.Is(err, release.ErrNameUnknown):
		return registryFail(c, http.StatusNotFound, "NAME_UNKNOWN", "no such repository: name it <organization slug>/<space slug>/<BundleBaseName> of a Space you may view")
	case errors.Is(err, release.ErrManifestUnknown):
		return registryFail(c, http.StatusNotFound, "MANIFEST_UNKNOWN", "no such manifest: tags are the ReleaseNums of published Releases and latest")
	case errors.Is(err, release.ErrBlobUnknown):
		return registryFail(c, http.StatusNotFound, "BLOB_UNKNOWN", "no such blob in this repository")
	}
	ae := apierr.From(store.Translate(err))
	if ae.Type != apierr.TypeServiceUnavailable && ae.Type != apierr.TypeGatewayTimeout {
		s.log.Error("registry read failed", "path", c.Request().URL.Path, "err", err)
	}
	return registryFail(c, ae.HTTPStatus(), "UNKNOWN", ae.Message)
}

// registryRealm is where docker-style clients get a token after the challenge (GET /v2/token).
func (s *Server) registryRealm(c echo.Context) string {
	base := s.cfg.BaseURL
	if base == "" {
		base = c.Scheme() + "://" + c.Request().Host
	}
	return strings.TrimSuffix(base, "/") + "/v2/token"
}

// registryToken reads the caller's service token: Bearer, or the password of HTTP Basic.
func registryToken(r *http.Request) string {
	if _, password, ok := r.BasicAuth(); ok {
		return password
	}
	scheme, token, _ := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	if strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return ""
}

// registryCaller authenticates a registry request; without a valid token it answers 401 with the
// Bearer challenge (scope names the repository when there is one) and ok false.
func (s *Server) registryCaller(c echo.Context, repository string) (p auth.Principal, ok bool, err error) {
	token := registryToken(c.Request())
	if token != "" {
		p, err = s.authenticate(c.Request().Context(), "Bearer "+token)
		if err == nil {
			return p, true, nil
		}
		if ae := apierr.From(err); ae.Type != apierr.TypeAuthentication {
			return p, false, s.registryError(c, err)
		}
	}
	challenge := fmt.Sprintf(`Bearer realm=%q,service="hubd"`, s.registryRealm(c))
	if repository != "" {
		challenge += fmt.Sprintf(`,scope="repository:%s:pull"`, repository)
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, challenge)
	return p, false, registryFail(c, http.StatusUnauthorized, "UNAUTHORIZED",
		"send a service token as Bearer, or as the password of HTTP Basic (e.g. a ServiceAccount's token)")
}

// registryReadOnly refuses what would write: the registry only serves what was published.
func registryReadOnly(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderAllow, "GET, HEAD")
	return registryFail(c, http.StatusMethodNotAllowed, "UNSUPPORTED",
		"this registry is read-only: Releases are published with POST /api/space/{space_id}/release")
}

// registryPing serves GET /v2/: 200 to an authenticated caller, else the challenge.
func (s *Server) registryPing(c echo.Context) error {
	c.Response().Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
		return registryReadOnly(c)
	}
	if _, ok, err := s.registryCaller(c, ""); !ok {
		return err
	}
	return c.JSON(http.StatusOK, struct{}{})
}

// registryTokenResponse is the token endpoint's answer in the docker token protocol.
type registryTokenResponse struct {
	Token       string `json:"token"`
	AccessToken string `json:"access_token"`
}

// registryTokenEndpoint serves GET /v2/token, the challenge's realm: the client sends the credentials
// it was given (HTTP Basic, a service token as password) and gets that token back to send as Bearer.
// It mints nothing: the token is checked, and answered as it is.
func (s *Server) registryTokenEndpoint(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	if _, ok, err := s.registryCaller(c, ""); !ok {
		return err
	}
	token := registryToken(c.Request())
	return c.JSON(http.StatusOK, registryTokenResponse{Token: token, AccessToken: token})
}

// registryRoute serves everything under /v2/<name>/: manifests, blobs and tag lists.
func (s *Server) registryRoute(c echo.Context) error {
	rest := strings.TrimPrefix(c.Request().URL.Path, "/v2/")
	name, kind, ref := "", "", ""
	switch {
	case strings.HasSuffix(rest, "/tags/list"):
		name, kind = strings.TrimSuffix(rest, "/tags/list"), "tags"
	case strings.Contains(rest, "/manifests/"):
		i := strings.LastIndex(rest, "/manifests/")
		name, kind, ref = rest[:i], "manifests", rest[i+len("/manifests/"):]
	case strings.Contains(rest, "/blobs/"):
		i := strings.LastIndex(rest, "/blobs/")
		name, kind, ref = rest[:i], "blobs", rest[i+len("/blobs/"):]
	default:
		return registryFail(c, http.StatusNotFound, "NAME_UNKNOWN", "not a registry path: /v2/<name>/manifests/<reference>, /v2/<name>/blobs/<digest> or /v2/<name>/tags/list")
	}
	if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
		return registryReadOnly(c)
	}
	p, ok, err := s.registryCaller(c, name)
	if !ok {
		return err
	}
	ctx, sc, q := c.Request().Context(), authz.RequestScope(p), s.deps.Store.Q()
	repo, err := release.OpenRepository(ctx, q, sc, name)
	if err != nil {
		return s.registryError(c, err)
	}
	switch kind {
	case "tags":
		tags, err := repo.Tags(ctx, q, sc)
		if err != nil {
			return s.registryError(c, err)
		}
		return s.registryTags(c, name, tags)
	case "manifests":
		var r release.Release
		if d, derr := digest.Parse(ref); derr == nil {
			r, err = repo.ByManifestDigest(ctx, q, sc, d)
		} else {
			r, err = repo.ByTag(ctx, q, sc, ref)
		}
		if err != nil {
			return s.registryError(c, err)
		}
		return registryContent(c, ocispec.MediaTypeImageManifest, r.ManifestDigest, r.Manifest)
	default:
		d, derr := digest.Parse(ref)
		if derr != nil {
			return registryFail(c, http.StatusBadRequest, "DIGEST_INVALID", "a blob is named by its digest, e.g. sha256:<64 hex digits>")
		}
		blob, err := repo.Blob(ctx, q, sc, d)
		if err != nil {
			return s.registryError(c, err)
		}
		return registryContent(c, "application/octet-stream", d.String(), blob)
	}
}

// registryContent answers content-addressed bytes (with HEAD, ranges and If-None-Match): they never
// change, so clients may cache them for good.
func registryContent(c echo.Context, mediaType, dgst string, body []byte) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, mediaType)
	h.Set("Docker-Content-Digest", dgst)
	h.Set("ETag", strconv.Quote(dgst))
	h.Set("Cache-Control", "private, max-age=31536000, immutable")
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(body))
	return nil
}

// registryTags answers a tag list, lexically ordered, a page at a time when n is given: the tags after
// last, and a Link to the next page when more remain.
func (s *Server) registryTags(c echo.Context, name string, tags []string) error {
	q := c.QueryParams()
	if last := q.Get("last"); last != "" {
		tags = tags[sort.SearchStrings(tags, last):]
		if len(tags) > 0 && tags[0] == last {
			tags = tags[1:]
		}
	}
	if v := q.Get("n"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return registryFail(c, http.StatusBadRequest, "UNSUPPORTED", "n must be a whole number, the most tags to answer")
		}
		if n < len(tags) {
			tags = tags[:n]
			if n > 0 {
				next := url.Values{"n": {v}, "last": {tags[n-1]}}
				c.Response().Header().Set("Link", fmt.Sprintf(`</v2/%s/tags/list?%s>; rel="next"`, name, next.Encode()))
			}
		}
	}
	return c.JSON(http.StatusOK, distspec.TagList{Name: name, Tags: tags})
}
