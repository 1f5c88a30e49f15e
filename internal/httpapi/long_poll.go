package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/longpoll"
)

// longPoll answers a long poll (x-hubd-class: long-poll). prepare makes the poll: its service checks the
// caller and places its cursor. A first take that hands something out is answered at once; else the poll
// waits in the server's mode (longpoll.Waiter). The handler of a parked poll returns parked, which writes
// nothing: once the poll is done its request is served again through the server's middleware, and that
// pass is answered by answerResumed with what the poll holds, visited as this handler would (so the
// strict server's middlewares see a parked poll's first pass only).
func longPoll[T any, R any](ctx context.Context, s *Server, prepare func() (*event.Poll[T], error), answer func([]T) (R, error),
	visit func(R, http.ResponseWriter) error, parked R) (R, error) {
	var zero R
	p, err := prepare()
	if err != nil {
		return zero, err
	}
	done := p.Take(ctx)
	longpoll.Started(ctx)
	if !done {
		switch s.polls.Wait(ctx, &waitingPoll[T, R]{Poll: p, answer: answer, visit: visit}) {
		case longpoll.Parked:
			return parked, nil
		case longpoll.Gone:
			return zero, longpoll.ErrClientGone
		}
	}
	return answerOf(p, answer)
}

func answerOf[T any, R any](p *event.Poll[T], answer func([]T) (R, error)) (R, error) {
	out, err := p.Result()
	if err != nil {
		var zero R
		return zero, err
	}
	return answer(out)
}

// waitingPoll is a long poll that waits, with how its handler answers it.
type waitingPoll[T any, R any] struct {
	*event.Poll[T]
	answer func([]T) (R, error)
	visit  func(R, http.ResponseWriter) error
}

// answerWriter is a waitingPoll whatever its types.
type answerWriter interface {
	writeAnswer(w http.ResponseWriter) error
}

// writeAnswer writes the answer of the poll, done, as its handler would.
func (p *waitingPoll[T, R]) writeAnswer(w http.ResponseWriter) error {
	resp, err := answerOf(p.Poll, p.answer)
	if err != nil {
		return err
	}
	return p.visit(resp, w)
}

// answerResumed answers the pass that answers a parked long poll (longpoll.Resumed) in place of the
// operation's handler, with what the poll holds: the request was read, checked and bound when it came.
// It is the long-poll routes' own middleware (pollRouter), so the server's whole chain runs before it.
func (s *Server) answerResumed(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r, ok := longpoll.Resumed(c.Request().Context())
		switch {
		case !ok:
			return next(c)
		case r.Gone:
			return longpoll.ErrClientGone
		}
		return r.Poll.(answerWriter).writeAnswer(c.Response())
	}
}

// pollRouter registers the operations of the document with Echo, the long polls' with answerResumed.
type pollRouter struct {
	*echo.Echo
	s *Server
}

func (r pollRouter) POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route {
	if rt := r.s.routes[http.MethodPost+" "+path]; rt != nil && rt.class == classLongPoll {
		m = append(m, r.s.answerResumed)
	}
	return r.Echo.POST(path, h, m...)
}

// parkedResponse is what the handler of a parked poll returns: the resumed pass answers it.
type parkedResponse struct{}

func (parkedResponse) VisitPollBridgeWorkerEventsResponse(http.ResponseWriter) error { return nil }
func (parkedResponse) VisitPollChannelResponse(http.ResponseWriter) error            { return nil }
func (parkedResponse) VisitPollQueuedOperationsResponse(http.ResponseWriter) error   { return nil }

var (
	_ api.PollBridgeWorkerEventsResponseObject = parkedResponse{}
	_ api.PollChannelResponseObject            = parkedResponse{}
	_ api.PollQueuedOperationsResponseObject   = parkedResponse{}
)

// holdLongPoll is the contract middleware's part in a long poll: the request is held for the server's
// long-poll mode (a parked poll takes over the caller's in-flight slot, released when it is answered) and
// what the middleware noted of it kept for the pass that answers it once parked (resumeFirstPass).
func (s *Server) holdLongPoll(ctx context.Context, c echo.Context, release func()) (_ context.Context, done func()) {
	ctx, done = longpoll.Hold(ctx, longpoll.Request{W: c.Response(), R: c.Request(), Release: release})
	started, _ := c.Get(ctxStarted).(time.Time)
	return context.WithValue(ctx, firstPassKey{}, firstPass{requestID: requestID(c), warnings: warnings(c), started: started}), done
}

// waitPollTurn waits for the long poll's turn to start (longpoll.Gate); started ends it. Only a request
// read whole and holding its caller's slot waits for a turn: a client sending its body slowly, or one
// caller sending thousands, cannot hold the turns of others.
func (s *Server) waitPollTurn(c echo.Context) (started func(), err error) {
	ctx, started, err := s.pollStarts.Enter(c.Request().Context())
	if err != nil {
		return nil, apierr.From(err)
	}
	c.SetRequest(c.Request().WithContext(ctx))
	return started, nil
}

// firstPass is what the middleware noted of a long poll's request when it came.
type firstPass struct {
	requestID string
	warnings  []string
	started   time.Time
}

type firstPassKey struct{}

// resumeFirstPass gives the pass that answers a parked long poll (longpoll.Resumed) what the middleware
// noted of its request when it came, so the answer carries the same identity and warnings and its log
// line and metrics cover the whole wait. It runs first.
func (s *Server) resumeFirstPass(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if fp, ok := c.Request().Context().Value(firstPassKey{}).(firstPass); ok {
			c.Set(ctxRequestID, fp.requestID)
			c.Set(ctxWarnings, fp.warnings)
			c.Set(ctxStarted, fp.started)
		}
		return next(c)
	}
}
