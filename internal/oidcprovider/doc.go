// Package oidcprovider is hubd's embedded OpenID provider, served at {base_url}/oidc, so browser apps
// can sign people in without an external identity provider. The protocol is zitadel/oidc's op package;
// this package supplies what it leaves to the host: storage in PostgreSQL (so any replica continues a
// sign-in another started), the clients (rows of oauth_client: public, authorization code with PKCE S256
// only, exact redirect URIs), a signing key shared through the database and distinct from the keys of
// service tokens, and the login page, where local users (a password in user_password) sign in.
//
// Its access tokens are not accepted by the API: an app exchanges them at {base_url}/auth/token (RFC
// 8693) for a service token. They carry sub (the UserID), organization (the OrganizationID the sign-in
// chose), azp and client_id (the app's client_id) and aud (the token-exchange audience and the client_id).
package oidcprovider
