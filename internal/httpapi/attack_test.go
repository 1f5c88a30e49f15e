package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// signer is a key pair whose public half is registered with hubd and whose private half signs
// assertions, as a ServiceAccount's or a person's client holds it.
type signer struct {
	jwk map[string]any
	key jwk.Key
	kid string
}

func newSigner(t *testing.T) signer {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pub, key := publicJWK(t, priv)
	return signer{jwk: pub, key: key, kid: b64urlThumb(t, priv)}
}

// signIn exchanges an assertion of s for subject at /auth/token, in organization orgID when not empty.
func (s signer) signIn(t *testing.T, env *apitest.Env, subject, orgID string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"assertion": {assertion(t, s.key, s.kid, subject, env.URL+"/auth/token", time.Minute, uuid.NewString())}}
	if orgID != "" {
		form.Set("organization_id", orgID)
	}
	return exchange(t, env, form)
}

// token signs in and returns the service token, failing the test otherwise.
func (s signer) token(t *testing.T, env *apitest.Env, subject, orgID string) string {
	t.Helper()
	status, body := s.signIn(t, env, subject, orgID)
	require.Equal(t, http.StatusOK, status, body)
	return body["access_token"].(string)
}

func roleOf(t *testing.T, c *apitest.Client) api.OrgRole {
	t.Helper()
	var me api.OrganizationMember
	c.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	return me.OrgRole
}

// TestKeyEscalation: nobody registers a key for, acts as, or manages the keys of a principal stronger than
// themselves; only an admin registers a key for a person; a credential never signs in with more than the
// role of whoever had it issued, even after the account it belongs to is raised.
func TestKeyEscalation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	manager := env.Client(env.Token("acme", "mia", auth.RoleManager))
	alice := env.Principal("acme", "alice", auth.RoleAdmin)
	ada := env.Principal("acme", "ada", auth.RoleAdmin)
	mo := env.Principal("acme", "mo", auth.RoleMember)

	// The attack as found: a manager registers a key for an admin and signs in as that admin.
	k := newSigner(t)
	manager.Post("/api/user/"+alice.UserID.String()+"/key", map[string]any{"PublicJWK": k.jwk}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	status, body := k.signIn(t, env, alice.UserID.String(), "")
	require.Equal(t, http.StatusBadRequest, status, "no key was registered, so no sign-in: %v", body)
	// Not for a person of a weaker role either: only admins register keys for people.
	manager.Post("/api/user/"+mo.UserID.String()+"/key", map[string]any{"PublicJWK": k.jwk}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var moKey api.UserKey
	admin.Post("/api/user/"+mo.UserID.String()+"/key", map[string]any{"PublicJWK": k.jwk}).Expect(http.StatusOK).JSON(&moKey)
	require.Equal(t, api.OrgRole("admin"), moKey.MaxOrgRole)
	require.Equal(t, api.OrgRole("member"), roleOf(t, env.Client(k.token(t, env, mo.UserID.String(), ""))))

	// Nor for an admin ServiceAccount; a manager can neither make nor remove keys of a stronger account.
	var root, bot api.ServiceAccount
	admin.Post("/api/service_account", map[string]any{"Slug": "root", "OrgRole": "admin"}).Expect(http.StatusOK).JSON(&root)
	manager.Post("/api/service_account", map[string]any{"Slug": "bot", "OrgRole": "member"}).Expect(http.StatusOK).JSON(&bot)
	rootKeys := "/api/service_account/" + root.ServiceAccountID.String() + "/key"
	botKeys := "/api/service_account/" + bot.ServiceAccountID.String() + "/key"
	rk := newSigner(t)
	manager.Post(rootKeys, map[string]any{"PublicJWK": rk.jwk}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	manager.Post("/api/user/"+root.UserID.String()+"/key", map[string]any{"PublicJWK": rk.jwk}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	admin.Post(rootKeys, map[string]any{"PublicJWK": rk.jwk}).Expect(http.StatusOK)
	manager.Delete(rootKeys+"/"+rk.kid).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Equal(t, api.OrgRole("admin"), roleOf(t, env.Client(rk.token(t, env, root.ServiceAccountID.String(), ""))))
	adaKey := newSigner(t)
	admin.Post("/api/user/"+ada.UserID.String()+"/key", map[string]any{"PublicJWK": adaKey.jwk}).Expect(http.StatusOK)
	manager.Delete("/api/user/"+ada.UserID.String()+"/key/"+adaKey.kid).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// A manager's key for a member account, raised to admin later, still signs in as no more than manager.
	bk := newSigner(t)
	var botKey api.UserKey
	manager.Post(botKeys, map[string]any{"PublicJWK": bk.jwk}).Expect(http.StatusOK).JSON(&botKey)
	require.Equal(t, api.OrgRole("manager"), botKey.MaxOrgRole)
	admin.Patch("/api/service_account/"+bot.ServiceAccountID.String(), map[string]any{"OrgRole": "admin"}).Expect(http.StatusOK)
	raised := env.Client(bk.token(t, env, bot.ServiceAccountID.String(), ""))
	require.Equal(t, api.OrgRole("manager"), roleOf(t, raised))
	raised.Post("/api/service_account", map[string]any{"Slug": "root2", "OrgRole": "admin"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	// An admin's key for the same account gives it the admin role.
	ak := newSigner(t)
	admin.Post(botKeys, map[string]any{"PublicJWK": ak.jwk}).Expect(http.StatusOK)
	require.Equal(t, api.OrgRole("admin"), roleOf(t, env.Client(ak.token(t, env, bot.ServiceAccountID.String(), ""))))

	// A BridgeWorker's Secret held by a member does not become an admin credential when an admin raises the
	// worker: the raise issues a new Secret to the admin and the old one stops working.
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	workers := "/api/space/" + sp.SpaceID.String() + "/bridge_worker"
	member := env.Client(env.Token("acme", "mo", auth.RoleMember))
	var w api.BridgeWorker
	member.Post(workers, map[string]any{"Slug": "w", "OrgRole": "member"}).Expect(http.StatusOK).JSON(&w)
	oldSecret := w.Secret
	var sameRole api.BridgeWorker
	admin.Patch(workers+"/w", map[string]any{"OrgRole": "viewer"}).Expect(http.StatusOK).JSON(&sameRole)
	require.Empty(t, sameRole.Secret, "lowering the role keeps the Secret")
	admin.Patch(workers+"/w", map[string]any{"OrgRole": "admin"}).Expect(http.StatusOK).JSON(&w)
	require.NotEmpty(t, w.Secret)
	require.NotEqual(t, oldSecret, w.Secret)
	status, _ = workerSignIn(t, env, map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": oldSecret})
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, api.OrgRole("admin"), roleOf(t, env.Client(workerToken(t, env, w.BridgeWorkerID, w.Secret))))
	var dry api.BridgeWorker
	admin.Patch(workers+"/w?dry_run=true", map[string]any{"OrgRole": "viewer"}).Expect(http.StatusOK).JSON(&dry)
	require.Empty(t, dry.Secret)
}

// TestCrossOrganizationUser: one User is a member of two organizations. Neither organization's admin can
// see, remove or add keys that act in the other, and an assertion signs in only to the organization its
// key was registered in.
func TestCrossOrganizationUser(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	adminA := env.Client(env.Token("org-a", "alice", auth.RoleAdmin))
	adminB := env.Client(env.Token("org-b", "bob", auth.RoleAdmin))
	samA := env.Principal("org-a", "sam", auth.RoleMember)
	samB := env.Principal("org-b", "sam", auth.RoleManager)
	require.Equal(t, samA.UserID, samB.UserID)
	sam := samA.UserID.String()
	keys := "/api/user/" + sam + "/key"

	kb := newSigner(t)
	adminB.Post(keys, map[string]any{"PublicJWK": kb.jwk, "Description": "B's secret deploy key"}).Expect(http.StatusOK)
	ka := newSigner(t)
	var aKey api.UserKey
	adminA.Post(keys, map[string]any{"PublicJWK": ka.jwk}).Expect(http.StatusOK).JSON(&aKey)
	require.Equal(t, samA.OrganizationID, aKey.OrganizationID)

	// A sees only its own key record of sam; it cannot delete B's.
	var listed []api.UserKey
	adminA.Get(keys).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)
	require.Equal(t, ka.kid, listed[0].Kid)
	adminA.Delete(keys+"/"+kb.kid).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	adminB.Get(keys).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)
	require.Equal(t, "B's secret deploy key", listed[0].Description)

	// A's key signs in to A only, with A's role; naming B is refused.
	require.Equal(t, api.OrgRole("member"), roleOf(t, env.Client(ka.token(t, env, sam, ""))))
	status, body := ka.signIn(t, env, sam, samB.OrganizationID.String())
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_grant", body["error"])
	tokB := kb.token(t, env, sam, "")
	require.Equal(t, api.OrgRole("manager"), roleOf(t, env.Client(tokB)))
	var me api.OrganizationMember
	env.Client(tokB).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, samB.OrganizationID, me.OrganizationID)

	// Registering the same public key in A neither fails nor reveals B's record; with both registered, the
	// client names the organization, and each sign-in stays in its own.
	adminA.Post(keys, map[string]any{"PublicJWK": kb.jwk}).Expect(http.StatusOK)
	status, body = kb.signIn(t, env, sam, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_request", body["error"])
	require.Equal(t, api.OrgRole("member"), roleOf(t, env.Client(kb.token(t, env, sam, samA.OrganizationID.String()))))
	require.Equal(t, api.OrgRole("manager"), roleOf(t, env.Client(kb.token(t, env, sam, samB.OrganizationID.String()))))

	// Removing sam from A removes A's keys of sam, and leaves B's.
	adminA.Delete("/api/organization/" + samA.OrganizationID.String() + "/organization_member/" + sam).Expect(http.StatusOK)
	status, _ = ka.signIn(t, env, sam, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, api.OrgRole("manager"), roleOf(t, env.Client(kb.token(t, env, sam, ""))))
}

// TestSignInRateLimits: failed sign-ins are limited per credential and per client address; once limited,
// every attempt (even a right one) is 429 with Retry-After until the limit refills.
func TestSignInRateLimits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	var w api.BridgeWorker
	admin.Post("/api/space/"+sp.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "w"}).Expect(http.StatusOK).JSON(&w)

	// Per worker: ten wrong Secrets, then even the right one waits.
	wrong := map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": "guess"}
	for i := 0; i < 10; i++ {
		status, _ := workerSignIn(t, env, wrong)
		require.Equal(t, http.StatusUnauthorized, status, "attempt %d", i+1)
	}
	resp := env.Anonymous().Post("/auth/worker", map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": w.Secret})
	require.Equal(t, http.StatusTooManyRequests, resp.Status)
	require.Equal(t, "slow_down", resp.Map()["error"])
	require.NotEmpty(t, resp.Header.Get("Retry-After"))

	// Per key: ten failed assertions of one kid, then it waits; another key is not held up by it.
	var bot api.ServiceAccount
	admin.Post("/api/service_account", map[string]any{"Slug": "bot"}).Expect(http.StatusOK).JSON(&bot)
	k := newSigner(t)
	admin.Post("/api/service_account/"+bot.ServiceAccountID.String()+"/key", map[string]any{"PublicJWK": k.jwk}).Expect(http.StatusOK)
	for i := 0; i < 10; i++ {
		status, body := k.signIn(t, env, uuid.NewString(), "") // a subject the key is not registered for
		require.Equal(t, http.StatusBadRequest, status, body)
	}
	status, body := k.signIn(t, env, bot.ServiceAccountID.String(), "")
	require.Equal(t, http.StatusTooManyRequests, status, body)
	other := newSigner(t)
	admin.Post("/api/service_account/"+bot.ServiceAccountID.String()+"/key", map[string]any{"PublicJWK": other.jwk}).Expect(http.StatusOK)
	other.token(t, env, bot.ServiceAccountID.String(), "")

	// Per address: failures spread over many credentials still run out (30 in all from one address).
	for i := 0; i < 30; i++ {
		status, _ := workerSignIn(t, env, map[string]string{"WorkerID": uuid.NewString(), "Secret": "guess"})
		if status == http.StatusTooManyRequests {
			return
		}
	}
	t.Fatal("30 failed sign-ins from one address were never limited")
}
