package oidcprovider

import (
	"net/url"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/hubd/hubd/gen/db"
)

// client is an oauth_client row as op.Client: public (no secret), authorization code with PKCE only,
// JWT access tokens.
type client struct {
	row *db.OauthClient
	// loginURL is the login page's address up to the auth request ID.
	loginURL string
}

var _ op.Client = (*client)(nil)

func (c *client) GetID() string { return c.row.ClientID }

// RedirectURIs are matched exactly. They are stored normalized (a bare origin gains its root path), so a
// bare origin is offered with and without its slash: the two are the same redirect URI.
func (c *client) RedirectURIs() []string {
	uris := make([]string, 0, len(c.row.RedirectUris)+1)
	for _, u := range c.row.RedirectUris {
		uris = append(uris, u)
		if p, err := url.Parse(u); err == nil && p.Path == "/" && p.RawQuery == "" && p.Fragment == "" {
			uris = append(uris, strings.TrimSuffix(u, "/"))
		}
	}
	return uris
}

func (c *client) PostLogoutRedirectURIs() []string    { return nil }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeUserAgent }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodNone }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType         { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c *client) LoginURL(id string) string            { return c.loginURL + url.QueryEscape(id) }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration       { return idTokenTTL }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) IsScopeAllowed(scope string) bool     { return scope == ScopeOrganization }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// DevMode lets an http redirect URI through the library's scheme check. Registration decides which
// redirect URIs a client has, and matching stays exact.
func (c *client) DevMode() bool { return true }
