package oidcprovider_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/identity"
	"github.com/hubd/hubd/internal/oidcprovider"
)

const (
	redirectURI = "https://app.example.test/callback"
	scopes      = "openid email profile organization"
	alice       = "alice@example.com"
	alicePass   = "correct horse battery"
)

// fixture is a running hubd with an organization acme, its member alice (with a password) and a client
// of acme registered as the registration endpoint would.
type fixture struct {
	env      *apitest.Env
	issuer   string
	clientID string
	aliceID  uuid.UUID
	acmeID   uuid.UUID
}

// embedded is the mode of a hubd that is its own OpenID provider (hubd serve without --auth-issuer).
var embedded = apitest.Options{Auth: identity.Config{Mode: identity.ModeEmbedded}}

func setup(t *testing.T) *fixture {
	t.Helper()
	env := apitest.New(t, embedded)
	p := env.Principal("acme", alice, auth.RoleMember)
	require.NoError(t, oidcprovider.SetPassword(context.Background(), env.App.Store, p.UserID, alicePass))
	f := &fixture{env: env, issuer: env.URL + "/oidc", aliceID: p.UserID, acmeID: p.OrganizationID}
	f.clientID = f.addClient(t, p.OrganizationID, "app", false)
	return f
}

// addClient inserts an oauth_client row with redirectURI, as POST /api/oauth_client would.
func (f *fixture) addClient(t *testing.T, orgID uuid.UUID, name string, allOrgs bool) string {
	t.Helper()
	id := "c-" + uuid.NewString()
	_, err := f.env.App.Store.Pool.Exec(context.Background(),
		`INSERT INTO oauth_client (client_id, organization_id, name, redirect_uris, allow_all_orgs) VALUES ($1, $2, $3, $4, $5)`,
		id, orgID, name, []string{redirectURI}, allOrgs)
	require.NoError(t, err)
	return id
}

// browser is a cookie-keeping client that follows redirects within hubd and stops at the app's.
func (f *fixture) browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	app := mustParse(t, redirectURI).Host
	return &http.Client{Jar: jar, Transport: f.env.Transport(), CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host == app {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

func mustParse(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// pkce returns a fresh code_verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func (f *fixture) authorizeURL(clientID, redirect string, extra url.Values) string {
	q := url.Values{"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {scopes},
		"state": {"st4te"}, "nonce": {"n0nce"}}
	for k, v := range extra {
		q[k] = v
	}
	return f.issuer + "/authorize?" + q.Encode()
}

type page struct {
	status    int
	header    http.Header
	body      string
	requestID string
	csrf      string
}

var (
	requestIDField = regexp.MustCompile(`name="authRequestID" value="([^"]+)"`)
	csrfField      = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
)

func read(t *testing.T, resp *http.Response) page {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	p := page{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if m := requestIDField.FindStringSubmatch(p.body); m != nil {
		p.requestID = m[1]
	}
	if m := csrfField.FindStringSubmatch(p.body); m != nil {
		p.csrf = m[1]
	}
	return p
}

// startLogin runs the authorize request to the login page.
func (f *fixture) startLogin(t *testing.T, b *http.Client, clientID, challenge string) page {
	t.Helper()
	resp, err := b.Get(f.authorizeURL(clientID, redirectURI, url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"}}))
	require.NoError(t, err)
	p := read(t, resp)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Contains(t, resp.Request.URL.String(), f.issuer+"/login?authRequestID=")
	require.NotEmpty(t, p.requestID)
	require.NotEmpty(t, p.csrf)
	require.Contains(t, p.header.Get("Content-Security-Policy"), "default-src 'none'")
	return p
}

func (f *fixture) submit(t *testing.T, b *http.Client, loginURL string, form url.Values) *http.Response {
	t.Helper()
	resp, err := b.PostForm(loginURL, form)
	require.NoError(t, err)
	return resp
}

func loginForm(p page, username, pw string) url.Values {
	return url.Values{"authRequestID": {p.requestID}, "csrf_token": {p.csrf}, "username": {username}, "password": {pw}}
}

// codeFrom reads the code from the redirect to the app, checking the state came back.
func codeFrom(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	loc := mustParse(t, resp.Header.Get("Location"))
	require.Equal(t, redirectURI, loc.Scheme+"://"+loc.Host+loc.Path)
	require.Equal(t, "st4te", loc.Query().Get("state"))
	require.Empty(t, loc.Query().Get("error"), loc.String())
	code := loc.Query().Get("code")
	require.NotEmpty(t, code)
	return code
}

type tokenAnswer struct {
	AccessToken      string `json:"access_token"`
	IDToken          string `json:"id_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	status           int
}

func (f *fixture) redeem(t *testing.T, clientID, code, verifier string) tokenAnswer {
	t.Helper()
	resp, err := f.env.HTTPClient().PostForm(f.issuer+"/oauth/token", url.Values{"grant_type": {"authorization_code"},
		"code": {code}, "redirect_uri": {redirectURI}, "client_id": {clientID}, "code_verifier": {verifier}})
	require.NoError(t, err)
	defer resp.Body.Close()
	var a tokenAnswer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
	a.status = resp.StatusCode
	return a
}

// signIn runs the whole flow for username in a fresh browser and returns the code and verifier.
func (f *fixture) signIn(t *testing.T, clientID, username, pw string) (code, verifier string) {
	t.Helper()
	b := f.browser(t)
	verifier, challenge := pkce()
	p := f.startLogin(t, b, clientID, challenge)
	return codeFrom(t, f.submit(t, b, f.issuer+"/login", loginForm(p, username, pw))), verifier
}

func claimsOf(t *testing.T, f *fixture, jwt string) map[string]any {
	t.Helper()
	payload, err := f.env.App.OIDC.KeySet().VerifySignature(context.Background(), jwt)
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, json.Unmarshal(payload, &c))
	return c
}

func TestOIDCDiscovery(t *testing.T) {
	t.Parallel()
	f := setup(t)
	resp, err := f.env.HTTPClient().Get(f.issuer + "/.well-known/openid-configuration")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var d map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&d))
	require.Equal(t, f.issuer, d["issuer"])
	require.Equal(t, f.issuer+"/authorize", d["authorization_endpoint"])
	require.Equal(t, f.issuer+"/oauth/token", d["token_endpoint"])
	require.Equal(t, f.issuer+"/keys", d["jwks_uri"])
	require.Equal(t, f.issuer+"/userinfo", d["userinfo_endpoint"])
	require.Equal(t, []any{"S256"}, d["code_challenge_methods_supported"])
	require.Contains(t, d["response_types_supported"], "code")
	// The library lists implicit and jwt-bearer whatever the clients allow; no client has them (see
	// TestOIDCOtherGrantsRefused), and none has refresh tokens, passwords or client credentials.
	require.Contains(t, d["grant_types_supported"], "authorization_code")
	for _, g := range []string{"refresh_token", "password", "client_credentials"} {
		require.NotContains(t, d["grant_types_supported"], g)
	}
	require.Contains(t, d["scopes_supported"], "organization")

	// The keys are the provider's own, not those of service tokens.
	resp, err = f.env.HTTPClient().Get(f.issuer + "/keys")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var jwks struct {
		Keys []struct {
			Kid string `json:"kid"`
			Alg string `json:"alg"`
		} `json:"keys"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&jwks))
	require.Len(t, jwks.Keys, 1)
	require.Equal(t, "ES256", jwks.Keys[0].Alg)
	api := f.env.Anonymous().Get("/auth/jwks.json").Expect(http.StatusOK).Map()
	for _, k := range api["keys"].([]any) {
		require.NotEqual(t, jwks.Keys[0].Kid, k.(map[string]any)["kid"])
	}
}

func TestOIDCAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	f := setup(t)
	code, verifier := f.signIn(t, f.clientID, alice, alicePass)
	tok := f.redeem(t, f.clientID, code, verifier)
	require.Equal(t, http.StatusOK, tok.status, tok.ErrorDescription)
	require.Equal(t, "Bearer", tok.TokenType)
	require.InDelta(t, 15*60, tok.ExpiresIn, 5)

	c := claimsOf(t, f, tok.AccessToken)
	require.Equal(t, f.issuer, c["iss"])
	require.Equal(t, f.aliceID.String(), c["sub"])
	require.ElementsMatch(t, []any{f.env.URL + "/auth/token", f.clientID}, c["aud"])
	require.Equal(t, f.clientID, c["azp"])
	require.Equal(t, f.clientID, c["client_id"])
	require.Equal(t, f.acmeID.String(), c["organization"])
	for _, k := range []string{"exp", "iat", "nbf", "jti"} {
		require.NotEmpty(t, c[k], k)
	}
	require.InDelta(t, 15*60, c["exp"].(float64)-c["iat"].(float64), 2)

	id := claimsOf(t, f, tok.IDToken)
	require.Equal(t, f.aliceID.String(), id["sub"])
	require.Equal(t, alice, id["email"])
	require.Equal(t, alice, id["preferred_username"])
	require.Equal(t, "n0nce", id["nonce"])
	require.Equal(t, f.acmeID.String(), id["organization"])

	// userinfo answers for the access token.
	req, _ := http.NewRequest(http.MethodGet, f.issuer+"/userinfo", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err := f.env.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var info map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	require.Equal(t, f.aliceID.String(), info["sub"])
	require.Equal(t, alice, info["preferred_username"])

	// The API accepts only service tokens: the provider's access token is refused, and exchanged (RFC 8693)
	// for one that acts as alice in acme.
	f.env.Client(tok.AccessToken).Get("/api/me").ExpectError(http.StatusUnauthorized, "Authentication")
	resp, err = f.env.HTTPClient().PostForm(f.env.URL+"/auth/token", url.Values{
		"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {tok.AccessToken},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}})
	require.NoError(t, err)
	defer resp.Body.Close()
	var exchanged struct {
		AccessToken    string `json:"access_token"`
		OrganizationID string `json:"organization_id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&exchanged))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, f.acmeID.String(), exchanged.OrganizationID)
	var me api.OrganizationMember
	f.env.Client(exchanged.AccessToken).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, f.aliceID, me.UserID)
	require.Equal(t, api.Member, me.OrgRole)

	// A code works once.
	again := f.redeem(t, f.clientID, code, verifier)
	require.Equal(t, http.StatusBadRequest, again.status)
	require.Equal(t, "invalid_grant", again.Error)
}

func TestOIDCWrongCodeVerifier(t *testing.T) {
	t.Parallel()
	f := setup(t)
	code, verifier := f.signIn(t, f.clientID, alice, alicePass)
	other, _ := pkce()
	bad := f.redeem(t, f.clientID, code, other)
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Equal(t, "invalid_grant", bad.Error)
	missing := f.redeem(t, f.clientID, code, "")
	require.Equal(t, http.StatusBadRequest, missing.status)
	// A wrong verifier does not use the code up: its holder still redeems it.
	require.Equal(t, http.StatusOK, f.redeem(t, f.clientID, code, verifier).status)
}

// authorizeError runs an authorize request expected to fail and returns the response (not followed).
func (f *fixture) authorize(t *testing.T, clientID, redirect string, extra url.Values) *http.Response {
	t.Helper()
	resp, err := f.browser(t).Get(f.authorizeURL(clientID, redirect, extra))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestOIDCAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, challenge := pkce()
	s256 := url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"}}

	// Errors about the request itself go back to the app's redirect URI.
	for name, extra := range map[string]url.Values{
		"missing PKCE":   {},
		"missing method": {"code_challenge": {challenge}},
		"plain method":   {"code_challenge": {challenge}, "code_challenge_method": {"plain"}},
	} {
		resp := f.authorize(t, f.clientID, redirectURI, extra)
		require.Equal(t, http.StatusFound, resp.StatusCode, name)
		loc := mustParse(t, resp.Header.Get("Location"))
		require.Equal(t, "invalid_request", loc.Query().Get("error"), name)
		require.Empty(t, loc.Query().Get("code"), name)
	}
	implicit := f.authorize(t, f.clientID, redirectURI, url.Values{"response_type": {"token"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}})
	require.Equal(t, http.StatusFound, implicit.StatusCode)
	require.NotEmpty(t, mustParse(t, implicit.Header.Get("Location")).Query().Get("error"))

	// An unknown client or a redirect URI not registered exactly is never redirected to.
	for name, c := range map[string]struct{ client, redirect string }{
		"unregistered client": {"no-such-client", redirectURI},
		"trailing slash":      {f.clientID, redirectURI + "/"},
		"other path":          {f.clientID, "https://app.example.test/other"},
		"extra query":         {f.clientID, redirectURI + "?x=1"},
		"other host":          {f.clientID, "https://evil.example.test/callback"},
	} {
		resp := f.authorize(t, c.client, c.redirect, s256)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
		require.Empty(t, resp.Header.Get("Location"), name)
	}
}

func TestOIDCLoginRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := f.browser(t)
	_, challenge := pkce()
	p := f.startLogin(t, b, f.clientID, challenge)
	login := f.issuer + "/login"

	// Wrong password and unknown user: the same 200 page, no redirect.
	for _, creds := range [][2]string{{alice, "wrong password"}, {"nobody", alicePass}} {
		got := read(t, f.submit(t, b, login, loginForm(p, creds[0], creds[1])))
		require.Equal(t, http.StatusOK, got.status)
		require.Contains(t, got.body, "Wrong username or password.")
		require.Contains(t, got.body, `id="error"`)
	}

	// CSRF: a missing or wrong token, or no cookie, is refused before the password is looked at.
	noToken := loginForm(p, alice, alicePass)
	noToken.Del("csrf_token")
	require.Equal(t, http.StatusForbidden, read(t, f.submit(t, b, login, noToken)).status)
	wrong := loginForm(p, alice, alicePass)
	wrong.Set("csrf_token", "AAAA"+p.csrf[4:])
	require.Equal(t, http.StatusForbidden, read(t, f.submit(t, b, login, wrong)).status)
	cookieless := &http.Client{Transport: f.env.Transport(), CheckRedirect: b.CheckRedirect}
	require.Equal(t, http.StatusForbidden, read(t, f.submit(t, cookieless, login, loginForm(p, alice, alicePass))).status)
	// A token of another sign-in (same browser) does not fit this one.
	p2 := f.startLogin(t, b, f.clientID, challenge)
	swapped := loginForm(p, alice, alicePass)
	swapped.Set("csrf_token", p2.csrf)
	require.Equal(t, http.StatusForbidden, read(t, f.submit(t, b, login, swapped)).status)

	// An unknown auth request.
	unknown := loginForm(p, alice, alicePass)
	unknown.Set("authRequestID", "nope")
	require.Equal(t, http.StatusBadRequest, read(t, f.submit(t, b, login, unknown)).status)

	// The right password still works on the same page.
	codeFrom(t, f.submit(t, b, login, loginForm(p, alice, alicePass)))
	// The request is done: its login page is gone.
	require.Equal(t, http.StatusBadRequest, read(t, f.submit(t, b, login, loginForm(p, alice, alicePass))).status)
}

func TestOIDCLoginRateLimit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := f.browser(t)
	_, challenge := pkce()
	p := f.startLogin(t, b, f.clientID, challenge)
	var last page
	for i := 0; i < 12; i++ {
		last = read(t, f.submit(t, b, f.issuer+"/login", loginForm(p, alice, "guess-"+string(rune('a'+i)))))
		if last.status == http.StatusTooManyRequests {
			break
		}
		require.Equal(t, http.StatusOK, last.status)
	}
	require.Equal(t, http.StatusTooManyRequests, last.status)
	require.NotEmpty(t, last.header.Get("Retry-After"))
	// Even the right password is refused while the username is slowed down.
	right := read(t, f.submit(t, b, f.issuer+"/login", loginForm(p, alice, alicePass)))
	require.Equal(t, http.StatusTooManyRequests, right.status)
}

func TestOIDCLoginOrganization(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	// bob belongs to other, not to acme: the acme client does not sign him in.
	bob := f.env.Principal("other", "bob", auth.RoleMember)
	require.NoError(t, oidcprovider.SetPassword(ctx, f.env.App.Store, bob.UserID, "bobs password"))
	b := f.browser(t)
	_, challenge := pkce()
	p := f.startLogin(t, b, f.clientID, challenge)
	got := read(t, f.submit(t, b, f.issuer+"/login", loginForm(p, "bob", "bobs password")))
	require.Equal(t, http.StatusOK, got.status)
	require.Contains(t, got.body, "not a member of the organization")

	// A client serving every organization: bob's only one is taken; alice, a member of two, chooses.
	all := f.addClient(t, f.acmeID, "all-orgs", true)
	code, verifier := f.signIn(t, all, "bob", "bobs password")
	tok := f.redeem(t, all, code, verifier)
	require.Equal(t, http.StatusOK, tok.status, tok.ErrorDescription)
	require.Equal(t, bob.OrganizationID.String(), claimsOf(t, f, tok.AccessToken)["organization"])

	second := f.env.Principal("other", alice, auth.RoleViewer)
	b = f.browser(t)
	verifier, challenge = pkce()
	p = f.startLogin(t, b, all, challenge)
	choose := read(t, f.submit(t, b, f.issuer+"/login", loginForm(p, alice, alicePass)))
	require.Equal(t, http.StatusOK, choose.status)
	require.Contains(t, choose.body, `<select id="organization" name="organization"`)
	require.Contains(t, choose.body, second.OrganizationID.String())
	form := loginForm(p, alice, alicePass)
	form.Set("organization", second.OrganizationID.String())
	code = codeFrom(t, f.submit(t, b, f.issuer+"/login", form))
	tok = f.redeem(t, all, code, verifier)
	require.Equal(t, http.StatusOK, tok.status, tok.ErrorDescription)
	require.Equal(t, second.OrganizationID.String(), claimsOf(t, f, tok.AccessToken)["organization"])
}

// TestOIDCFlowAcrossReplicas starts a sign-in on one replica, logs in on a second and redeems the code on
// the first: nothing of a flow is kept in a replica's memory.
func TestOIDCFlowAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := apitest.New(t, apitest.Options{DatabaseURL: f.env.DBURL, Auth: embedded.Auth})
	b := f.browser(t)
	verifier, challenge := pkce()
	p := f.startLogin(t, b, f.clientID, challenge)
	code := codeFrom(t, f.submit(t, b, other.URL+"/oidc/login", loginForm(p, alice, alicePass)))
	tok := f.redeem(t, f.clientID, code, verifier)
	require.Equal(t, http.StatusOK, tok.status, tok.ErrorDescription)
	// Both replicas sign with the one shared key.
	_, err := other.App.OIDC.KeySet().VerifySignature(context.Background(), tok.AccessToken)
	require.NoError(t, err)
}

func TestOIDCLoginPageIsNotCompressedOrValidated(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req, _ := http.NewRequest(http.MethodGet, f.issuer+"/login?authRequestID=unknown", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := f.env.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"))
	require.Empty(t, resp.Header.Get("Content-Encoding"))
	require.NotEmpty(t, resp.Header.Get("Content-Security-Policy"))
}

func TestOIDCOtherGrantsRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, grant := range []string{"password", "client_credentials", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer",
		"urn:ietf:params:oauth:grant-type:token-exchange"} {
		resp, err := f.env.HTTPClient().PostForm(f.issuer+"/oauth/token", url.Values{"grant_type": {grant}, "client_id": {f.clientID},
			"username": {alice}, "password": {alicePass}, "refresh_token": {"x"}, "assertion": {"a.b.c"},
			"subject_token": {"a.b.c"}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}})
		require.NoError(t, err)
		var a tokenAnswer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, grant)
		require.Empty(t, a.AccessToken, grant)
	}
}

// The provider answers CORS itself, for any origin and without credentials, also when the API allows
// only configured origins: apps call its token endpoint from their own origin.
func TestOIDCCORS(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{CORSOrigins: []string{"https://configured.example.test"}}, Auth: embedded.Auth})
	req, _ := http.NewRequest(http.MethodOptions, env.URL+"/oidc/oauth/token", nil)
	req.Header.Set("Origin", "https://app.example.test")
	req.Header.Set("Access-Control-Request-Method", http.MethodPost)
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	resp, err := env.HTTPClient().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300)
	require.Equal(t, "https://app.example.test", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"))

	// The login page is for navigation only: no CORS answer.
	req, _ = http.NewRequest(http.MethodGet, env.URL+"/oidc/login?authRequestID=x", nil)
	req.Header.Set("Origin", "https://app.example.test")
	resp, err = env.HTTPClient().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

// Only the browser that signed in gets the code: one who started a sign-in and sent its login link to
// someone else cannot collect the code of their sign-in from the callback.
func TestOIDCCallbackBoundToBrowser(t *testing.T) {
	t.Parallel()
	f := setup(t)
	attacker := f.browser(t)
	_, challenge := pkce()
	started := f.startLogin(t, attacker, f.clientID, challenge)

	victim := f.browser(t)
	victim.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := victim.Get(f.issuer + "/login?authRequestID=" + url.QueryEscape(started.requestID))
	require.NoError(t, err)
	p := read(t, resp)
	require.Equal(t, http.StatusOK, p.status)
	resp = f.submit(t, victim, f.issuer+"/login", loginForm(p, alice, alicePass))
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	callback := resp.Header.Get("Location")
	require.Contains(t, callback, f.issuer+"/authorize/callback?id=")

	// The callback's URL, proof included, is of no use in another browser, nor without its proof.
	for _, u := range []string{callback, f.issuer + "/authorize/callback?id=" + url.QueryEscape(started.requestID)} {
		resp, err = attacker.Get(u)
		require.NoError(t, err)
		got := read(t, resp)
		require.Equal(t, http.StatusForbidden, got.status)
		require.Contains(t, got.body, "another browser")
	}
	// The victim's browser gets the code.
	resp, err = victim.Get(callback)
	require.NoError(t, err)
	codeFrom(t, resp)
}

func TestOIDCPromptNoneRefused(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, challenge := pkce()
	resp := f.authorize(t, f.clientID, redirectURI, url.Values{"prompt": {"none"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}})
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "login_required", mustParse(t, resp.Header.Get("Location")).Query().Get("error"))
}
