package identity

import (
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// Mode is which identity provider browser apps sign in with.
type Mode int

const (
	// ModeOff: no provider; token exchange is unsupported and /api/info AuthIssuer is empty. It is the
	// zero Mode, so a Config built in code (tests, tools) signs no one in unless it says so; hubd serve
	// chooses ModeEmbedded when no issuer is configured (ModeFor).
	ModeOff Mode = iota
	// ModeEmbedded: hubd's own OpenID provider at {base_url}/oidc; a token's sub is the UserID.
	ModeEmbedded
	// ModeExternal: the provider at Config.Issuer; a token's sub is a User's ExternalID.
	ModeExternal
)

// String names the mode for logs: embedded, external or off.
func (m Mode) String() string {
	switch m {
	case ModeEmbedded:
		return "embedded"
	case ModeExternal:
		return "external"
	default:
		return "off"
	}
}

// ModeFor is the Mode of the issuer setting: not given at all is the embedded provider, given empty is
// off, given a URL is that external provider.
func ModeFor(given bool, issuer string) Mode {
	switch {
	case !given:
		return ModeEmbedded
	case strings.TrimSpace(issuer) == "":
		return ModeOff
	default:
		return ModeExternal
	}
}

// DefaultOrgClaim is the claim naming the organization when none is configured.
const DefaultOrgClaim = "organization"

// EmbeddedIssuerPath is where, under the base URL, the embedded provider is served (its issuer).
const EmbeddedIssuerPath = "/oidc"

// Config is how token exchange verifies tokens.
type Config struct {
	Mode Mode
	// Issuer is the external provider's issuer URL (ModeExternal); the embedded one's is
	// {base_url}/oidc.
	Issuer string
	// Audience is what a token's aud must include; empty: the token endpoint, {base_url}/auth/token.
	Audience string
	// OrgClaim names the claim carrying the organization (its ID or ExternalID); empty: "organization".
	OrgClaim string
	// KeySet verifies signatures without discovery: the embedded provider's key set, which the app sets
	// in ModeEmbedded. Nil: the issuer's discovery document names its JWKS, fetched on first use and
	// cached.
	KeySet oidc.KeySet
	// MinKeyRefetch is the least time between two fetches of the provider's keys (a token naming a key
	// not held, or failing to verify, fetches them again, but not sooner); 0: DefaultMinKeyRefetch.
	MinKeyRefetch time.Duration
}

// IssuerURL is the issuer tokens must name (iss) and the /api/info AuthIssuer; empty when off.
func (c Config) IssuerURL(baseURL string) string {
	switch c.Mode {
	case ModeEmbedded:
		return strings.TrimSuffix(baseURL, "/") + EmbeddedIssuerPath
	case ModeExternal:
		// As given: iss must equal it exactly, and some providers' issuers end in a slash.
		return strings.TrimSpace(c.Issuer)
	default:
		return ""
	}
}

// AudienceFor is the audience tokens must carry (aud): the configured one, else the token endpoint.
func (c Config) AudienceFor(baseURL string) string {
	if c.Audience != "" {
		return c.Audience
	}
	return strings.TrimSuffix(baseURL, "/") + "/auth/token"
}

func (c Config) orgClaim() string {
	if c.OrgClaim != "" {
		return c.OrgClaim
	}
	return DefaultOrgClaim
}
