// Package longpoll makes long polls wait. A long poll whose first take finds nothing to hand out waits
// for a wake (its organization's next notification, its timeout, the replica stopping waiters) and takes
// again, until it has its answer or its client leaves. How it waits is the server's mode, a Waiter:
//
//   - Goroutine waits on the handler's goroutine. Any connection allows it (HTTP/2, TLS, HTTP/1.0); a
//     waiting poll costs its goroutine, its stack and what net/http holds for its request.
//   - Parker parks the poll: its HTTP/1.1 connection is taken from net/http (hijacked) and held by a
//     small record with a timer and a call registered for the wake, its socket watched by one epoll
//     instance for the process (Linux) to notice the client leaving; the handler returns and its
//     goroutine ends. Woken, the poll takes again on one of a few shared goroutines. Once it has its
//     answer, its request is served again by the server's handler (the resumed pass, see Resumed): the
//     answer goes through the same middleware as any other and is sent on the held connection, which
//     then waits, still without a goroutine, for the client's next request and goes back to net/http
//     through the server's listener (Parker.Listener). Polls it cannot park (HTTP/2, TLS, HTTP/1.0, a
//     draining server) wait on their goroutine.
//
// Gate bounds the polls starting at once, in both modes.
package longpoll

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Mode is how long polls wait: the server's choice (hubd serve --long-poll-mode).
type Mode string

const (
	// ModeParked parks HTTP/1.1 polls (Parker); others wait on their goroutine.
	ModeParked Mode = "parked"
	// ModeGoroutine has every poll wait on its goroutine (Goroutine).
	ModeGoroutine Mode = "goroutine"
)

// Modes are the modes, the default first.
var Modes = []Mode{ModeParked, ModeGoroutine}

// ParseMode reads a mode by name; empty is the default.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Modes[0], nil
	}
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown long-poll mode %q: %s or %s", s, ModeParked, ModeGoroutine)
}

// Poll is a long poll whose first take found nothing to hand out.
type Poll interface {
	// Take takes again: done when the poll has its answer (what it handed out, nothing at its timeout, or
	// an error).
	Take(ctx context.Context) (done bool)
	// Remaining is how long the poll may still wait.
	Remaining() time.Duration
	// OnWake calls fn once, without blocking, when the poll should take again; cancel prevents a call not
	// yet made.
	OnWake(fn func()) (cancel func())
}

// Outcome is how Wait ended.
type Outcome int

const (
	// Done: the poll has its answer; the handler answers it.
	Done Outcome = iota
	// Gone: the client left; the handler returns ErrClientGone and nothing is written.
	Gone
	// Parked: the handler returns without writing anything; the poll is answered by the resumed pass.
	Parked
)

// Waiter makes long polls wait. Goroutine and Parker are the two modes.
type Waiter interface {
	// Wait waits, on the calling goroutine, until p is done or its client has gone; or it parks p and
	// returns Parked at once. ctx is the poll's request's (Hold).
	Wait(ctx context.Context, p Poll) Outcome
	// Waiting is how many polls are waiting now, parked or not.
	Waiting() int
}

// ErrClientGone is a long poll's end when its client left while it waited: the server records the
// request with StatusClientGone and writes nothing.
var ErrClientGone = errors.New("the client left before the long poll was answered")

// StatusClientGone is what logs and metrics record of a poll whose client left (nginx's convention: no
// response was sent).
const StatusClientGone = 499

// Request is a long poll's request while its handler runs: what a Parker takes over when it parks it.
type Request struct {
	// W is the request's writer (its connection is hijacked from it); R is served again by the resumed
	// pass, without its body (read when it came).
	W http.ResponseWriter
	R *http.Request
	// Release lets go of what the request holds for its caller (its in-flight slot): when its handler
	// returns, or once a parked poll is answered.
	Release func()
}

// held is a request in its handler's context (Hold); parked is set when its poll was parked.
type held struct {
	req    Request
	parked bool
}

// passKey is the context key of a long poll's request: *held in its handler's pass, resumption in the
// resumed pass.
type passKey struct{}

// Hold is called before a long poll's handler runs, with the request: the handler runs with the returned
// context, and done is called when it returns, which releases the request unless its poll was parked (it
// is then released once the poll is answered).
func Hold(ctx context.Context, req Request) (_ context.Context, done func()) {
	h := &held{req: req}
	return context.WithValue(ctx, passKey{}, h), func() {
		if !h.parked {
			req.Release()
		}
		h.req = Request{}
	}
}

func heldIn(ctx context.Context) *held {
	h, _ := ctx.Value(passKey{}).(*held)
	return h
}

// WasParked reports whether the poll of the request whose handler ran with ctx was parked: nothing was
// written, and the resumed pass will answer it.
func WasParked(ctx context.Context) bool {
	h := heldIn(ctx)
	return h != nil && h.parked
}

// Resumption is what the resumed pass of a parked poll's request carries: the poll, done (its answer is
// in it), and whether its client has gone (then nothing will be sent: the pass only records the request).
type Resumption struct {
	Poll Poll
	Gone bool
}

// Resumed reports whether ctx is the resumed pass of a parked poll's request: the request was read and
// checked when it came (its body and Authorization header are not served again), and its handler answers
// with what the poll has (Resumption).
func Resumed(ctx context.Context) (Resumption, bool) {
	r, ok := ctx.Value(passKey{}).(Resumption)
	return r, ok
}
