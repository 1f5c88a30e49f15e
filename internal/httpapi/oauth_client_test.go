package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
)

func createOAuthClient(t *testing.T, c *apitest.Client, name string, uris ...string) api.OAuthClient {
	t.Helper()
	var out api.OAuthClient
	c.Post("/api/oauth_client", map[string]any{"Name": name, "RedirectURIs": uris}).Expect(http.StatusOK).JSON(&out)
	return out
}

// TestOAuthClientLifecycle: an admin registers a client and gets a generated, URL-safe ClientID; the
// client is listed (by Name), read by ClientID and by Name, and deleted by either; a deleted one is 404.
func TestOAuthClientLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	var me api.OrganizationMember
	admin.Get("/api/me").Expect(http.StatusOK).JSON(&me)

	before := time.Now().Add(-time.Minute)
	web := createOAuthClient(t, admin, "web", "https://app.example.com")
	require.Regexp(t, `^hubd-[a-z2-7]{26}$`, web.ClientID)
	require.Equal(t, "web", web.Name)
	require.Equal(t, []string{"https://app.example.com/"}, web.RedirectURIs)
	require.False(t, web.AllowAllOrgs)
	require.Equal(t, me.OrganizationID, web.OrganizationID)
	require.True(t, web.CreatedAt.After(before))
	admin2 := createOAuthClient(t, admin, "admin-ui", "https://admin.example.com/ui/")
	require.NotEqual(t, web.ClientID, admin2.ClientID)

	var list []api.OAuthClient
	admin.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 2)
	require.Equal(t, []string{"admin-ui", "web"}, []string{list[0].Name, list[1].Name}, "ordered by Name")

	var got api.OAuthClient
	admin.Get("/api/oauth_client/" + web.ClientID).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, web, got)
	admin.Get("/api/oauth_client/web").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, web, got)
	admin.Get("/api/oauth_client/nope").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	var del api.DeleteResponse
	admin.Delete("/api/oauth_client/web").Expect(http.StatusOK).JSON(&del)
	require.Nil(t, del.Error)
	admin.Get("/api/oauth_client/"+web.ClientID).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	admin.Delete("/api/oauth_client/"+web.ClientID).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	admin.Delete("/api/oauth_client/" + admin2.ClientID).Expect(http.StatusOK)
	admin.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
}

// TestOAuthClientRedirectURIs: the registration rules for redirect URIs. Wildcards, fragments, user
// information, relative URLs, other schemes and http off loopback are 400 UserInput naming the URI; a bare
// origin gains its root path (with or without the slash it is one URI, repeats collapse); a subpath is kept.
func TestOAuthClientRedirectURIs(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))

	for uri, why := range map[string]string{
		"https://*.example.com/":             "wildcards",
		"https://app.example.com/cb*":        "wildcards",
		"https://app.example.com/#/callback": "fragment",
		"https://me@app.example.com/":        "user information",
		"/callback":                          "absolute http or https",
		"custom-scheme://callback":           "absolute http or https",
		"http://app.example.com/":            "http is allowed only for localhost",
	} {
		e := admin.Post("/api/oauth_client", map[string]any{"Name": "bad", "RedirectURIs": []string{"https://ok.example.com/", uri}}).
			ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.Contains(t, e.Error.Message, fmt.Sprintf("%q", uri), uri)
		require.Contains(t, e.Error.Message, why, uri)
		require.Equal(t, "RedirectURIs.1", e.Error.ErrorMetadata.Items[0].Item, uri)
	}
	admin.Post("/api/oauth_client", map[string]any{"Name": "none", "RedirectURIs": []string{}}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	admin.Post("/api/oauth_client", map[string]any{"Name": "missing"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	admin.Post("/api/oauth_client", map[string]any{"RedirectURIs": []string{"https://a.example.com"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	admin.Post("/api/oauth_client", map[string]any{"Name": "", "RedirectURIs": []string{"https://a.example.com"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	admin.Post("/api/oauth_client", map[string]any{"Name": strings.Repeat("n", 101), "RedirectURIs": []string{"https://a.example.com"}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	many := make([]string, 21)
	for i := range many {
		many[i] = fmt.Sprintf("https://a.example.com/%d", i)
	}
	admin.Post("/api/oauth_client", map[string]any{"Name": "many", "RedirectURIs": many}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	admin.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&[]api.OAuthClient{})

	c := createOAuthClient(t, admin, "app", "https://App.Example.com", "https://app.example.com/", "https://app.example.com/sub/path",
		"http://localhost:5173", "http://127.0.0.1:8080/cb", "http://[::1]:3000/")
	require.Equal(t, []string{"https://app.example.com/", "https://app.example.com/sub/path", "http://localhost:5173/",
		"http://127.0.0.1:8080/cb", "http://[::1]:3000/"}, c.RedirectURIs)
	var got api.OAuthClient
	admin.Get("/api/oauth_client/app").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, c.RedirectURIs, got.RedirectURIs, "stored normalized")
}

// TestOAuthClientNameAndQuota: Name is unique in the organization (409 Conflict naming it; another
// organization may use it); an organization registers at most 10 clients (the 11th is 422 Unprocessable,
// and a delete makes room) unless trusted; only a trusted organization sets AllowAllOrgs (403 otherwise).
func TestOAuthClientNameAndQuota(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{TrustedOrgs: []string{"first-party"}})
	acme := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	beta := env.Client(env.Token("beta", "bob", auth.RoleAdmin))
	trusted := env.Client(env.Token("first-party", "tess", auth.RoleAdmin))

	createOAuthClient(t, acme, "web", "https://app.example.com")
	e := acme.Post("/api/oauth_client", map[string]any{"Name": "web", "RedirectURIs": []string{"https://other.example.com"}}).
		ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Contains(t, e.Error.Message, `"web"`)
	createOAuthClient(t, beta, "web", "https://app.example.com")

	for i := 2; i <= 10; i++ {
		createOAuthClient(t, acme, fmt.Sprintf("app-%02d", i), "https://app.example.com")
	}
	e = acme.Post("/api/oauth_client", map[string]any{"Name": "eleventh", "RedirectURIs": []string{"https://app.example.com"}}).
		ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Contains(t, e.Error.Message, "10")
	acme.Delete("/api/oauth_client/app-10").Expect(http.StatusOK)
	createOAuthClient(t, acme, "eleventh", "https://app.example.com")

	for i := 1; i <= 11; i++ {
		createOAuthClient(t, trusted, fmt.Sprintf("fp-%02d", i), "https://fp.example.com")
	}
	var all api.OAuthClient
	trusted.Post("/api/oauth_client", map[string]any{"Name": "all", "RedirectURIs": []string{"https://hub.example.com"}, "AllowAllOrgs": true}).
		Expect(http.StatusOK).JSON(&all)
	require.True(t, all.AllowAllOrgs)
	e = acme.Post("/api/oauth_client", map[string]any{"Name": "all", "RedirectURIs": []string{"https://hub.example.com"}, "AllowAllOrgs": true}).
		ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Contains(t, e.Error.Message, "trusted")
}

// TestOAuthClientQuotaRace: concurrent registrations of one organization never pass the quota together.
func TestOAuthClientQuotaRace(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	var wg sync.WaitGroup
	statuses := make([]int, 16)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = admin.Post("/api/oauth_client", map[string]any{"Name": fmt.Sprintf("c%d", i), "RedirectURIs": []string{"https://a.example.com"}}).Status
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		if s == http.StatusOK {
			ok++
		} else {
			require.Equal(t, http.StatusUnprocessableEntity, s)
		}
	}
	require.Equal(t, 10, ok)
	var list []api.OAuthClient
	admin.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 10)
}

// TestOAuthClientRoles: admins register and delete; managers, members and viewers may not (403
// Permission) but read; guests read nothing organization-wide (403).
func TestOAuthClientRoles(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	c := createOAuthClient(t, admin, "web", "https://app.example.com")
	body := map[string]any{"Name": "mine", "RedirectURIs": []string{"https://mine.example.com"}}
	for _, role := range []auth.Role{auth.RoleManager, auth.RoleMember, auth.RoleViewer} {
		who := env.Client(env.Token("acme", "u-"+string(role), role))
		who.Post("/api/oauth_client", body).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
		who.Delete("/api/oauth_client/"+c.ClientID).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
		var list []api.OAuthClient
		who.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&list)
		require.Len(t, list, 1, role)
		who.Get("/api/oauth_client/web").Expect(http.StatusOK)
	}
	guest := env.Client(env.Token("acme", "gus", auth.RoleGuest))
	guest.Get("/api/oauth_client").ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	guest.Get("/api/oauth_client/web").ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	guest.Post("/api/oauth_client", body).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	admin.Get("/api/oauth_client/web").Expect(http.StatusOK)
}

// TestOAuthClientTenancy: another organization's client is 404 by ClientID and by Name, for reads and
// deletes, and absent from lists; a User in two organizations sees the clients of its token's one only.
func TestOAuthClientTenancy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	acme := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	beta := env.Client(env.Token("beta", "bob", auth.RoleAdmin))
	c := createOAuthClient(t, acme, "web", "https://app.example.com")
	createOAuthClient(t, beta, "beta-app", "https://beta.example.com")

	for _, ref := range []string{c.ClientID, "web"} {
		beta.Get("/api/oauth_client/"+ref).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
		beta.Delete("/api/oauth_client/"+ref).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	}
	acme.Get("/api/oauth_client/web").Expect(http.StatusOK)
	var list []api.OAuthClient
	beta.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "beta-app", list[0].Name)

	// alice is also a viewer of beta: with beta's token she sees beta's clients, not acme's.
	aliceInBeta := env.Client(env.Token("beta", "alice", auth.RoleViewer))
	aliceInBeta.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "beta-app", list[0].Name)
	aliceInBeta.Get("/api/oauth_client/"+c.ClientID).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	acme.Get("/api/oauth_client").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "web", list[0].Name)
}

// TestOAuthClientNoUpdate: there is no in-place update: PUT and PATCH are 405 with Allow.
func TestOAuthClientNoUpdate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	c := createOAuthClient(t, admin, "web", "https://app.example.com")
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		resp := admin.Do(method, "/api/oauth_client/"+c.ClientID, map[string]any{"Name": "web", "RedirectURIs": []string{"https://x.example.com"}})
		require.Equal(t, http.StatusMethodNotAllowed, resp.Status, method)
		allow := resp.Header.Get("Allow")
		require.Contains(t, allow, "GET")
		require.Contains(t, allow, "DELETE")
		require.NotContains(t, allow, method)
	}
	resp := admin.Do(http.MethodPut, "/api/oauth_client", map[string]any{})
	require.Equal(t, http.StatusMethodNotAllowed, resp.Status)
}

// preflight sends a browser's CORS preflight from origin (no token: a browser sends none) and answers the
// origin the server allows, if any.
func preflight(c *apitest.Client, origin string) string {
	resp := c.Do(http.MethodOptions, "/api/me", nil, apitest.WithHeader("Origin", origin),
		apitest.WithHeader("Access-Control-Request-Method", "GET"),
		apitest.WithHeader("Access-Control-Request-Headers", "authorization"))
	return resp.Header.Get("Access-Control-Allow-Origin")
}

// TestOAuthClientCORS: the origins of registered redirect URIs (any organization's) may call the API from
// a browser, besides --cors-origins, preflight included, with no token; deleting the client withdraws
// them, on this replica and on another one on the same database.
func TestOAuthClientCORS(t *testing.T) {
	t.Parallel()
	envA := apitest.New(t, apitest.Options{HTTP: httpapi.Config{CORSOrigins: []string{"https://static.example.com"}}})
	envB := apitest.New(t, apitest.Options{DatabaseURL: envA.DBURL})
	admin := envA.Client(envA.Token("acme", "alice", auth.RoleAdmin))
	anonA, anonB := envA.Anonymous(), envB.Anonymous()
	const app = "https://app.example.com"

	require.Empty(t, preflight(anonA, app))
	require.Empty(t, preflight(anonB, app))
	require.Equal(t, "https://static.example.com", preflight(anonA, "https://static.example.com"))

	c := createOAuthClient(t, admin, "web", app+"/ui/", "http://localhost:5173")
	require.Equal(t, app, preflight(anonA, app), "the replica that registered it allows it at once")
	require.Equal(t, "http://localhost:5173", preflight(anonA, "http://localhost:5173"))
	require.Empty(t, preflight(anonA, "https://evil.example.com"))
	require.Eventually(t, func() bool { return preflight(anonB, app) == app }, 10*time.Second, 20*time.Millisecond,
		"another replica allows it once the notification arrives")
	resp := admin.Get("/api/me", apitest.WithHeader("Origin", app)).Expect(http.StatusOK)
	require.Equal(t, app, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "Hubd-Version")

	admin.Delete("/api/oauth_client/" + c.ClientID).Expect(http.StatusOK)
	require.Empty(t, preflight(anonA, app), "the replica that deleted it refuses it at once")
	require.Eventually(t, func() bool { return preflight(anonB, app) == "" }, 10*time.Second, 20*time.Millisecond,
		"another replica refuses it once the notification arrives")
	require.Equal(t, "https://static.example.com", preflight(anonA, "https://static.example.com"))

	// An origin two clients register (of two organizations) stays while either does.
	beta := envA.Client(envA.Token("beta", "bob", auth.RoleAdmin))
	createOAuthClient(t, admin, "one", app)
	createOAuthClient(t, beta, "two", app+"/other")
	admin.Delete("/api/oauth_client/one").Expect(http.StatusOK)
	require.Equal(t, app, preflight(anonA, app))
}
