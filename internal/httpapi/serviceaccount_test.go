package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func TestServiceAccounts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	manager := env.Client(env.Token("acme", "mia", auth.RoleManager))
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))

	var bot api.ServiceAccount
	admin.Post("/api/service_account", map[string]any{"Slug": "deployer", "DisplayName": "Deploy bot"}).Expect(http.StatusOK).JSON(&bot)
	require.Equal(t, api.OrgRole("member"), bot.OrgRole)
	require.NotEqual(t, uuid.Nil, bot.UserID)
	admin.Post("/api/service_account", map[string]any{"Slug": "deployer"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	admin.Post("/api/service_account?allow_exists=true", map[string]any{"Slug": "deployer"}).Expect(http.StatusOK)
	admin.Post("/api/service_account?dry_run=true", map[string]any{"Slug": "ghost"}).Expect(http.StatusOK)
	viewer.Post("/api/service_account", map[string]any{"Slug": "x"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	manager.Post("/api/service_account", map[string]any{"Slug": "root", "OrgRole": "admin"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var viewerBot api.ServiceAccount
	manager.Post("/api/service_account", map[string]any{"Slug": "reader", "OrgRole": "viewer"}).Expect(http.StatusOK).JSON(&viewerBot)

	// The backing User is a member (and Permissions can name it).
	var members []api.ExtendedOrganizationMember
	var me api.OrganizationMember
	admin.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	admin.Get("/api/organization/" + me.OrganizationID.String() + "/organization_member?" + where("UserID = '"+bot.UserID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&members)
	require.Len(t, members, 1)

	path := "/api/service_account/" + bot.ServiceAccountID.String()
	var ext api.ExtendedServiceAccount
	admin.Get(path + "?include=UserID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, bot.UserID, ext.User.UserID)
	ext.ServiceAccount.DisplayName = "Deployer"
	admin.Put(path, ext.ServiceAccount).Expect(http.StatusOK)
	admin.Put(path, ext.ServiceAccount).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var patched api.ServiceAccount
	admin.Patch(path, map[string]any{"OrgRole": "manager"}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, api.OrgRole("manager"), patched.OrgRole)
	// In a merge patch, null removes the role: it is the default again; absent leaves it.
	admin.Patch(path, map[string]any{"OrgRole": nil}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, api.OrgRole("member"), patched.OrgRole)
	admin.Patch(path, map[string]any{"OrgRole": "manager"}).Expect(http.StatusOK).JSON(&patched)
	admin.Patch(path, map[string]any{"DisplayName": "Deployer"}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, api.OrgRole("manager"), patched.OrgRole)

	var list []api.ExtendedServiceAccount
	admin.Get("/api/service_account?" + url.Values{"order_by": {"DESC:Slug"}}.Encode()).Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"reader", "deployer"}, []string{list[0].ServiceAccount.Slug, list[1].ServiceAccount.Slug})
	admin.Get("/api/service_account?" + where("OrgRole = 'viewer'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)

	var items []api.ServiceAccountCreateOrUpdateResponse
	admin.Patch("/api/_service_account?"+where("Slug IN ('deployer', 'reader')").Encode(), map[string]any{"Labels": map[string]string{"kind": "bot"}}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	var dels []api.DeleteResponse
	admin.Delete("/api/_service_account?" + where("Slug = 'reader'").Encode()).Expect(http.StatusOK).JSON(&dels)
	require.Len(t, dels, 1)
	admin.Get("/api/service_account/"+viewerBot.ServiceAccountID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	admin.Get("/api/user/"+viewerBot.UserID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	other := env.Client(env.Token("other", "bob", auth.RoleAdmin))
	other.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get(path+"/key").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Delete(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	admin.Delete(path).Expect(http.StatusOK)
	admin.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

func publicJWK(t *testing.T, priv any) (map[string]any, jwk.Key) {
	t.Helper()
	key, err := jwk.FromRaw(priv)
	require.NoError(t, err)
	pub, err := key.PublicKey()
	require.NoError(t, err)
	raw, err := json.Marshal(pub)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	return m, key
}

func assertion(t *testing.T, key jwk.Key, kid, subject, audience string, lifetime time.Duration, jti string) string {
	t.Helper()
	require.NoError(t, key.Set(jwk.KeyIDKey, kid))
	now := time.Now()
	tok, err := jwt.NewBuilder().Issuer(subject).Subject(subject).Audience([]string{audience}).IssuedAt(now).
		Expiration(now.Add(lifetime)).JwtID(jti).Build()
	require.NoError(t, err)
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	require.NoError(t, err)
	return string(signed)
}

func exchange(t *testing.T, env *apitest.Env, form url.Values) (int, map[string]any) {
	t.Helper()
	// Under /api, where generated clients look for it, the answer is checked against the document.
	resp := env.Anonymous().Post("/api/auth/token", apitest.Raw{ContentType: "application/x-www-form-urlencoded", Data: []byte(form.Encode())})
	return resp.Status, resp.Map()
}

func TestKeysAndSignIn(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	var bot api.ServiceAccount
	admin.Post("/api/service_account", map[string]any{"Slug": "bot", "OrgRole": "member"}).Expect(http.StatusOK).JSON(&bot)
	keys := "/api/service_account/" + bot.ServiceAccountID.String() + "/key"

	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pubJWK, privKey := publicJWK(t, priv)

	// Registration checks the key: public, strong enough; a registered key cannot be registered again.
	e := admin.Post(keys, map[string]any{"PublicJWK": map[string]any{"kty": "EC"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "PublicJWK", e.Error.ErrorMetadata.Items[0].Item)
	privRaw, _ := json.Marshal(privKey)
	var privMap map[string]any
	require.NoError(t, json.Unmarshal(privRaw, &privMap))
	admin.Post(keys, map[string]any{"PublicJWK": privMap}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	weakJWK, _ := publicJWK(t, weak)
	admin.Post(keys, map[string]any{"PublicJWK": weakJWK}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	admin.Post(keys+"?dry_run=true", map[string]any{"PublicJWK": pubJWK}).Expect(http.StatusOK)
	var key api.UserKey
	admin.Post(keys, map[string]any{"PublicJWK": pubJWK, "Description": "ci"}).Expect(http.StatusOK).JSON(&key)
	tp, err := privKey.Thumbprint(cryptoSHA256)
	require.NoError(t, err)
	require.Equal(t, b64url(tp), key.Kid)
	require.Equal(t, bot.UserID, key.UserID)
	admin.Post(keys, map[string]any{"PublicJWK": pubJWK}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var listed []api.UserKey
	admin.Get(keys).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)
	require.Equal(t, pubJWK["x"], listed[0].PublicJWK["x"], "keys are listed unredacted")
	admin.Get("/api/user/" + bot.UserID.String() + "/key").Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)
	// Members may not register keys; nobody registers a key for themselves.
	member := env.Client(env.Token("acme", "mo", auth.RoleMember))
	member.Post(keys, map[string]any{"PublicJWK": pubJWK}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	alice := env.Principal("acme", "alice", auth.RoleAdmin)
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	otherJWK, _ := publicJWK(t, other)
	admin.Post("/api/user/"+alice.UserID.String()+"/key", map[string]any{"PublicJWK": otherJWK}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	mo := env.Principal("acme", "mo", auth.RoleMember)
	admin.Post("/api/user/"+mo.UserID.String()+"/key", map[string]any{"PublicJWK": otherJWK}).Expect(http.StatusOK)
	admin.Get("/api/user/"+uuid.NewString()+"/key").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Sign in with a signed assertion.
	audience := env.URL + "/auth/token"
	sub := bot.ServiceAccountID.String()
	good := assertion(t, privKey, key.Kid, sub, audience, 2*time.Minute, uuid.NewString())
	status, body := exchange(t, env, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {good}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "Bearer", body["token_type"])
	require.Equal(t, "urn:ietf:params:oauth:token-type:access_token", body["issued_token_type"])
	require.Positive(t, body["expires_in"])
	var me api.OrganizationMember
	env.Client(body["access_token"].(string)).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, bot.UserID, me.UserID)
	require.Equal(t, api.OrgRole("member"), me.OrgRole)
	require.Equal(t, me.OrganizationID.String(), body["organization_id"])

	// The backing User's ID works as subject too.
	status, _ = exchange(t, env, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"assertion": {assertion(t, privKey, key.Kid, bot.UserID.String(), audience, time.Minute, uuid.NewString())}})
	require.Equal(t, http.StatusOK, status)

	for name, tc := range map[string]struct {
		form url.Values
		code string
	}{
		"replay":         {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {good}}, "invalid_grant"},
		"too long":       {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion(t, privKey, key.Kid, sub, audience, 10*time.Minute, uuid.NewString())}}, "invalid_grant"},
		"expired":        {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion(t, privKey, key.Kid, sub, audience, -time.Minute, uuid.NewString())}}, "invalid_grant"},
		"other audience": {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion(t, privKey, key.Kid, sub, "https://elsewhere/token", time.Minute, uuid.NewString())}}, "invalid_grant"},
		"other subject":  {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion(t, privKey, key.Kid, alice.UserID.String(), audience, time.Minute, uuid.NewString())}}, "invalid_grant"},
		"unknown kid":    {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion(t, privKey, "nope", sub, audience, time.Minute, uuid.NewString())}}, "invalid_grant"},
		"garbage":        {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {"a.b.c"}}, "invalid_grant"},
		"no assertion":   {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}}, "invalid_request"},
		"no grant":       {url.Values{}, "invalid_request"},
		"exchange":       {url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {"x"}}, "unsupported_grant_type"},
	} {
		status, body := exchange(t, env, tc.form)
		require.Equal(t, http.StatusBadRequest, status, name)
		require.Equal(t, tc.code, body["error"], name)
		require.NotEmpty(t, body["error_description"], name)
	}
	// A signature by another key under this kid fails.
	forged := assertion(t, func() jwk.Key { _, k := publicJWK(t, other); return k }(), key.Kid, sub, audience, time.Minute, uuid.NewString())
	status, body = exchange(t, env, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {forged}})
	require.Equal(t, http.StatusBadRequest, status)
	require.True(t, strings.HasPrefix(body["error"].(string), "invalid_grant"))

	// Without its key the account cannot sign in.
	admin.Delete(keys + "/" + key.Kid).Expect(http.StatusOK)
	admin.Delete(keys+"/"+key.Kid).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	status, _ = exchange(t, env, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"assertion": {assertion(t, privKey, key.Kid, sub, audience, time.Minute, uuid.NewString())}})
	require.Equal(t, http.StatusBadRequest, status)
	admin.Delete("/api/user/" + mo.UserID.String() + "/key/" + b64urlThumb(t, other)).Expect(http.StatusOK)
}
