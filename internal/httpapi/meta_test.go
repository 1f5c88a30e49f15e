package httpapi_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/gen/oas"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func TestDocumentServed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	resp := env.Anonymous().Get("/api/docs").Expect(http.StatusOK)
	require.JSONEq(t, string(oas.Document), string(resp.Body))
	doc, err := openapi3.NewLoader().LoadFromData(resp.Body)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	// Every operation has an operationId and declares the errors and headers of the contract.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.NotEmpty(t, op.OperationID, "%s %s", method, path)
			// Sign-in and health, served at the base address, declare their own bodies.
			if op.Extensions["x-hubd-served"] != "root" {
				for _, code := range []string{"400", "404", "500"} {
					require.NotNil(t, op.Responses.Value(code), "%s lacks %s", op.OperationID, code)
				}
			}
			for code, r := range op.Responses.Map() {
				require.NotNil(t, r.Value.Headers["X-Request-Id"], "%s %s lacks X-Request-Id", op.OperationID, code)
			}
		}
	}
}

// TestRootEndpoints: sign-in and health are served at the base address and under /api, with the same
// answers; under /api they are checked against the document (which describes them).
func TestRootEndpoints(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Anonymous()
	for _, prefix := range []string{"", "/api"} {
		require.Equal(t, "ok", c.Get(prefix + "/healthz").Expect(http.StatusOK).Map()["Status"])
		require.Equal(t, "ready", c.Get(prefix + "/readyz").Expect(http.StatusOK).Map()["Status"])
		var set api.JWKSet
		c.Get(prefix + "/auth/jwks.json").Expect(http.StatusOK).JSON(&set)
		require.NotEmpty(t, set.Keys)
		require.Equal(t, "EC", set.Keys[0]["kty"])
		require.NotContains(t, set.Keys[0], "d", "no private member")
		resp := c.Post(prefix+"/auth/worker", map[string]any{"WorkerID": uuid.NewString(), "Secret": "wrong"}).Expect(http.StatusUnauthorized)
		require.Equal(t, "invalid_client", resp.Map()["error"])
		resp = c.Post(prefix+"/auth/token", apitest.Raw{ContentType: "application/x-www-form-urlencoded", Data: []byte("grant_type=password")}).
			Expect(http.StatusBadRequest)
		require.Equal(t, "unsupported_grant_type", resp.Map()["error"])
	}
}

func TestInfoAndMe(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	var info api.ApiInfo
	resp := env.Anonymous().Get("/api/info").Expect(http.StatusOK)
	resp.JSON(&info)
	require.Equal(t, "", info.AuthIssuer)
	require.Equal(t, env.URL+"/auth/token", info.TokenExchangeEndpoint)
	require.Equal(t, env.URL+"/auth/token", info.TokenExchangeAudience, "the aud a signed assertion carries")
	require.Equal(t, resp.Header.Get("Hubd-Version"), info.Version)
	require.NotEmpty(t, info.Version)

	p := env.Principal("acme", "alice", auth.RoleManager)
	var me api.OrganizationMember
	env.Client(env.Token("acme", "alice", auth.RoleManager)).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, p.UserID, me.UserID)
	require.Equal(t, p.OrganizationID, me.OrganizationID)
	require.Equal(t, "alice", me.Username)
	require.Equal(t, api.OrgRole("manager"), me.OrgRole)
}

func TestOperationsEndpoints(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	c.Get("/api/space").Expect(http.StatusOK)
	c.Get("/healthz").Expect(http.StatusOK)
	c.Get("/readyz").Expect(http.StatusOK)
	metrics := string(c.Get("/metrics").Expect(http.StatusOK).Body)
	require.Contains(t, metrics, `hubd_http_requests_total{operation="ListSpaces",status="200"} 1`)
	require.Contains(t, metrics, `hubd_http_request_duration_seconds_bucket{operation="ListSpaces"`)
	require.Contains(t, metrics, "hubd_db_pool_max_connections")

	env.Server.Drain()
	c.Get("/readyz").Expect(http.StatusServiceUnavailable)
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	good := env.Token("acme", "alice", auth.RoleAdmin)
	p := env.Principal("acme", "alice", auth.RoleAdmin)
	for name, header := range map[string]string{
		"no token":       "",
		"other scheme":   "Basic YWxpY2U6c2VjcmV0",
		"empty bearer":   "Bearer ",
		"garbage":        "Bearer not.a.jwt",
		"tampered":       "Bearer " + good[:len(good)-4] + "AAAA",
		"expired":        "Bearer " + mintWith(t, env, p, func(is *auth.Issuer) { is.Now = func() time.Time { return time.Now().Add(-3 * time.Hour) } }),
		"other issuer":   "Bearer " + mintWith(t, env, p, func(is *auth.Issuer) { is.URL = "https://elsewhere.example" }),
		"foreign key":    "Bearer " + foreignToken(t, env, p),
		"other audience": "Bearer " + serviceSigned(t, env, p, func(c map[string]any) { c["aud"] = []string{"someone-else"} }),
		"no exp":         "Bearer " + serviceSigned(t, env, p, func(c map[string]any) { delete(c, "exp") }),
		"no iat":         "Bearer " + serviceSigned(t, env, p, func(c map[string]any) { delete(c, "iat") }),
		"no iss":         "Bearer " + serviceSigned(t, env, p, func(c map[string]any) { delete(c, "iss") }),
		"no aud":         "Bearer " + serviceSigned(t, env, p, func(c map[string]any) { delete(c, "aud") }),
		"iat in future":  "Bearer " + serviceSigned(t, env, p, func(c map[string]any) { c["iat"] = time.Now().Add(10 * time.Minute).Unix() }),
		"lives too long": "Bearer " + serviceSigned(t, env, p, func(c map[string]any) {
			c["exp"] = time.Now().Add(365 * 24 * time.Hour).Unix()
		}),
		"unknown subject": "Bearer " + mintWith(t, env, auth.Principal{UserID: uuid.New(), OrganizationID: p.OrganizationID, Role: auth.RoleAdmin}, nil),
	} {
		resp := env.Anonymous().Get("/api/space", apitest.WithHeader("Authorization", header))
		e := resp.ExpectError(http.StatusUnauthorized, api.ErrorTypeAuthentication)
		require.NotEmpty(t, e.Error.Message, name)
	}
	// A token minted for another base address says which issuer it has and which one is expected.
	other := mintWith(t, env, p, func(is *auth.Issuer) { is.URL = "https://elsewhere.example" })
	msg := env.Client(other).Get("/api/space").ExpectError(http.StatusUnauthorized, api.ErrorTypeAuthentication).Error.Message
	require.Contains(t, msg, `issued by "https://elsewhere.example"`)
	require.Contains(t, msg, `is "`+env.App.Issuer.URL+`"`)

	env.Client(good).Get("/api/space").Expect(http.StatusOK)
	env.Client(serviceSigned(t, env, p, func(map[string]any) {})).Get("/api/space").Expect(http.StatusOK)
	env.Anonymous().Get("/api/space", apitest.WithHeader("Authorization", "bearer "+good)).Expect(http.StatusOK)

	// A token never grants more than the membership holds now.
	viewer := env.Principal("acme", "vic", auth.RoleViewer)
	viewer.Role = auth.RoleAdmin
	strong := env.Client(mintWith(t, env, viewer, nil))
	strong.Post("/api/space", map[string]any{"Slug": "x"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var me api.OrganizationMember
	strong.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, api.OrgRole("viewer"), me.OrgRole)
}

func mintWith(t *testing.T, env *apitest.Env, p auth.Principal, adjust func(*auth.Issuer)) string {
	t.Helper()
	is := *env.App.Issuer
	if adjust != nil {
		adjust(&is)
	}
	tok, _, err := is.Mint(p)
	require.NoError(t, err)
	return tok
}

// foreignToken is well-formed and carries the right claims, but is signed by a key hubd never had.
func foreignToken(t *testing.T, env *apitest.Env, p auth.Principal) string {
	t.Helper()
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	key, err := jwk.FromRaw(raw)
	require.NoError(t, err)
	require.NoError(t, key.Set(jwk.KeyIDKey, "foreign"))
	tok, err := jwt.NewBuilder().Issuer(env.URL).Audience([]string{auth.Audience}).Subject(p.UserID.String()).
		Expiration(time.Now().Add(time.Hour)).Claim("org", p.OrganizationID.String()).Claim("role", "admin").Build()
	require.NoError(t, err)
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	require.NoError(t, err)
	return string(signed)
}

// serviceSigned signs claims with hubd's own current key, so only the claims decide whether it verifies.
// claims starts from a complete, valid set for p; edit drops or changes some of them.
func serviceSigned(t *testing.T, env *apitest.Env, p auth.Principal, edit func(claims map[string]any)) string {
	t.Helper()
	var raw []byte
	require.NoError(t, env.App.Store.Pool.QueryRow(context.Background(),
		"SELECT private_jwk FROM signing_key WHERE retired_at IS NULL").Scan(&raw))
	key, err := jwk.ParseKey(raw)
	require.NoError(t, err)
	now := time.Now()
	claims := map[string]any{
		"iss": env.URL, "aud": []string{auth.Audience}, "sub": p.UserID.String(), "iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(), "org": p.OrganizationID.String(), "role": string(p.Role),
	}
	edit(claims)
	tok := jwt.New()
	for k, v := range claims {
		require.NoError(t, tok.Set(k, v))
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	require.NoError(t, err)
	return string(signed)
}

// TestKeyRotation: keys are shared by replicas through the database; after a rotation old tokens keep
// working until they expire, new tokens use the new key, and the JWKS publishes both.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	replica := apitest.New(t, apitest.Options{DatabaseURL: env.DBURL})
	old := env.Token("acme", "alice", auth.RoleAdmin)
	// Tokens verify on any replica sharing the database... once their issuer matches: make it so.
	replica.App.Issuer.URL = env.App.Issuer.URL

	var jwks struct{ Keys []map[string]any }
	env.Anonymous().Get("/auth/jwks.json").Expect(http.StatusOK).JSON(&jwks)
	require.Len(t, jwks.Keys, 1)
	require.Equal(t, "ES256", jwks.Keys[0]["alg"])
	require.NotContains(t, jwks.Keys[0], "d", "the JWKS must not publish the private key")

	kid, err := env.App.Keys.Rotate(context.Background())
	require.NoError(t, err)
	fresh := env.Token("acme", "alice", auth.RoleAdmin)
	msg, err := jws.ParseString(fresh)
	require.NoError(t, err)
	require.Equal(t, kid, msg.Signatures()[0].ProtectedHeaders().KeyID(), "new tokens are signed with the new key")

	env.Anonymous().Get("/auth/jwks.json").Expect(http.StatusOK).JSON(&jwks)
	require.Len(t, jwks.Keys, 2)
	kids := []any{jwks.Keys[0]["kid"], jwks.Keys[1]["kid"]}
	require.Contains(t, kids, kid)

	for _, e := range []*apitest.Env{env, replica} {
		e.Client(old).Get("/api/me").Expect(http.StatusOK)
		e.Client(fresh).Get("/api/me").Expect(http.StatusOK)
	}
}
