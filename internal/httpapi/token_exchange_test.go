package httpapi_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/identity"
)

// testIssuer is an OpenID provider for the test: discovery and a JWKS, counting the JWKS fetches.
type testIssuer struct {
	srv       *httptest.Server
	mu        sync.Mutex
	published []jose.JSONWebKey
	jwksHits  atomic.Int64
	discovery atomic.Int64
}

// idpKey is a signing key of the test issuer (published or not).
type idpKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newIDPKey(t *testing.T, kid string) idpKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return idpKey{kid: kid, priv: priv}
}

func newTestIssuer(t *testing.T, keys ...idpKey) *testIssuer {
	t.Helper()
	idp := &testIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		idp.discovery.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": idp.srv.URL, "jwks_uri": idp.srv.URL + "/jwks",
			"authorization_endpoint": idp.srv.URL + "/authorize", "token_endpoint": idp.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		idp.jwksHits.Add(1)
		idp.mu.Lock()
		defer idp.mu.Unlock()
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: idp.published})
	})
	idp.srv = httptest.NewServer(mux)
	t.Cleanup(idp.srv.Close)
	idp.publish(keys...)
	return idp
}

// publish replaces the published keys (key rotation).
func (i *testIssuer) publish(keys ...idpKey) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.published = nil
	for _, k := range keys {
		i.published = append(i.published, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	}
}

func signIDPToken(t *testing.T, k idpKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	require.NoError(t, err)
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	sig, err := signer.Sign(payload)
	require.NoError(t, err)
	tok, err := sig.CompactSerialize()
	require.NoError(t, err)
	return tok
}

// exchangeFixture is hubd trusting a test issuer, with organizations A (named by ID) and B (named by
// ExternalID "ext-b"), an app registered by A for A only (app-a) and one for every organization
// (app-all), and alice: manager of A and viewer of B, ExternalID "ext-alice".
type exchangeFixture struct {
	env        *apitest.Env
	idp        *testIssuer
	key        idpKey
	orgA, orgB auth.Principal
	alice      auth.Principal
}

func setupExchange(t *testing.T, minKeyRefetch time.Duration) *exchangeFixture {
	t.Helper()
	key := newIDPKey(t, "k1")
	idp := newTestIssuer(t, key)
	env := apitest.New(t, apitest.Options{Auth: identity.Config{Mode: identity.ModeExternal, Issuer: idp.srv.URL, MinKeyRefetch: minKeyRefetch}})
	f := &exchangeFixture{env: env, idp: idp, key: key,
		orgA: env.Principal("org-a", "admin-a", auth.RoleAdmin), orgB: env.Principal("org-b", "admin-b", auth.RoleAdmin),
		alice: env.Principal("org-a", "alice", auth.RoleManager)}
	env.Principal("org-b", "alice", auth.RoleViewer)
	f.sql(t, `UPDATE organization SET external_id = 'ext-b' WHERE organization_id = $1`, f.orgB.OrganizationID)
	f.sql(t, `UPDATE app_user SET external_id = 'ext-alice' WHERE user_id = $1`, f.alice.UserID)
	f.sql(t, `INSERT INTO oauth_client (client_id, organization_id, name, redirect_uris, allow_all_orgs) VALUES
		('app-a', $1, 'app-a', '{https://a.example/}', false), ('app-all', $1, 'app-all', '{https://all.example/}', true)`, f.orgA.OrganizationID)
	return f
}

func (f *exchangeFixture) sql(t *testing.T, query string, args ...any) {
	t.Helper()
	_, err := f.env.App.Store.Pool.Exec(context.Background(), query, args...)
	require.NoError(t, err)
}

// claims are a valid token's claims for alice of organization A through app-a, with changes.
func (f *exchangeFixture) claims(changes map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{"iss": f.idp.srv.URL, "aud": []string{f.env.URL + "/auth/token", "account"}, "sub": "ext-alice",
		"azp": "app-a", "exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(), "organization": f.orgA.OrganizationID.String()}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func (f *exchangeFixture) token(t *testing.T, changes map[string]any) string {
	return signIDPToken(t, f.key, f.claims(changes))
}

func exchangeForm(subjectToken string) url.Values {
	return url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {subjectToken},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}
}

// signedInAs exchanges subjectToken, requires success and returns the member the minted token is.
func (f *exchangeFixture) signedInAs(t *testing.T, subjectToken string) api.OrganizationMember {
	t.Helper()
	status, body := exchange(t, f.env, exchangeForm(subjectToken))
	require.Equal(t, http.StatusOK, status, "%v", body)
	require.Equal(t, "Bearer", body["token_type"])
	require.Equal(t, "urn:ietf:params:oauth:token-type:access_token", body["issued_token_type"])
	require.Positive(t, body["expires_in"])
	var me api.OrganizationMember
	f.env.Client(body["access_token"].(string)).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, me.OrganizationID.String(), body["organization_id"])
	return me
}

func TestTokenExchangeRefusals(t *testing.T) {
	t.Parallel()
	f := setupExchange(t, 0)
	stranger := newIDPKey(t, "k1") // same kid, not the published key
	unknown := newIDPKey(t, "k-unknown")
	now := time.Now()
	for name, tc := range map[string]struct {
		form        url.Values
		code        string
		description string
	}{
		"forged signature": {exchangeForm(signIDPToken(t, stranger, f.claims(map[string]any{"sub": "s1"}))), "invalid_grant", "signature does not verify"},
		"expired": {exchangeForm(f.token(t, map[string]any{"sub": "s2", "exp": now.Add(-time.Minute).Unix(), "iat": now.Add(-10 * time.Minute).Unix()})),
			"invalid_grant", "expired at"},
		"not yet valid":  {exchangeForm(f.token(t, map[string]any{"sub": "s3", "nbf": now.Add(2 * time.Minute).Unix()})), "invalid_grant", "not valid before"},
		"issued later":   {exchangeForm(f.token(t, map[string]any{"sub": "s3b", "iat": now.Add(2 * time.Minute).Unix()})), "invalid_grant", "issued in the future"},
		"wrong audience": {exchangeForm(f.token(t, map[string]any{"sub": "s4", "aud": "https://elsewhere.example"})), "invalid_grant", "audience (aud) does not include " + f.env.URL + "/auth/token"},
		"wrong issuer":   {exchangeForm(f.token(t, map[string]any{"sub": "s5", "iss": "https://other-idp.example"})), "invalid_grant", `issued by "https://other-idp.example"`},
		"unknown kid":    {exchangeForm(signIDPToken(t, unknown, f.claims(map[string]any{"sub": "s6"}))), "invalid_grant", `kid "k-unknown"`},
		"malformed":      {exchangeForm("not.a.jwt"), "invalid_grant", "not a signed JWT"},
		"client not registered": {exchangeForm(f.token(t, map[string]any{"sub": "s7", "azp": "app-unknown"})), "invalid_grant",
			"the token was issued to client app-unknown, which is not registered with hubd"},
		"client named by client_id": {exchangeForm(f.token(t, map[string]any{"sub": "s7b", "azp": nil, "client_id": "app-gone"})), "invalid_grant",
			"client app-gone, which is not registered"},
		"no client":                   {exchangeForm(f.token(t, map[string]any{"sub": "s8", "azp": nil})), "invalid_grant", "names no client"},
		"other organization's client": {exchangeForm(f.token(t, map[string]any{"organization": "ext-b"})), "invalid_grant", "this app signs in members of organization org-a only"},
		"no organization claim":       {exchangeForm(f.token(t, map[string]any{"sub": "s9", "organization": nil})), "invalid_grant", `no "organization" claim`},
		"unknown organization":        {exchangeForm(f.token(t, map[string]any{"sub": "s10", "organization": "ext-nope"})), "invalid_grant", "no organization of this service is ext-nope"},
		"not a member": {exchangeForm(f.token(t, map[string]any{"sub": "ext-bob"})), "invalid_grant",
			"you (ext-bob) are not a member of organization org-a"},
		"wrong subject_token_type": {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {f.token(t, nil)},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}}, "invalid_request", "subject_token_type must be urn:ietf:params:oauth:token-type:access_token"},
		"missing subject_token": {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}, "invalid_request", "subject_token is required"},
		"wrong requested_token_type": {func() url.Values {
			v := exchangeForm(f.token(t, nil))
			v.Set("requested_token_type", "urn:ietf:params:oauth:token-type:refresh_token")
			return v
		}(), "invalid_request", "requested_token_type must be"},
	} {
		t.Run(name, func(t *testing.T) {
			status, body := exchange(t, f.env, tc.form)
			require.Equal(t, http.StatusBadRequest, status, "%v", body)
			require.Equal(t, tc.code, body["error"], "%v", body)
			require.Contains(t, body["error_description"], tc.description)
		})
	}
	// The keys were fetched once: tokens naming unknown keys or forged ones do not fetch them again
	// sooner than MinKeyRefetch (10 seconds by default).
	require.EqualValues(t, 1, f.idp.jwksHits.Load())
	// Nobody was provisioned by a refusal.
	var n int
	require.NoError(t, f.env.App.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM app_user WHERE external_id = 'ext-bob'`).Scan(&n))
	require.Zero(t, n)
}

// TestTokenExchangeSignsInMember: the organization comes from the claim and the role from that
// membership; the minted token works on /api/me.
func TestTokenExchangeSignsInMember(t *testing.T) {
	t.Parallel()
	f := setupExchange(t, 0)
	me := f.signedInAs(t, f.token(t, nil))
	require.Equal(t, f.alice.UserID, me.UserID)
	require.Equal(t, f.orgA.OrganizationID, me.OrganizationID)
	require.Equal(t, "manager", string(me.OrgRole))

	// An app for every organization signs alice in to B (named by ExternalID) as B's viewer, and to A.
	me = f.signedInAs(t, f.token(t, map[string]any{"azp": "app-all", "organization": "ext-b"}))
	require.Equal(t, f.orgB.OrganizationID, me.OrganizationID)
	require.Equal(t, "viewer", string(me.OrgRole))
	me = f.signedInAs(t, f.token(t, map[string]any{"azp": "app-all", "client_id": "ignored"}))
	require.Equal(t, f.orgA.OrganizationID, me.OrganizationID)

	// client_id names the app when azp is absent; a list claim naming both organizations picks the
	// app's own.
	me = f.signedInAs(t, f.token(t, map[string]any{"azp": nil, "client_id": "app-a",
		"organization": []string{"ext-b", f.orgA.OrganizationID.String()}}))
	require.Equal(t, f.orgA.OrganizationID, me.OrganizationID)
	require.Equal(t, "manager", string(me.OrgRole))

	// The admin of B (not known to the provider) and a member removed from B are refused.
	f.sql(t, `DELETE FROM organization_member WHERE organization_id = $1 AND user_id = $2`, f.orgB.OrganizationID, f.alice.UserID)
	status, body := exchange(t, f.env, exchangeForm(f.token(t, map[string]any{"azp": "app-all", "organization": "ext-b"})))
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body["error_description"], "not a member of organization org-b")
}

// TestTokenExchangeProvisioning: an organization whose sign_in_provision_role is a role makes a person
// who signs in for the first time a member with it (once); by default (”) it refuses them.
func TestTokenExchangeProvisioning(t *testing.T) {
	t.Parallel()
	f := setupExchange(t, 0)
	newbie := map[string]any{"sub": "ext-newbie", "azp": "app-all", "organization": "ext-b", "preferred_username": "newbie", "name": "New Bie"}
	status, body := exchange(t, f.env, exchangeForm(f.token(t, newbie)))
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body["error_description"], "not a member of organization org-b")

	// Admins of B turn provisioning on (SignInProvisionRole); a manager may not, and it must be a role.
	orgPath := "/api/organization/" + f.orgB.OrganizationID.String()
	adminB := f.env.Client(f.env.Token("org-b", "admin-b", auth.RoleAdmin))
	var got api.ExtendedOrganization
	adminB.Get(orgPath).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "", got.Organization.SignInProvisionRole, "off by default")
	updated := got.Organization
	updated.SignInProvisionRole = "member"
	f.env.Client(f.env.Token("org-b", "manager-b", auth.RoleManager)).Put(orgPath, updated).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	bogus := got.Organization
	bogus.SignInProvisionRole = "owner"
	adminB.Put(orgPath, bogus).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	var put api.Organization
	adminB.Put(orgPath, updated).Expect(http.StatusOK).JSON(&put)
	require.Equal(t, "member", put.SignInProvisionRole)

	me := f.signedInAs(t, f.token(t, newbie))
	require.Equal(t, f.orgB.OrganizationID, me.OrganizationID)
	require.Equal(t, "member", string(me.OrgRole))
	require.Equal(t, "newbie", me.Username)
	require.Equal(t, "New Bie", me.DisplayName)
	again := f.signedInAs(t, f.token(t, newbie))
	require.Equal(t, me.UserID, again.UserID, "the second sign-in finds the provisioned User")
	// The role is the membership's from then on.
	f.sql(t, `UPDATE organization_member SET org_role = 'viewer' WHERE user_id = $1`, me.UserID)
	require.Equal(t, "viewer", string(f.signedInAs(t, f.token(t, newbie)).OrgRole))

	// A taken Username gets a suffix; the ExternalID is the subject.
	other := f.signedInAs(t, f.token(t, map[string]any{"sub": "ext-alice-2", "azp": "app-all", "organization": "ext-b", "preferred_username": "alice"}))
	require.NotEqual(t, f.alice.UserID, other.UserID)
	require.Regexp(t, `^alice-[0-9a-f]{8}$`, other.Username)
	var ext string
	require.NoError(t, f.env.App.Store.Pool.QueryRow(context.Background(), `SELECT external_id FROM app_user WHERE user_id = $1`, other.UserID).Scan(&ext))
	require.Equal(t, "ext-alice-2", ext)

	// Provisioning in B lets nobody into A.
	status, _ = exchange(t, f.env, exchangeForm(f.token(t, map[string]any{"sub": "ext-newbie", "azp": "app-all"})))
	require.Equal(t, http.StatusBadRequest, status)
}

// TestTokenExchangeKeyCache: the JWKS is fetched once for many exchanges, and again when a token names a
// key the cache lacks (the provider rotated its keys; MinKeyRefetch is lifted so the test need not wait).
func TestTokenExchangeKeyCache(t *testing.T) {
	t.Parallel()
	f := setupExchange(t, time.Nanosecond)
	for range 5 {
		f.signedInAs(t, f.token(t, nil))
	}
	require.EqualValues(t, 1, f.idp.discovery.Load())
	require.EqualValues(t, 1, f.idp.jwksHits.Load())

	rotated := newIDPKey(t, "k2")
	f.idp.publish(f.key, rotated)
	f.signedInAs(t, signIDPToken(t, rotated, f.claims(nil)))
	require.EqualValues(t, 2, f.idp.jwksHits.Load(), "an unknown kid fetches the keys again")
	for range 3 {
		f.signedInAs(t, signIDPToken(t, rotated, f.claims(nil)))
		f.signedInAs(t, f.token(t, nil))
	}
	require.EqualValues(t, 2, f.idp.jwksHits.Load())
	require.EqualValues(t, 1, f.idp.discovery.Load())
}

// TestTokenExchangeProviderUnreachable: the server starts without reaching the provider; an exchange
// then answers 503 temporarily_unavailable.
func TestTokenExchangeProviderUnreachable(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	env := apitest.New(t, apitest.Options{Auth: identity.Config{Mode: identity.ModeExternal, Issuer: dead.URL}})
	status, body := exchange(t, env, exchangeForm(signIDPToken(t, newIDPKey(t, "k"), map[string]any{"sub": "x"})))
	require.Equal(t, http.StatusServiceUnavailable, status, "%v", body)
	require.Equal(t, "temporarily_unavailable", body["error"])
}

// TestTokenExchangeInfoModes: /api/info and the grant in the three modes.
func TestTokenExchangeInfoModes(t *testing.T) {
	t.Parallel()
	info := func(env *apitest.Env) api.ApiInfo {
		var i api.ApiInfo
		env.Anonymous().Get("/api/info").Expect(http.StatusOK).JSON(&i)
		require.Equal(t, env.URL+"/auth/token", i.TokenExchangeEndpoint)
		return i
	}
	off := apitest.New(t)
	i := info(off)
	require.Equal(t, "", i.AuthIssuer)
	require.Equal(t, off.URL+"/auth/token", i.TokenExchangeAudience)
	status, body := exchange(t, off, exchangeForm("x"))
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "unsupported_grant_type", body["error"])

	embedded := apitest.New(t, apitest.Options{Auth: identity.Config{Mode: identity.ModeEmbedded}})
	i = info(embedded)
	require.Equal(t, embedded.URL+"/oidc", i.AuthIssuer)
	require.Equal(t, embedded.URL+"/auth/token", i.TokenExchangeAudience)

	external := apitest.New(t, apitest.Options{Auth: identity.Config{Mode: identity.ModeExternal, Issuer: "https://idp.example/realms/x", Audience: "hubd-api"}})
	i = info(external)
	require.Equal(t, "https://idp.example/realms/x", i.AuthIssuer)
	require.Equal(t, "hubd-api", i.TokenExchangeAudience)
}

// TestTokenExchangeEmbeddedKeySet: in the embedded mode the app's key set verifies tokens (no
// discovery), and sub is the UserID.
func TestTokenExchangeEmbeddedKeySet(t *testing.T) {
	t.Parallel()
	key := newIDPKey(t, "e1")
	keySet := &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{&key.priv.PublicKey}}
	env := apitest.New(t, apitest.Options{Auth: identity.Config{Mode: identity.ModeEmbedded, KeySet: keySet}})
	alice := env.Principal("org-a", "alice", auth.RoleMember)
	_, err := env.App.Store.Pool.Exec(context.Background(), `INSERT INTO oauth_client (client_id, organization_id, name, redirect_uris) VALUES ('app', $1, 'app', '{https://a.example/}')`, alice.OrganizationID)
	require.NoError(t, err)
	now := time.Now()
	tok := signIDPToken(t, key, map[string]any{"iss": env.URL + "/oidc", "aud": env.URL + "/auth/token", "sub": alice.UserID.String(),
		"azp": "app", "exp": now.Add(time.Minute).Unix(), "iat": now.Unix(), "organization": alice.OrganizationID.String()})
	status, body := exchange(t, env, exchangeForm(tok))
	require.Equal(t, http.StatusOK, status, "%v", body)
	var me api.OrganizationMember
	env.Client(body["access_token"].(string)).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, alice.UserID, me.UserID)
	require.Equal(t, "member", string(me.OrgRole))
}

// TestTokenExchangeSlowDown: failed exchanges count against the sign-in guard per subject from the
// client's address, as failed assertions do; another subject still signs in.
func TestTokenExchangeSlowDown(t *testing.T) {
	t.Parallel()
	f := setupExchange(t, 0)
	wrong := exchangeForm(f.token(t, map[string]any{"sub": "ext-alice", "aud": "https://elsewhere.example"}))
	for range 10 {
		status, _ := exchange(t, f.env, wrong)
		require.Equal(t, http.StatusBadRequest, status)
	}
	resp := f.env.Anonymous().Post("/api/auth/token", apitest.Raw{ContentType: "application/x-www-form-urlencoded", Data: []byte(wrong.Encode())}).
		Expect(http.StatusTooManyRequests)
	require.Equal(t, "slow_down", resp.Map()["error"])
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	// Right or wrong, alice's subject waits now; a provisioned newcomer of B does not.
	status, _ := exchange(t, f.env, exchangeForm(f.token(t, nil)))
	require.Equal(t, http.StatusTooManyRequests, status)
	f.sql(t, `UPDATE organization SET sign_in_provision_role = 'viewer' WHERE organization_id = $1`, f.orgB.OrganizationID)
	me := f.signedInAs(t, f.token(t, map[string]any{"sub": "ext-carol", "azp": "app-all", "organization": "ext-b"}))
	require.Equal(t, "viewer", string(me.OrgRole))
}
