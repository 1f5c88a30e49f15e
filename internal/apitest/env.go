package apitest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/hubd/hubd/internal/app"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/identity"
)

// Env is one running hubd with its own database.
type Env struct {
	T       testing.TB
	URL     string // the server's base address
	DBURL   string
	App     *app.App
	Server  *httpapi.Server
	Config  app.Config
	httpSrv *httptest.Server
	// transport is the Env's own connection pool: http.DefaultTransport's is shared by every test of the
	// process, and httptest.Server.Close closes all its idle connections.
	transport *http.Transport
}

// Options adjust an Env.
type Options struct {
	// HTTP overrides the HTTP settings (zero fields take the defaults below).
	HTTP httpapi.Config
	// Deps adds to the server's dependencies (failure-injecting strict middleware).
	Deps httpapi.Deps
	// DatabaseURL uses this database instead of a fresh one (for several replicas on one database).
	DatabaseURL string
	// TLS serves HTTPS, offering HTTP/2, with a test certificate the Env's clients trust.
	TLS bool
	// Auth is the identity provider of token exchange (zero: off).
	Auth identity.Config
	// TrustedOrgs are the instance's trusted organizations (app.Config.TrustedOrgs).
	TrustedOrgs []string
}

// New starts hubd on a fresh database for t.
func New(t testing.TB, opts ...Options) *Env {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	dbURL := o.DatabaseURL
	if dbURL == "" {
		dbURL = NewDatabase(t)
	}
	httpSrv := httptest.NewUnstartedServer(nil)
	scheme := "http://"
	if o.TLS {
		scheme = "https://"
	}
	baseURL := scheme + httpSrv.Listener.Addr().String()
	cfg := app.Config{
		DatabaseURL: dbURL, BaseURL: baseURL, TokenTTL: time.Hour,
		HTTP:   withDefaults(o.HTTP),
		Logger: testLogger(), TrustedOrgs: o.TrustedOrgs,
		Auth: o.Auth,
	}
	ctx := context.Background()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("opening hubd: %v", err)
	}
	srv, err := a.Server(cfg, o.Deps)
	if err != nil {
		a.Close()
		t.Fatalf("building the server: %v", err)
	}
	httpSrv.Config.Handler = srv.Handler()
	httpSrv.Config.MaxHeaderBytes = httpapi.MaxHeaderBytes
	httpSrv.Listener = srv.Listener(httpSrv.Listener)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.TLS {
		httpSrv.EnableHTTP2 = true
		httpSrv.StartTLS()
		transport.TLSClientConfig = httpSrv.Client().Transport.(*http.Transport).TLSClientConfig
	} else {
		httpSrv.Start()
	}
	bg, stopBackground := context.WithCancel(ctx)
	a.RunBackground(bg, cfg)
	t.Cleanup(func() {
		transport.CloseIdleConnections()
		a.Notifier.StopWaiters() // parked polls answer now
		httpSrv.Close()
		stopBackground()
		a.Close()
	})
	return &Env{T: t, URL: baseURL, DBURL: dbURL, App: a, Server: srv, Config: cfg, httpSrv: httpSrv, transport: transport}
}

func withDefaults(c httpapi.Config) httpapi.Config {
	if c.BodyLimit == 0 {
		c.BodyLimit = 1 << 20
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.MaxInFlightPerCaller == 0 {
		c.MaxInFlightPerCaller = 64
	}
	if c.MaxInvocationsPerOrganization == 0 {
		c.MaxInvocationsPerOrganization = 8
	}
	return c
}

// testLogger is silent unless HUBD_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("HUBD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Token returns a service token for username in the organization orgSlug with role, creating the
// organization, the User and the membership as `hubd token` does.
func (e *Env) Token(orgSlug, username string, role auth.Role) string {
	e.T.Helper()
	p, err := e.App.Orgs.EnsureMembership(context.Background(), orgSlug, username, role)
	if err != nil {
		e.T.Fatalf("ensuring membership: %v", err)
	}
	tok, _, err := e.App.Issuer.Mint(p)
	if err != nil {
		e.T.Fatalf("minting token: %v", err)
	}
	return tok
}

// Principal returns the identity behind Token(orgSlug, username, role).
func (e *Env) Principal(orgSlug, username string, role auth.Role) auth.Principal {
	e.T.Helper()
	p, err := e.App.Orgs.EnsureMembership(context.Background(), orgSlug, username, role)
	if err != nil {
		e.T.Fatalf("ensuring membership: %v", err)
	}
	return p
}
