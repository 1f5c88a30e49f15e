// Command hubd is the one binary of the service:
//
//	hubd serve                     serve the API (migrating first)
//	hubd migrate up|down [N]|version
//	hubd token --org SLUG --user USERNAME [--role ROLE]
//	hubd user add --org SLUG --username NAME --role ROLE   (password on stdin)
//	hubd keys rotate               make a new signing key; older ones verify until their tokens expire
//	hubd worker --worker-id ID --dir DIR   run the reference bridge worker on a directory
//
// Every flag has an environment fallback; see README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hubd/hubd/internal/app"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/longpoll"
	"github.com/hubd/hubd/internal/migrate"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/trigger"
	"github.com/hubd/hubd/internal/unit"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(ctx, os.Args[2:])
	case "migrate":
		err = migrateCmd(os.Args[2:])
	case "token":
		err = token(ctx, os.Args[2:])
	case "keys":
		err = keys(ctx, os.Args[2:])
	case "user":
		err = userCmd(ctx, os.Args[2:], os.Stdin)
	case "worker":
		err = workerCmd(ctx, os.Args[2:])
	case "version":
		fmt.Println(app.Version)
	case "-h", "--help", "help":
		usage()
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hubd:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: hubd <command> [flags]
  serve      serve the API on --addr (migrates the database first)
  migrate    up | down [N] | version
  token      --org SLUG --user USERNAME [--role admin|manager|member|viewer|guest]: print a service token
  user       add --org SLUG --username NAME --role ROLE: add a local user who signs in on the embedded
             OpenID provider's login page (password: first line of stdin)
  keys       rotate: make a new token-signing key
  worker     --worker-id ID --dir DIR: run the reference bridge worker, writing Units to DIR
             (secret from HUBD_WORKER_SECRET or --secret-file; hubd at --base-url)
  version    print the version
Run 'hubd <command> -h' for a command's flags.`)
}

// common holds the flags every command that touches the database shares.
type common struct {
	addr, databaseURL, baseURL string
	tokenTTL                   time.Duration
	logLevel                   string
	dbMaxConns                 int
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "addr", env("HUBD_ADDR", "127.0.0.1:8080"), "listen address (HUBD_ADDR)")
	fs.StringVar(&c.databaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL (DATABASE_URL)")
	fs.StringVar(&c.baseURL, "base-url", env("HUBD_BASE_URL", ""), "external base address, the tokens' issuer (HUBD_BASE_URL; default http://<addr>)")
	fs.DurationVar(&c.tokenTTL, "token-ttl", envDuration("HUBD_TOKEN_TTL", time.Hour), "service token lifetime (HUBD_TOKEN_TTL)")
	fs.IntVar(&c.dbMaxConns, "db-max-conns", int(envInt("HUBD_DB_MAX_CONNS", 0)), "database connections per replica (HUBD_DB_MAX_CONNS; 0: pool_max_conns of the URL, else 4 per core, at least 16)")
	fs.StringVar(&c.logLevel, "log-level", env("HUBD_LOG_LEVEL", "info"), "debug, info, warn or error (HUBD_LOG_LEVEL)")
}

func (c *common) config(migrate bool) (app.Config, error) {
	if c.databaseURL == "" {
		return app.Config{}, errors.New("no database configured: set --database-url or DATABASE_URL (make run finds or starts one)")
	}
	base := c.baseURL
	if base == "" {
		base = "http://" + c.addr
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return app.Config{}, fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	return app.Config{DatabaseURL: c.databaseURL, DBMaxConns: int32(c.dbMaxConns), BaseURL: strings.TrimSuffix(base, "/"), TokenTTL: c.tokenTTL, Migrate: migrate, Logger: logger}, nil
}

// open assembles the instance for a one-shot command (token, user add): migrated, logging only warnings
// and errors, as text on stderr, so that stdout holds the command's answer alone.
func (c *common) open(ctx context.Context) (*app.App, error) {
	cfg, err := c.config(true)
	if err != nil {
		return nil, err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return app.Open(ctx, cfg)
}

func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	var c common
	c.register(fs)
	bodyLimit := fs.Int64("body-limit", envInt("HUBD_BODY_LIMIT", 4<<20), "largest request body in bytes (HUBD_BODY_LIMIT)")
	jsonDepth := fs.Int("max-json-depth", int(envInt("HUBD_MAX_JSON_DEPTH", httpapi.DefaultMaxJSONDepth)), "deepest nesting of objects and arrays in a JSON request body (HUBD_MAX_JSON_DEPTH)")
	jsonValues := fs.Int("max-json-values", int(envInt("HUBD_MAX_JSON_VALUES", httpapi.DefaultMaxJSONValues)), "most keys and values in a JSON request body (HUBD_MAX_JSON_VALUES)")
	viewValues := fs.Int("view-cell-values", int(envInt("HUBD_VIEW_CELL_VALUES", listquery.DefaultViewCellValues)), "most values one data column of a View may select for one item of a list (HUBD_VIEW_CELL_VALUES; more is 400)")
	viewCell := fs.Int("view-cell-bytes", int(envInt("HUBD_VIEW_CELL_BYTES", listquery.DefaultViewCellBytes)), "most bytes of values one data column of a View may select for one item of a list (HUBD_VIEW_CELL_BYTES; more is 400)")
	viewPage := fs.Int("view-page-bytes", int(envInt("HUBD_VIEW_PAGE_BYTES", listquery.DefaultViewPageBytes)), "most bytes of values a View's data columns may select for one list page; the page ends early, with a continue token (HUBD_VIEW_PAGE_BYTES)")
	timeout := fs.Duration("request-timeout", envDuration("HUBD_REQUEST_TIMEOUT", 30*time.Second), "longest time a request may work (HUBD_REQUEST_TIMEOUT)")
	writeTimeout := fs.Duration("write-timeout", envDuration("HUBD_WRITE_TIMEOUT", httpapi.DefaultWriteTimeout), "longest time one write of an answer to a client may take; a client that stops reading is cut off after it (HUBD_WRITE_TIMEOUT)")
	inFlight := fs.Int("max-in-flight", int(envInt("HUBD_MAX_IN_FLIGHT", 64)), "concurrent requests per caller per replica (HUBD_MAX_IN_FLIGHT)")
	invocations := fs.Int("max-invocations", int(envInt("HUBD_MAX_INVOCATIONS", 8)), "concurrent function invoke requests per organization per replica (HUBD_MAX_INVOCATIONS)")
	pollStarts := fs.Int("max-poll-starts", int(envInt("HUBD_MAX_POLL_STARTS", 0)), "long polls starting at once per replica; more wait their turn (HUBD_MAX_POLL_STARTS; 0: 8 per database connection)")
	debugAddr := fs.String("debug-addr", env("HUBD_DEBUG_ADDR", ""), "address serving Go's profiler at /debug/pprof/ (HUBD_DEBUG_ADDR; off when empty; never expose it)")
	corsOrigins := fs.String("cors-origins", env("HUBD_CORS_ORIGINS", ""), "comma-separated origins (scheme://host[:port], or *) whose browser apps may call the API (HUBD_CORS_ORIGINS; none when empty)")
	trustedOrgs := fs.String("trusted-orgs", env("HUBD_TRUSTED_ORGS", ""), "comma-separated Slugs of first-party organizations exempt from the quota of 10 OAuth clients and allowed to register clients serving every organization (HUBD_TRUSTED_ORGS)")
	retention := fs.Duration("event-retention", envDuration("HUBD_EVENT_RETENTION", 48*time.Hour), "how long the event log keeps events (HUBD_EVENT_RETENTION)")
	longPollMode := fs.String("long-poll-mode", env("HUBD_LONG_POLL_MODE", string(longpoll.ModeParked)), "how waiting long polls wait: parked (an HTTP/1.1 poll's connection is held without a goroutine) or goroutine (each waits on its handler's goroutine); HTTP/2 and TLS connections always wait on their goroutine (HUBD_LONG_POLL_MODE)")
	templateRefs := fs.Int("max-template-references", int(envInt("HUBD_MAX_TEMPLATE_REFERENCES", int64(function.MaxTemplateReferences))), "parameter references ({{.Name}}) a stored Invocation may hold (HUBD_MAX_TEMPLATE_REFERENCES)")
	templateBytes := fs.Int("max-template-expansion", int(envInt("HUBD_MAX_TEMPLATE_EXPANSION", int64(function.MaxExpandedBytes))), "bytes the templates of one request or data write may expand to (HUBD_MAX_TEMPLATE_EXPANSION)")
	triggersPerSpace := fs.Int("max-triggers-per-space", int(envInt("HUBD_MAX_TRIGGERS_PER_SPACE", int64(trigger.MaxPerSpace))), "Triggers a Space may hold (HUBD_MAX_TRIGGERS_PER_SPACE)")
	triggerCalls := fs.Int("max-trigger-calls", int(envInt("HUBD_MAX_TRIGGER_CALLS", int64(unit.MaxTriggerCalls))), "function calls one data write may run through Triggers (HUBD_MAX_TRIGGER_CALLS)")
	authSettings := registerAuthFlags(fs)
	memoryLimit := fs.Int64("memory-limit", envInt("HUBD_MEMORY_LIMIT", defaultMemoryLimit), "soft limit in bytes of the process's Go memory, raised to twice the live heap when that is more (HUBD_MEMORY_LIMIT; 0: the runtime's own, GOMEMLIMIT)")
	_ = fs.Parse(args)
	cfg, err := c.config(true)
	if err != nil {
		return err
	}
	tuneCollector(ctx, *memoryLimit)
	// The bounds of templates and Triggers are the domain's, read by every request: set before serving.
	function.MaxTemplateReferences, function.MaxExpandedBytes = *templateRefs, *templateBytes
	trigger.MaxPerSpace, unit.MaxTriggerCalls = *triggersPerSpace, *triggerCalls
	origins, err := httpapi.ParseOrigins(*corsOrigins)
	if err != nil {
		return fmt.Errorf("--cors-origins: %w", err)
	}
	mode, err := longpoll.ParseMode(*longPollMode)
	if err != nil {
		return fmt.Errorf("--long-poll-mode: %w", err)
	}
	cfg.HTTP = httpapi.Config{BodyLimit: *bodyLimit, MaxJSONDepth: *jsonDepth, MaxJSONValues: *jsonValues,
		ViewLimits: listquery.ViewLimits{CellValues: *viewValues, CellBytes: *viewCell, PageBytes: *viewPage}, RequestTimeout: *timeout, WriteTimeout: *writeTimeout, MaxInFlightPerCaller: *inFlight, MaxInvocationsPerOrganization: *invocations,
		MaxPollStarts: *pollStarts, LongPollMode: mode, CORSOrigins: origins}
	cfg.EventRetention = *retention
	for _, slug := range strings.Split(*trustedOrgs, ",") {
		if slug = strings.TrimSpace(slug); slug != "" {
			cfg.TrustedOrgs = append(cfg.TrustedOrgs, slug)
		}
	}
	if cfg.Auth, err = authSettings.config(fs); err != nil {
		return err
	}

	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	// hubd token mints for the issuer recorded here, so it needs no --base-url of its own.
	previous, err := a.Store.PutSetting(ctx, store.SettingIssuer, cfg.BaseURL)
	if err != nil {
		return err
	}
	if previous != "" && previous != cfg.BaseURL {
		cfg.Logger.Warn("the tokens' issuer changed: tokens issued for the previous base URL are refused now",
			"previous", previous, "base_url", cfg.BaseURL)
	}
	srv, err := a.Server(cfg, httpapi.Deps{})
	if err != nil {
		return err
	}
	a.RunBackground(ctx, cfg)

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	ln = srv.Listener(ln) // errors net/http answers itself carry the API's error body
	httpServer := &http.Server{
		Handler:           srv.Handler(),
		MaxHeaderBytes:    httpapi.MaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       longpoll.IdleTimeout,
		// No WriteTimeout: it would run from the request's start, and long polls wait before they write;
		// each write of an answer gets --write-timeout from when it starts instead (httpapi.Config.WriteTimeout).
	}
	errc := make(chan error, 1)
	go func() { errc <- httpServer.Serve(ln) }()
	if *debugAddr != "" {
		go serveDebug(*debugAddr, cfg.Logger)
	}
	cfg.Logger.Info("serving", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "version", app.Version,
		"auth_mode", cfg.Auth.Mode.String(), "auth_issuer", cfg.Auth.IssuerURL(cfg.BaseURL))

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Stop taking new work, let load balancers notice, then finish in-flight requests.
	srv.Drain()
	a.Notifier.StopWaiters() // waiting long polls answer now instead of holding shutdown up
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg.Logger.Info("shutting down")
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	// Parked long polls are not net/http's to wait for: they answer on their own.
	if err := srv.WaitParked(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: parked polls: %w", err)
	}
	return nil
}

// serveDebug serves Go's profiler on its own listener, apart from the API, so it is reachable only where
// the operator binds it.
func serveDebug(addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving the profiler", "addr", addr)
	if err := srv.ListenAndServe(); err != nil {
		logger.Error("serving the profiler", "err", err)
	}
}

func migrateCmd(args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ExitOnError)
	var c common
	c.register(fs)
	_ = fs.Parse(args)
	cfg, err := c.config(false)
	if err != nil {
		return err
	}
	switch fs.Arg(0) {
	case "up", "":
		return migrate.Up(cfg.DatabaseURL)
	case "down":
		n := 0
		if fs.Arg(1) != "" {
			if n, err = strconv.Atoi(fs.Arg(1)); err != nil {
				return fmt.Errorf("migrate down: N must be a number")
			}
		}
		return migrate.Down(cfg.DatabaseURL, n)
	case "version":
		v, dirty, err := migrate.Version(cfg.DatabaseURL)
		if err != nil {
			return err
		}
		fmt.Printf("%d dirty=%t\n", v, dirty)
		return nil
	}
	return fmt.Errorf("migrate: unknown action %q (up, down [N], version)", fs.Arg(0))
}

// tokenIssuer is the issuer hubd token mints for: the base URL the server of the database last started
// with, which it recorded. A --base-url (or HUBD_BASE_URL) that differs from it is refused, since that
// server would refuse the token; before any server has started, the token names --base-url or
// http://<addr>.
func tokenIssuer(ctx context.Context, a *app.App, flagged string) (string, error) {
	recorded, ok, err := a.Store.Setting(ctx, store.SettingIssuer)
	if err != nil {
		return "", err
	}
	flagged = strings.TrimSuffix(flagged, "/")
	switch {
	case ok && flagged != "" && flagged != recorded:
		return "", fmt.Errorf("token: the server of this database issues tokens as %s (its --base-url when it last started), "+
			"so it would refuse a token for %s: leave --base-url and HUBD_BASE_URL out to use %s", recorded, flagged, recorded)
	case ok:
		return recorded, nil
	}
	return a.Issuer.URL, nil
}

func token(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("token", flag.ExitOnError)
	var c common
	c.register(fs)
	orgSlug := fs.String("org", "", "organization Slug (created if missing)")
	user := fs.String("user", "", "Username (created if missing)")
	role := fs.String("role", "", "admin, manager, member, viewer or guest (default: the membership's role, admin when new)")
	_ = fs.Parse(args)
	if *orgSlug == "" || *user == "" {
		return errors.New("token: --org and --user are required")
	}
	a, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	issuer, err := tokenIssuer(ctx, a, c.baseURL)
	if err != nil {
		return err
	}
	p, err := a.Orgs.EnsureMembership(ctx, *orgSlug, *user, auth.Role(*role))
	if err != nil {
		return err
	}
	tok, _, err := auth.NewIssuer(a.Keys, issuer, c.tokenTTL).Mint(p)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

func keys(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("keys", flag.ExitOnError)
	var c common
	c.register(fs)
	_ = fs.Parse(args)
	if fs.Arg(0) != "rotate" {
		return errors.New("keys: the only action is rotate")
	}
	cfg, err := c.config(true)
	if err != nil {
		return err
	}
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	kid, err := a.Keys.Rotate(ctx)
	if err != nil {
		return err
	}
	fmt.Println(kid)
	return nil
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func envDuration(name string, fallback time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return fallback
}

func envInt(name string, fallback int64) int64 {
	if n, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return n
	}
	return fallback
}
