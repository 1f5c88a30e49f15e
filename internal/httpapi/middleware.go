package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/channel"
	"github.com/hubd/hubd/internal/longpoll"
)

const (
	headerRequestID = "X-Request-Id"
	headerVersion   = "Hubd-Version"
	headerWarning   = "Warning"
	ctxRequestID    = "hubd.request_id"
	ctxWarnings     = "hubd.warnings"
	ctxOperation    = "hubd.operation"
	ctxStarted      = "hubd.started"
)

var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`)

// requestIdentity gives the request its ID and sets the headers every response carries. They are set
// when the status is written, so neither handlers nor generated code can drop or overwrite them.
func (s *Server) requestIdentity(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, resumed := c.Get(ctxRequestID).(string) // a parked poll's answer has its request's (resumeFirstPass)
		if !resumed {
			if id = c.Request().Header.Get(headerRequestID); !saneRequestID.MatchString(id) {
				id = uuid.NewString()
			}
			c.Set(ctxRequestID, id)
		}
		c.Response().Before(func() { s.identify(c.Response().Header(), id, warnings(c)) })
		return next(c)
	}
}

// identify sets the headers every response carries: its request ID, the server's version and the
// request's warnings.
func (s *Server) identify(h http.Header, requestID string, warnings []string) {
	h.Set(headerRequestID, requestID)
	h.Set(headerVersion, s.cfg.Version)
	h.Del(headerWarning)
	for _, w := range warnings {
		h.Add(headerWarning, w)
	}
}

func warnings(c echo.Context) []string {
	ws, _ := c.Get(ctxWarnings).([]string)
	return ws
}

func requestID(c echo.Context) string {
	id, _ := c.Get(ctxRequestID).(string)
	return id
}

// maxWarnings bounds the Warning headers of one kind in one response; the last one counts the rest.
const maxWarnings = 20

// addWarnings names what the request sent and the server ignored, in Warning headers (RFC 7234 form,
// code 299): `Unknown <what>: <name>`, what being "field" (body fields, by dot path) or "query
// parameter". Names are escaped for a quoted string.
func addWarnings(c echo.Context, what string, names []string) {
	ws := warnings(c)
	for i, name := range names {
		if i == maxWarnings {
			ws = append(ws, fmt.Sprintf(`299 hubd "%d more unknown %ss"`, len(names)-maxWarnings, what))
			break
		}
		ws = append(ws, fmt.Sprintf(`299 hubd "Unknown %s: %s"`, what, quotedText(name)))
	}
	c.Set(ctxWarnings, ws)
}

// quotedText makes s fit an HTTP quoted-string: backslash and quote escaped, control characters dropped.
func quotedText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteRune('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// recoverPanics turns a panic into a 500 Unexpected response, logged with its stack.
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.Error("panic", "request_id", requestID(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = apierr.Unexpected(fmt.Errorf("panic: %v", r))
			}
		}()
		return next(c)
	}
}

// observe logs each request and records its metrics, by operationId and status. A parked long poll is
// observed when the pass that answers it ends.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, resumed := c.Get(ctxStarted).(time.Time); !resumed {
			c.Set(ctxStarted, time.Now())
		}
		err := next(c)
		if err != nil {
			// Render now so the status is known; Echo will not render it again.
			c.Error(err)
		}
		if longpoll.WasParked(c.Request().Context()) {
			// Echo pools this context once the chain returns: it must not keep the request and the hijacked
			// connection's buffers while the poll waits.
			c.Reset(nil, nil)
		} else {
			s.record(observed(c), c.Response().Status)
		}
		return nil
	}
}

// observation is what a request's log line and metrics name of it, besides its status.
type observation struct {
	requestID, method, path, operation string
	started                            time.Time
	principal                          *auth.Principal
}

func observed(c echo.Context) observation {
	o := observation{requestID: requestID(c), method: c.Request().Method, path: c.Request().URL.Path}
	o.operation, _ = c.Get(ctxOperation).(string)
	if o.operation == "" {
		o.operation = c.Path()
	}
	o.started, _ = c.Get(ctxStarted).(time.Time)
	if p, ok := auth.PrincipalFrom(c.Request().Context()); ok {
		o.principal = &p
	}
	return o
}

// record logs a request and records its metrics once it is answered.
func (s *Server) record(o observation, status int) {
	elapsed := time.Since(o.started)
	s.metrics.observe(o.operation, status, elapsed)
	if !s.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	attrs := []any{"request_id", o.requestID, "method", o.method, "path", o.path,
		"operation", o.operation, "status", status, "duration_ms", elapsed.Milliseconds()}
	if p := o.principal; p != nil {
		attrs = append(attrs, "user", p.UserID, "organization", p.OrganizationID)
	}
	s.log.Info("request", attrs...)
}

// longFactor is how many request timeouts a streamed read (x-hubd-class: streamed-read) or a long write
// (long-write: a promotion) gets: their length follows their selection (a streamed read writes as it
// reads, page by page; a promotion writes every Unit of every target Space in one transaction).
const longFactor = 10

// limitTime bounds the request's work; a dependency that overruns it yields 504 GatewayTimeout.
//
// The work is bounded by that time, not by the connection: net/http cancels a request's context as soon
// as it reads end of stream from the client, which is also what a client that half-closes its side after
// sending (shutdown(SHUT_WR), as `nc -N` does) looks like, and that client still waits for its answer.
// A client that is really gone costs at most the request's time, and its answer's write fails. Long polls
// keep the connection's cancellation: their wait is for a client that is still there, and their own
// bound is long.
func (s *Server) limitTime(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rt := s.routeOf(c)
		if _, resumed := longpoll.Resumed(c.Request().Context()); resumed || s.cfg.RequestTimeout <= 0 || rt == nil {
			return next(c) // a parked poll's answer works within its request's deadline
		}
		limit := s.cfg.RequestTimeout
		switch rt.class {
		case classLongPoll:
			// A long poll waits up to its own timeout before it starts its last, bounded piece of work.
			limit += channel.MaxPollSeconds * time.Second
		case classStreamedRead, classLongWrite:
			limit *= longFactor
		}
		base := c.Request().Context()
		if rt.class != classLongPoll {
			base = context.WithoutCancel(base)
		}
		ctx, cancel := context.WithTimeout(base, limit)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// callerLimiter bounds each caller's in-flight requests on this replica, so one client cannot take all
// of its database connections. It is a protection, not a quota: limits are per replica.
type callerLimiter struct {
	max      int
	mu       sync.Mutex
	inFlight map[string]int
}

func newCallerLimiter(max int) *callerLimiter {
	return &callerLimiter{max: max, inFlight: map[string]int{}}
}

func (l *callerLimiter) acquire(key string) (release func(), ok bool) {
	if l.max <= 0 {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[key] >= l.max {
		return nil, false
	}
	l.inFlight[key]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.inFlight[key]--; l.inFlight[key] == 0 {
			delete(l.inFlight, key)
		}
	}, true
}
