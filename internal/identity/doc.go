// Package identity turns an identity provider's access token into a hubd sign-in (RFC 8693 token
// exchange at {base_url}/auth/token): it verifies the token with the provider's published keys (OIDC
// discovery and a cached JWKS, go-oidc), then resolves the registered OAuth client, the organization and
// the member from its claims. The provider is hubd's own ({base_url}/oidc, ModeEmbedded), an external one
// (ModeExternal), or none (ModeOff: browser sign-in is off).
package identity
