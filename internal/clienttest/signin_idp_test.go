package clienttest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/identity"
	"github.com/hubd/hubd/internal/oidcprovider"
)

const signInPassword = "correct horse battery staple"

// addLocalUser makes username a member of the organization orgSlug with role and gives them a password for
// the embedded provider's login page, as `hubd user add` does.
func addLocalUser(t *testing.T, env *apitest.Env, orgSlug, username string, role auth.Role, password string) auth.Principal {
	t.Helper()
	ctx := context.Background()
	p, err := env.App.Orgs.EnsureMembership(ctx, orgSlug, username, role)
	require.NoError(t, err)
	require.NoError(t, oidcprovider.SetPassword(ctx, env.App.Store, p.UserID, password))
	return p
}

// registerClient registers the app's page as an OAuth client of the admin's organization through the API
// and returns the client_id.
func registerClient(t *testing.T, env *apitest.Env, adminToken, name, redirectURI string) string {
	t.Helper()
	var created struct{ ClientID string }
	env.Client(adminToken).Post("/api/oauth_client", map[string]any{
		"Name": name, "RedirectURIs": []string{redirectURI},
	}).Expect(http.StatusOK).JSON(&created)
	require.NotEmpty(t, created.ClientID)
	return created.ClientID
}

// TestBrowserSignIn signs in through the reference app in headless Chromium with hubd's own identity
// provider: a local user of an organization, an OAuth client registered for the app's page, the
// provider's real login page, then token exchange and the API, all from the app's origin.
func TestBrowserSignIn(t *testing.T) {
	t.Parallel()
	app := serveApp(t)
	env := apitest.New(t, apitest.Options{Auth: identity.Config{Mode: identity.ModeEmbedded}})
	requireSignInToolchain(t)

	admin := env.Token("acme", "admin", auth.RoleAdmin)
	addLocalUser(t, env, "acme", "carol", auth.RoleMember, signInPassword)
	clientID := registerClient(t, env, admin, "reference-app", app.URL)
	app.configure(t, env.CheckedURL(), clientID)

	signIn(t, app, "carol", signInPassword, "carol", "acme")
}

// TestBrowserSignInExternalIssuer signs in through the reference app with an external identity provider:
// a second hubd's embedded provider. The first hubd (--auth-issuer naming the second's /oidc) knows the
// provider's organization and user by their ExternalIDs (the second's OrganizationID and UserID), and the
// provider's client_id as a registered OAuth client of the organization.
func TestBrowserSignInExternalIssuer(t *testing.T) {
	t.Parallel()
	app := serveApp(t)
	idp := apitest.New(t, apitest.Options{Auth: identity.Config{Mode: identity.ModeEmbedded}})
	requireSignInToolchain(t)

	// At the provider: the person, and the app's client.
	idpAdmin := idp.Token("idp-acme", "admin", auth.RoleAdmin)
	person := addLocalUser(t, idp, "idp-acme", "dave", auth.RoleMember, signInPassword)
	clientID := registerClient(t, idp, idpAdmin, "reference-app", app.URL)

	// At hubd: the organization and the member the provider's claims name, and the same client_id.
	hub := apitest.New(t, apitest.Options{
		HTTP: httpapi.Config{CORSOrigins: []string{app.origin()}},
		Auth: identity.Config{Mode: identity.ModeExternal, Issuer: idp.URL + oidcprovider.Path, Audience: idp.URL + "/auth/token"},
	})
	member := hub.Principal("acme", "david", auth.RoleManager)
	ctx := context.Background()
	_, err := hub.App.Store.Pool.Exec(ctx, `UPDATE organization SET external_id = $1 WHERE organization_id = $2`,
		person.OrganizationID.String(), member.OrganizationID)
	require.NoError(t, err)
	_, err = hub.App.Store.Pool.Exec(ctx, `UPDATE app_user SET external_id = $1 WHERE user_id = $2`,
		person.UserID.String(), member.UserID)
	require.NoError(t, err)
	_, err = hub.App.Store.Pool.Exec(ctx, `INSERT INTO oauth_client (client_id, organization_id, name, redirect_uris)
		VALUES ($1, $2, 'reference-app', $3)`, clientID, member.OrganizationID, []string{app.URL})
	require.NoError(t, err)
	app.configure(t, hub.CheckedURL(), clientID)

	// The provider's login page knows dave; hubd shows its own user and organization.
	signIn(t, app, "dave", signInPassword, "david", "acme")

	// erin is a person of the provider's organization whom hubd does not know: the app shows hubd's
	// refusal (an RFC 6749 error) as it is.
	erin := addLocalUser(t, idp, "idp-acme", "erin", auth.RoleMember, signInPassword)
	signInRefused(t, app, "erin", signInPassword,
		"failed (HTTP 400): invalid_grant: you ("+erin.UserID.String()+") are not a member of organization acme")
}
