// Package app assembles a hubd instance from its configuration: store, signing keys, token issuer,
// domain services and the HTTP server. cmd/hubd and the tests build the service the same way.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hubd/hubd/internal/attestation"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/channel"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/eventfilter"
	"github.com/hubd/hubd/internal/group"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/identity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/migrate"
	"github.com/hubd/hubd/internal/oauthclient"
	"github.com/hubd/hubd/internal/oidcprovider"
	"github.com/hubd/hubd/internal/org"
	"github.com/hubd/hubd/internal/periodic"
	"github.com/hubd/hubd/internal/promote"
	"github.com/hubd/hubd/internal/signin"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
	"github.com/hubd/hubd/internal/target"
	"github.com/hubd/hubd/internal/unit"
)

// Version is the service's version, set at build time with -ldflags "-X ...app.Version=v1.2.3".
var Version = "v0.1.0-dev"

// Config is everything an instance needs.
type Config struct {
	DatabaseURL string
	// DBMaxConns sizes the database pool (0: pool_max_conns of the URL, else store.DefaultMaxConns).
	DBMaxConns int32
	// BaseURL is the external base address; it is the issuer of service tokens.
	BaseURL  string
	TokenTTL time.Duration
	// EventRetention is how long the event log keeps events (48 hours by default).
	EventRetention time.Duration
	HTTP           httpapi.Config
	// TrustedOrgs are the Slugs of the organizations exempt from the OAuth client quota, the only ones that
	// may register a client serving every organization (AllowAllOrgs).
	TrustedOrgs []string
	// Migrate applies pending migrations before starting.
	Migrate bool
	Logger  *slog.Logger
	// Auth is the identity provider browser apps sign in with by token exchange (the zero value: off).
	// In identity.ModeEmbedded (hubd serve without --auth-issuer) Open starts hubd's own OpenID provider
	// at {BaseURL}/oidc, where local users sign in, and the exchange trusts its key.
	Auth identity.Config
}

// App is an assembled instance.
type App struct {
	Store  *store.Store
	Keys   *auth.KeyRing
	Issuer *auth.Issuer
	httpapi.Services
	// Notifier is this replica's LISTEN connection; RunBackground starts it.
	Notifier *event.Notifier
	// SignIns counts failed sign-ins for the token endpoints and the provider's login page together.
	SignIns *httpapi.SignInGuard
	// OIDC is the embedded OpenID provider (nil but in identity.ModeEmbedded).
	OIDC *oidcprovider.Provider
}

// Open connects, migrates if asked, and loads the signing keys; it starts nothing.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Migrate {
		if err := migrate.Up(cfg.DatabaseURL); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DBMaxConns, cfg.Logger)
	if err != nil {
		return nil, err
	}
	keys, err := auth.NewKeyRing(ctx, st, cfg.TokenTTL)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("loading signing keys: %w", err)
	}
	tokenKey, err := st.Secret(ctx, "continue-token")
	if err != nil {
		st.Close()
		return nil, err
	}
	tokens := listquery.NewTokenCodec(tokenKey)
	issuer := auth.NewIssuer(keys, cfg.BaseURL, cfg.TokenTTL)
	notifier := event.NewNotifier(cfg.DatabaseURL, cfg.Logger)
	st.Events.Signal = notifier.Signal
	// Replicas keep what they remember of members when an event of a family declared Quiet is numbered.
	st.Events.QuietFamilies = entity.QuietEvents()
	// What every family is served with; Permissions grant to the org family's members and to Groups.
	kit := entity.Deps{Store: st, Tokens: tokens, Grantees: entity.Grantees{Users: org.MembersAmong, Groups: group.Among}}
	// The long polls of this replica share their reads of the event log.
	events := eventfilter.NewReader(st, notifier)
	signIns := httpapi.NewSignInGuard()
	// In the embedded mode hubd is its own OpenID provider, and the exchange trusts its key in process.
	var provider *oidcprovider.Provider
	if cfg.Auth.Mode == identity.ModeEmbedded {
		if provider, err = oidcprovider.New(ctx, oidcprovider.Options{Store: st, BaseURL: cfg.BaseURL, Limiter: signIns, Logger: cfg.Logger}); err != nil {
			st.Close()
			return nil, err
		}
		if cfg.Auth.KeySet == nil { // a test may verify with keys of its own
			cfg.Auth.KeySet = provider.KeySet()
		}
	}
	a := &App{Store: st, Keys: keys, Issuer: issuer, Notifier: notifier, SignIns: signIns, OIDC: provider, Services: httpapi.Services{
		Kit:    kit,
		Orgs:   org.NewService(kit, group.OfMembers),
		Units:  unit.NewService(kit),
		SignIn: &signin.Service{Store: st, Issuer: issuer},
		Channels: channel.NewService(kit, notifier, events, cfg.Logger, entity.Resolvers{
			space.EntityType: space.Family.IDOf, unit.EntityType: unit.Family.IDOf, target.EntityType: target.Family.IDOf, tag.EntityType: tag.Family.IDOf,
		}),
		BridgeWorkers: bridgeworker.NewService(kit, notifier, events.WorkerEvents),
		OAuthClients:  oauthclient.NewService(st, cfg.TrustedOrgs, cfg.Logger),
	}}
	a.Units.Approvals = attestation.NewApprovals(kit)
	a.Units.ChangeOrderRestores = promote.Restores{}
	a.Exchange = identity.New(cfg.Auth, cfg.BaseURL, st, a.Orgs)
	return a, nil
}

// Server builds the HTTP server of the instance.
func (a *App) Server(cfg Config, extra httpapi.Deps) (*httpapi.Server, error) {
	cfg.HTTP.BaseURL = cfg.BaseURL
	if cfg.HTTP.Version == "" {
		cfg.HTTP.Version = Version
	}
	deps := extra
	deps.Services, deps.Store, deps.Issuer, deps.Notifier, deps.Logger = a.Services, a.Store, a.Issuer, a.Notifier, cfg.Logger
	deps.SignIns = a.SignIns
	if a.OIDC != nil {
		deps.OIDC = a.OIDC.Handler()
	}
	return httpapi.New(cfg.HTTP, deps)
}

// RunBackground runs what every replica does besides serving until ctx ends: key refresh, event-log
// pruning, the command-run sweep, the sweep of expired action claims, the reloads of OAuth clients' CORS
// origins (each safe on every replica at once) and the notification listener.
func (a *App) RunBackground(ctx context.Context, cfg Config) {
	retention := cfg.EventRetention
	if retention <= 0 {
		retention = 48 * time.Hour
	}
	go a.Keys.Refresh(ctx, time.Minute)
	a.Store.Events.Start() // numbers committed events; also sweeps those no local writer waits for
	go a.Store.Events.RunPruner(ctx, retention, 10*time.Minute)
	go periodic.Run(ctx, 10*time.Minute, func(ctx context.Context) { _ = a.SignIn.PruneAssertions(ctx) })
	go a.Channels.RunSweeper(ctx, runSweepInterval)
	go periodic.Run(ctx, claimSweepInterval, func(ctx context.Context) { _, _ = a.Units.ExpireClaims(ctx, time.Now()) })
	// The CORS origins of OAuth clients: loaded now, reloaded when a replica commits a change of them
	// (and at every reconnect of the listener), and every minute in case a notification was lost.
	a.OAuthClients.ReloadQuietly(ctx)
	a.Notifier.OnNotify(oauthclient.NotifyChannel, func() { a.OAuthClients.ReloadQuietly(ctx) })
	go periodic.Run(ctx, time.Minute, a.OAuthClients.ReloadQuietly)
	go a.Notifier.Run(ctx, event.Channel)
}

// runSweepInterval is how often expired and unanswered command runs are ended.
const runSweepInterval = 2 * time.Second

// claimSweepInterval is how often Progressing operations past their claim are Aborted.
const claimSweepInterval = 30 * time.Second

// Close releases the instance's connections.
func (a *App) Close() { a.Store.Close() }
