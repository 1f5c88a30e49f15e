package oidcprovider

import (
	"context"
	"crypto"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/rs/cors"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"

	"github.com/hubd/hubd/internal/store"
)

// Path is where the provider is served under the base address; its issuer is {base_url}/oidc.
const Path = "/oidc"

// The login page: its path under Path and the query parameter naming the auth request.
const (
	loginPath         = "/login"
	loginRequestField = "authRequestID"
)

// Limiter slows down password guessing. The server's sign-in guard implements it, so failures on the
// login page and at the token endpoints count together: per credential from an address, and per address.
type Limiter interface {
	// Check returns how long r must wait before trying credential again (0: it may try now).
	Check(r *http.Request, credential string) time.Duration
	// Failed records a failed attempt of r with credential.
	Failed(r *http.Request, credential string)
}

// Options are what the provider needs from the instance.
type Options struct {
	Store *store.Store
	// BaseURL is the service's external base address, without a trailing slash.
	BaseURL string
	Limiter Limiter
	Logger  *slog.Logger
}

// Provider is the embedded OpenID provider of one replica; every replica builds the same one from the
// database.
type Provider struct {
	op      *op.Provider
	storage *storage
	login   *login
	handler http.Handler
}

// New builds the provider: its signing key and encryption key come from the database (created by the
// first replica), its state lives there.
func New(ctx context.Context, o Options) (*Provider, error) {
	if o.Limiter == nil {
		return nil, fmt.Errorf("oidcprovider: a Limiter is required")
	}
	key, err := loadSigningKey(ctx, o.Store)
	if err != nil {
		return nil, err
	}
	// Codes are the auth request ID sealed with this key; every replica must open them.
	cryptoKey, err := o.Store.Secret(ctx, "oidc-provider-crypto-key")
	if err != nil {
		return nil, err
	}
	csrfKey, err := o.Store.Secret(ctx, "oidc-provider-login-csrf")
	if err != nil {
		return nil, err
	}
	issuer := o.BaseURL + Path
	st := &storage{store: o.Store, key: key, issuer: issuer, exchangeAudience: o.BaseURL + "/auth/token"}
	cfg := &op.Config{
		CodeMethodS256:     true,
		SupportedUILocales: []language.Tag{language.English},
		SupportedScopes:    []string{"openid", "email", "profile", ScopeOrganization},
		SupportedClaims: []string{"sub", "aud", "exp", "iat", "nbf", "iss", "jti", "auth_time", "nonce", "amr", "c_hash",
			"at_hash", "azp", "client_id", "preferred_username", "name", "email", ScopeOrganization},
	}
	copy(cfg.CryptoKey[:], cryptoKey)
	// The token, keys, discovery and userinfo endpoints answer any origin, without credentials: apps are
	// public clients that hold their tokens, and no cookie of the provider is read there.
	corsOpts := cors.Options{
		AllowOriginFunc:  func(string) bool { return true },
		AllowedMethods:   []string{http.MethodGet, http.MethodHead, http.MethodPost},
		AllowedHeaders:   []string{"Accept", "Authorization", "Content-Type"},
		AllowCredentials: false,
	}
	opts := []op.Option{op.WithCORSOptions(&corsOpts)}
	if strings.HasPrefix(issuer, "http://") {
		// The operator serves hubd over plain HTTP (a development setup or TLS ended before it).
		opts = append(opts, op.WithAllowInsecure())
	}
	provider, err := op.NewProvider(cfg, st, op.StaticIssuer(issuer), opts...)
	if err != nil {
		return nil, fmt.Errorf("building the OpenID provider: %w", err)
	}
	p := &Provider{op: provider, storage: st}
	p.login = &login{storage: st, limiter: o.Limiter, csrfKey: csrfKey, log: o.Logger,
		secure: strings.HasPrefix(issuer, "https://"), callback: func(ctx context.Context, id string) string {
			return op.AuthCallbackURL(provider)(op.ContextWithIssuer(ctx, issuer), id)
		}}
	mux := http.NewServeMux()
	mux.Handle(loginPath, p.login)
	mux.Handle(provider.AuthorizationEndpoint().Relative()+"/callback", p.login.guardCallback(provider))
	mux.Handle("/", provider)
	p.handler = http.StripPrefix(Path, mux)
	return p, nil
}

// Handler serves the provider; mount it at Path (requests keep their full path).
func (p *Provider) Handler() http.Handler { return p.handler }

// Issuer is the provider's issuer, {base_url}/oidc.
func (p *Provider) Issuer() string { return p.storage.issuer }

// KeySet verifies the signatures of the provider's tokens, for token exchange.
func (p *Provider) KeySet() gooidc.KeySet {
	return &gooidc.StaticKeySet{PublicKeys: []crypto.PublicKey{&p.storage.key.priv.PublicKey}}
}
