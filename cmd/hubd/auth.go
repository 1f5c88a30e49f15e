package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"

	"github.com/hubd/hubd/internal/identity"
)

// authFlags are serve's identity-provider settings (browser apps' token exchange).
type authFlags struct{ issuer, audience, orgClaim *string }

func registerAuthFlags(fs *flag.FlagSet) authFlags {
	return authFlags{
		issuer: fs.String("auth-issuer", os.Getenv("HUBD_AUTH_ISSUER"), "issuer URL of the OpenID provider browser apps sign in with (HUBD_AUTH_ISSUER); "+
			"not given: hubd's own provider at {base-url}/oidc; given empty: browser sign-in is off"),
		audience: fs.String("auth-audience", env("HUBD_AUTH_AUDIENCE", ""), "audience (aud) the provider's access tokens must carry to be exchanged (HUBD_AUTH_AUDIENCE; default: {base-url}/auth/token)"),
		orgClaim: fs.String("auth-org-claim", env("HUBD_AUTH_ORG_CLAIM", identity.DefaultOrgClaim), "claim of the provider's access tokens naming the organization, by ID or ExternalID (HUBD_AUTH_ORG_CLAIM)"),
	}
}

// config decides the mode once: --auth-issuer (else HUBD_AUTH_ISSUER) not given at all is the embedded
// provider, given empty is off, given a URL is that provider. fs must be parsed.
func (f authFlags) config(fs *flag.FlagSet) (identity.Config, error) {
	_, given := os.LookupEnv("HUBD_AUTH_ISSUER")
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "auth-issuer" {
			given = true
		}
	})
	cfg := identity.Config{Mode: identity.ModeFor(given, *f.issuer), Issuer: *f.issuer, Audience: *f.audience, OrgClaim: *f.orgClaim}
	if cfg.Mode == identity.ModeExternal {
		u, err := url.Parse(cfg.IssuerURL(""))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return identity.Config{}, fmt.Errorf("--auth-issuer must be the provider's issuer URL (https://...), got %q", *f.issuer)
		}
	}
	return cfg, nil
}
