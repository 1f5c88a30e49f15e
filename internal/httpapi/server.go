package httpapi

import (
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/gen/oas"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/channel"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/identity"
	"github.com/hubd/hubd/internal/link"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/longpoll"
	"github.com/hubd/hubd/internal/oauthclient"
	"github.com/hubd/hubd/internal/org"
	"github.com/hubd/hubd/internal/promote"
	"github.com/hubd/hubd/internal/signin"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// BasePath is where the API document's operations are served.
const BasePath = "/api"

// Config are the settings of the HTTP edge.
type Config struct {
	// BaseURL is the service's external base address (tokens' issuer, discovery URLs).
	BaseURL string
	// Version is reported in /info and the Hubd-Version header.
	Version string
	// BodyLimit caps request bodies, in bytes (413 above it).
	BodyLimit int64
	// MaxJSONDepth and MaxJSONValues bound a JSON body's nesting and its keys and values, checked while
	// it is first read, before validation, locks or merges (400 above them); 0: DefaultMaxJSONDepth and
	// DefaultMaxJSONValues.
	MaxJSONDepth, MaxJSONValues int
	// ViewLimits bound what a View's data columns read into a list page (zero fields: the defaults).
	ViewLimits listquery.ViewLimits
	// RequestTimeout bounds the work of one request (504 when a dependency overruns it).
	RequestTimeout time.Duration
	// WriteTimeout bounds each write of an answer to the connection, from when it starts (limitWrites); 0:
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// MaxInFlightPerCaller bounds one caller's concurrent requests (429 above it).
	MaxInFlightPerCaller int
	// MaxInvocationsPerOrganization bounds the function invoke requests each organization has running on
	// this replica (429 above it), so one organization's bulk invocations cannot hold every connection.
	MaxInvocationsPerOrganization int
	// MaxPollStarts bounds the long polls starting at once on this replica (longpoll.Gate); 0:
	// pollStartsPerConn per database connection.
	MaxPollStarts int
	// LongPollMode is how waiting long polls wait (longpoll.Mode; empty: parked). HTTP/2 and TLS
	// connections always wait on their goroutine.
	LongPollMode longpoll.Mode
	// CORSOrigins are the origins (scheme://host[:port], or *) whose browser apps may call the API; none
	// when empty.
	CORSOrigins []string
}

// Services are what app.Open builds for the handlers: the kit's dependencies, which serve every family
// that has only the kit's operations straight from its declaration (edge.service), and the services of
// the families that have operations of their own.
type Services struct {
	Kit   entity.Deps
	Orgs  *org.Service
	Units *unit.Service
	// SignIn serves the token endpoint.
	SignIn   *signin.Service
	Channels *channel.Service
	// BridgeWorkers serve the workers, their event cursors and /auth/worker.
	BridgeWorkers *bridgeworker.Service
	// Exchange serves the token endpoint's token exchange (RFC 8693); nil when browser sign-in is off.
	Exchange *identity.Exchanger
	// OAuthClients registers browser apps' clients; the origins of their redirect URIs pass CORS.
	OAuthClients *oauthclient.Service
}

// Deps are what the handlers call: the instance's store, token issuer and services.
type Deps struct {
	Services
	Store  *store.Store
	Issuer *auth.Issuer
	// Notifier signals changes per organization; authentication remembers memberships between them.
	Notifier *event.Notifier
	Logger   *slog.Logger
	// SignIns counts failed sign-ins (shared with the embedded OpenID provider's login page); nil: a new one.
	SignIns *SignInGuard
	// OIDC serves the embedded OpenID provider at /oidc (nil: none). It is outside the document: the
	// contract layer, compression and the API's CORS leave it alone.
	OIDC http.Handler
	// StrictMiddlewares wrap every generated handler (tests use them to inject failures).
	StrictMiddlewares []api.StrictMiddlewareFunc
}

// Server is the HTTP edge. Echo serves it; Handler() is what an http.Server runs.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	doc     *openapi3.T
	docJSON []byte
	echo    *echo.Echo
	routes  map[string]*route
	limiter *callerLimiter
	// invocations bounds each organization's running invoke requests (the builtin executor's queue).
	invocations *callerLimiter
	// promoter runs promotions (POST /promote, function invoke's change_order).
	promoter *promote.Engine
	signIns  *signInGuard
	members  members
	metrics  *metrics
	draining atomic.Bool
	// polls makes waiting long polls wait: parker in the parked mode (nil in the goroutine mode).
	polls  longpoll.Waiter
	parker *longpoll.Parker
	// pollStarts bounds the long polls starting at once.
	pollStarts *longpoll.Gate
	// events are the wire forms of the events poll answers carried last.
	events encodedEvents
}

// pollStartsPerConn is how many long polls may be starting at once per database connection of the
// replica: enough to keep the connections busy.
const pollStartsPerConn = 8

// The defaults of Config.MaxJSONDepth and MaxJSONValues: far beyond what any operation's body needs.
const (
	DefaultMaxJSONDepth  = 64
	DefaultMaxJSONValues = 20000
)

// New builds the server: the document, the middleware chain and every route.
func New(cfg Config, deps Deps) (*Server, error) {
	cfg.MaxJSONDepth = cmp.Or(max(cfg.MaxJSONDepth, 0), DefaultMaxJSONDepth)
	cfg.MaxJSONValues = cmp.Or(max(cfg.MaxJSONValues, 0), DefaultMaxJSONValues)
	cfg.ViewLimits = cfg.ViewLimits.WithDefaults()
	cfg.WriteTimeout = cmp.Or(max(cfg.WriteTimeout, 0), DefaultWriteTimeout)
	doc, err := LoadDocument()
	if err != nil {
		return nil, err
	}
	mode, err := longpoll.ParseMode(string(cfg.LongPollMode))
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, deps: deps, log: deps.Logger, doc: doc, docJSON: oas.Document,
		limiter: newCallerLimiter(cfg.MaxInFlightPerCaller), invocations: newCallerLimiter(cfg.MaxInvocationsPerOrganization),
		signIns:    deps.SignIns,
		metrics:    newMetrics(deps.Store),
		pollStarts: longpoll.NewGate(cmp.Or(max(cfg.MaxPollStarts, 0), pollStartsPerConn*int(deps.Store.Pool.Config().MaxConns))),
	}
	s.promoter = &promote.Engine{Store: deps.Store, Tokens: deps.Kit.Tokens, Units: deps.Units, Links: entity.NewService(link.Family, deps.Kit),
		Filter: s.filterDefinition}
	if s.signIns == nil {
		s.signIns = newSignInGuard()
	}
	s.routes = routesOf(doc)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Binder = jsonBinder{}
	e.HTTPErrorHandler = s.handleError
	e.Use(s.resumeFirstPass, s.requestIdentity, s.observe, s.recoverPanics, s.limitWrites)
	// CORS: the configured origins and those of every registered OAuth client's redirect URIs (read per
	// request: deleting a client withdraws its origins at once). Requests without Origin are not a
	// browser's cross-origin calls and pass untouched.
	e.Use(middleware.CORSWithConfig(middleware.CORSConfig{
		// The OpenID provider answers CORS itself (any origin, no credentials).
		Skipper:         func(c echo.Context) bool { return c.Request().Header.Get(echo.HeaderOrigin) == "" || isOIDCPath(c) },
		AllowOriginFunc: s.allowsOrigin,
		AllowMethods:    []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete},
		AllowHeaders: []string{echo.HeaderAuthorization, echo.HeaderContentType, echo.HeaderAccept, "If-Match",
			"If-None-Match", echo.HeaderXRequestID},
		// What a browser app reads of a response: validators, paging, warnings, tracing, back-off.
		ExposeHeaders: []string{"ETag", "Service-Continue", "Warning", echo.HeaderXRequestID, "Hubd-Version",
			echo.HeaderRetryAfter, echo.HeaderAllow},
		MaxAge: 600,
	}))
	// The API's JSON is compressed for clients that accept gzip; configuration data is not (its ETag and
	// Content-Length describe the bytes as stored), nor what is outside /api (/metrics compresses itself).
	// At the fastest level: the middleware resets its compressor for every such request, compressed or not,
	// and at the default level a reset clears 640 KB of tables (a fifth of the CPU of creating a Space);
	// at this one it clears nothing, and JSON still shrinks several times over.
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{Level: gzip.BestSpeed, MinLength: 1024, Skipper: s.uncompressed}))
	// A browser asking for /api/docs gets the browsable reference instead of the JSON.
	e.Use(s.registerDocsPage(e))
	// contract and limitTime act only on operations of the document; other paths pass through them.
	e.Use(s.limitTime, s.contract)

	e.GET("/metrics", echo.WrapHandler(s.metrics.handler()))
	// Sign-in and health live at the base address; the document describes them (x-hubd-served: root) and
	// they are served under /api too, where clients generated from it look for them.
	for _, prefix := range []string{"", BasePath} {
		e.GET(prefix+"/healthz", s.healthz)
		e.GET(prefix+"/readyz", s.readyz)
		e.GET(prefix+"/auth/jwks.json", s.jwks)
		e.POST(prefix+"/auth/token", s.token)
		e.POST(prefix+"/auth/worker", s.workerToken)
	}

	// The OCI registry of published Releases (registry.go), outside the document: its protocol is the OCI
	// distribution API's.
	e.Any("/v2", s.registryPing)
	e.Any("/v2/", s.registryPing)
	e.GET("/v2/token", s.registryTokenEndpoint)
	e.Any("/v2/*", s.registryRoute)
	if deps.OIDC != nil {
		// The provider reads its own forms and writes its own answers (RFC 6749 errors, its login page);
		// its requests are small forms.
		oidc := echo.WrapHandler(http.MaxBytesHandler(deps.OIDC, oidcBodyLimit))
		e.Any(oidcPath+"/*", oidc)
	}

	api.RegisterHandlersWithBaseURL(pollRouter{e, s}, api.NewStrictHandler(newHandlers(s), deps.StrictMiddlewares), BasePath)
	s.echo = e

	s.polls = &longpoll.Goroutine{}
	if mode == longpoll.ModeParked {
		// A parked poll's answer is served by the whole server again: the same middleware as any answer.
		s.parker = longpoll.NewParker(e, cfg.RequestTimeout)
		s.polls = s.parker
	}
	s.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hubd_waiting_long_polls", Help: "Long polls waiting, parked or on their goroutine.",
	}, func() float64 { return float64(s.polls.Waiting()) }), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hubd_parked_long_polls", Help: "Long polls waiting parked: their connections held, without a goroutine of their own.",
	}, func() float64 {
		if s.parker == nil {
			return 0
		}
		return float64(s.parker.Parked())
	}))
	return s, nil
}

// uuidFormat accepts any RFC 9562 UUID (kin-openapi's predefined pattern stops at version 5).
const uuidFormat = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`

func init() {
	// kin-openapi checks only the formats it is told of; IDs in paths and bodies must be UUIDs.
	openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(uuidFormat))
}

// LoadDocument parses the embedded, bundled OpenAPI document.
func LoadDocument() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(oas.Document)
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	return doc, nil
}

// Handler returns the http.Handler to serve.
func (s *Server) Handler() http.Handler { return s.echo }

// Echo exposes the router, for tests that add failure-injecting routes.
func (s *Server) Echo() *echo.Echo { return s.echo }

// Drain makes /readyz fail so load balancers stop sending requests before shutdown; long polls are no
// longer parked.
func (s *Server) Drain() {
	s.draining.Store(true)
	if s.parker != nil {
		s.parker.Drain()
	}
}

// WaitParked waits until every parked long poll has been answered (after the notifier stops waiters, at
// once), or ctx ends: the http.Server's Shutdown does not wait for them.
func (s *Server) WaitParked(ctx context.Context) error {
	if s.parker == nil {
		return nil
	}
	return s.parker.WaitParked(ctx)
}

// MetricsRegistry is the registry /metrics serves.
func (s *Server) MetricsRegistry() *prometheus.Registry { return s.metrics.registry }

// route is one operation of the document, keyed by Echo's path pattern and method.
type route struct {
	path      string
	method    string
	pathItem  *openapi3.PathItem
	operation *openapi3.Operation
	// class is the operation's x-hubd-class: classLongPoll, classStreamedRead, classLongWrite, or "".
	class string
	// rawData: a success answers configuration data as stored (a media type other than JSON, or the HTML of
	// the reference page).
	rawData bool
}

// The operation classes of x-hubd-class: operations whose work is not bounded by the request timeout alone.
const (
	classLongPoll     = "long-poll"
	classStreamedRead = "streamed-read"
	// classLongWrite is one write whose size follows its selection across Spaces (a promotion).
	classLongWrite = "long-write"
)

// routeOf returns the operation Echo matched for the request, nil for paths outside the document.
func (s *Server) routeOf(c echo.Context) *route {
	return s.routes[c.Request().Method+" "+c.Path()]
}

// routesOf indexes the document's operations by "METHOD /api/echo/:pattern".
func routesOf(doc *openapi3.T) map[string]*route {
	out := map[string]*route{}
	for path, item := range doc.Paths.Map() {
		echoPath := BasePath + toEchoPattern(path)
		for method, op := range item.Operations() {
			if served, _ := op.Extensions["x-hubd-served"].(string); served == "root" {
				continue // sign-in and health: hand-written handlers with bodies of their own (rootRoutes)
			}
			class, _ := op.Extensions["x-hubd-class"].(string)
			out[method+" "+echoPath] = &route{path: path, method: method, pathItem: item, operation: op, class: class,
				rawData: answersNonJSON(op)}
		}
	}
	return out
}

func answersNonJSON(op *openapi3.Operation) bool {
	for code, r := range op.Responses.Map() {
		if !strings.HasPrefix(code, "2") || r.Value == nil {
			continue
		}
		for mt := range r.Value.Content {
			if mt != echo.MIMEApplicationJSON && mt != echo.MIMETextHTML {
				return true
			}
		}
	}
	return false
}

// uncompressed reports requests answered as they are: outside /api and the reference page,
// configuration data, or long polls.
func (s *Server) uncompressed(c echo.Context) bool {
	path := c.Request().URL.Path
	if !strings.HasPrefix(path, BasePath+"/") && path != docsPath && !strings.HasPrefix(path, docsPath+"/") {
		return true
	}
	rt := s.routeOf(c)
	// Long polls answer small bodies, and thousands of them answer at once when an event commits: a gzip
	// writer each (its compressor is built even to close an unused one) costs more than it saves.
	return rt != nil && (rt.rawData || rt.class == classLongPoll)
}

// oidcPath is where the embedded OpenID provider is mounted.
const oidcPath = "/oidc"

// oidcBodyLimit caps the bodies of the provider's requests (form posts of a few fields).
const oidcBodyLimit = 64 << 10

func isOIDCPath(c echo.Context) bool {
	return strings.HasPrefix(c.Request().URL.Path, oidcPath+"/")
}

func toEchoPattern(path string) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			segs[i] = ":" + seg[1:len(seg)-1]
		}
	}
	return strings.Join(segs, "/")
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"Status": "ok"})
}

func (s *Server) readyz(c echo.Context) error {
	if s.draining.Load() {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"Status": "draining"})
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.deps.Store.Pool.Ping(ctx); err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"Status": "database unreachable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"Status": "ready"})
}

func (s *Server) jwks(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSON(http.StatusOK, s.deps.Issuer.Keys.JWKS())
}
