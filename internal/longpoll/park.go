package longpoll

import (
	"bytes"
	"context"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Parker is the Waiter that parks HTTP/1.1 polls (see the package's story); the others wait on their
// goroutine. Its server must serve through Listener.
type Parker struct {
	// handler serves the resumed pass; grace bounds the resumed work of a request without a deadline.
	handler http.Handler
	grace   time.Duration
	// fallback waits for the polls that cannot be parked.
	fallback Goroutine
	watcher  *connWatcher
	resumes  resumer
	listener atomic.Pointer[returningListener]
	draining atomic.Bool
	// parked counts the polls parked and not yet answered.
	parked atomic.Int64
}

var _ Waiter = (*Parker)(nil)

// NewParker returns a Parker whose parked polls are answered by serving their requests again through
// handler, the server's whole handler, so their answers pass through the same middleware as any other.
// A poll whose request has no deadline gets its remaining wait and grace to take and answer.
func NewParker(handler http.Handler, grace time.Duration) *Parker {
	return &Parker{handler: handler, grace: grace, watcher: heldConns()}
}

// Listener wraps the server's listener so that the connections of answered parked polls are served
// again (their next requests) as the same keep-alive connections. Without it no poll is parked.
func (pk *Parker) Listener(ln net.Listener) net.Listener {
	l := newReturningListener(ln)
	pk.listener.Store(l)
	return l
}

// Drain stops parking polls (they wait on their goroutine, which net/http's Shutdown waits for), and the
// connections of parked polls are closed once answered.
func (pk *Parker) Drain() { pk.draining.Store(true) }

// WaitParked waits until every parked poll has been answered (after the notifier stops waiters, at once),
// or ctx ends: net/http's Shutdown does not wait for hijacked connections.
func (pk *Parker) WaitParked(ctx context.Context) error {
	for pk.parked.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Parked is how many polls are parked now.
func (pk *Parker) Parked() int { return int(pk.parked.Load()) }

// Waiting is how many polls wait now, parked or on their goroutine.
func (pk *Parker) Waiting() int { return pk.Parked() + pk.fallback.Waiting() }

// Wait parks p when its request allows (HTTP/1.1 without TLS, held with Hold), else waits on the calling
// goroutine.
func (pk *Parker) Wait(ctx context.Context, p Poll) Outcome {
	h := heldIn(ctx)
	if h == nil || pk.draining.Load() || pk.listener.Load() == nil {
		return pk.fallback.Wait(ctx, p)
	}
	if r := h.req.R; r.ProtoMajor != 1 || r.ProtoMinor != 1 || r.TLS != nil {
		return pk.fallback.Wait(ctx, p)
	}
	conn, rw, err := http.NewResponseController(h.req.W).Hijack()
	if err != nil {
		return pk.fallback.Wait(ctx, p)
	}
	// net/http leaves its read deadline (ReadTimeout) on the connection; the poll sets its own.
	if err := conn.SetDeadline(time.Time{}); err != nil {
		_ = conn.Close()
		return Gone
	}
	pp := &parkedPoll{pk: pk, conn: conn, poll: p, req: keptRequest(h.req.R), release: h.req.Release,
		keepAlive: !h.req.R.Close}
	if n := rw.Reader.Buffered(); n > 0 { // a next request, sent before this one was answered
		pp.unread, _ = rw.Reader.Peek(n)
		pp.unread = bytes.Clone(pp.unread)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(p.Remaining() + pk.grace)
	}
	pp.ctx, pp.cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
	h.parked = true
	pk.parked.Add(1)
	pp.watched = pk.watcher.watch(conn, func(closed bool) {
		if closed {
			pp.clientGone()
		}
	})
	pp.park()
	return Parked
}

// keptRequest is what a parked poll keeps of its request to serve it again: not its body, read when it
// came (the buffers it was read into are let go); nor its credentials (Authorization): the caller was
// authenticated when the request came, and a bearer token is not kept in memory for the whole wait.
func keptRequest(r *http.Request) *http.Request {
	kept := new(http.Request)
	*kept = *r
	kept.Body, kept.GetBody, kept.ContentLength = http.NoBody, nil, 0
	kept.Header = r.Header.Clone()
	kept.Header.Del("Authorization")
	return kept
}

// parkedPoll states.
const (
	pollStarting int32 = iota // being parked
	pollParked                // waiting for a wake
	pollRunning               // woken, taking again or answering (resumer)
	pollOver                  // answered, or its client gone
)

type parkedPoll struct {
	pk   *Parker
	conn net.Conn
	poll Poll
	// req is served again to answer the poll; release ends its hold (Request.Release).
	req       *http.Request
	release   func()
	keepAlive bool
	// ctx is the poll's work: its request's values and deadline; cancelled when the client goes.
	ctx    context.Context
	cancel context.CancelFunc

	state atomic.Int32
	// mu orders parking (registering the timer and the wake) before a wake's resume cancels them.
	mu         sync.Mutex
	timer      *time.Timer
	cancelWake func()
	// unread is what net/http read ahead of a next request the client sent before the answer; watched is
	// the connection's registration with the watcher; gone is set when it saw the client close.
	unread  []byte
	watched *watchedConn
	gone    atomic.Bool
}

// park waits for the poll's wakes, or ends the poll when its client left while it was not parked (the
// watcher then left the ending to it).
func (pp *parkedPoll) park() {
	pp.arm()
	if pp.gone.Load() && pp.state.CompareAndSwap(pollParked, pollRunning) {
		pp.pk.resumes.add(pp)
	}
}

// arm registers the poll's wakes: its timeout and its organization's next notification.
func (pp *parkedPoll) arm() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.state.Store(pollParked)
	pp.timer = time.AfterFunc(pp.poll.Remaining(), pp.wake)
	pp.cancelWake = pp.poll.OnWake(pp.wake)
}

// wake runs on the notifier's or the timer's goroutine: it must not block.
func (pp *parkedPoll) wake() {
	if pp.state.CompareAndSwap(pollParked, pollRunning) {
		pp.pk.resumes.add(pp)
	}
}

// clientGone is called when the watcher saw the client close the connection: a parked poll ends at once,
// a running one when its take returns (its context is cancelled) or at its next park.
func (pp *parkedPoll) clientGone() {
	pp.gone.Store(true)
	pp.cancel()
	pp.wake()
}

func (pp *parkedPoll) unpark() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.timer.Stop()
	pp.cancelWake()
}

// resume runs a woken poll (on a resumer): it takes again, then waits again or is answered.
func (pp *parkedPoll) resume() {
	pp.unpark()
	if !pp.gone.Load() && !pp.poll.Take(pp.ctx) && !pp.gone.Load() {
		pp.park()
		return
	}
	pp.answer()
}

// answer serves the request again (the resumed pass) to answer the poll, sends the answer, then hands the
// connection back to the server or closes it. A poll whose client left goes through the pass too (it is
// recorded), and nothing is sent.
func (pp *parkedPoll) answer() {
	pp.state.Store(pollOver)
	gone := pp.gone.Load()
	w := newAnswerWriter()
	defer w.free()
	r := pp.req.WithContext(context.WithValue(pp.ctx, passKey{}, Resumption{Poll: pp.poll, Gone: gone}))
	if !pp.pk.serve(w, r) || gone {
		pp.end()
		return
	}
	w.WriteHeader(http.StatusOK) // a pass that wrote nothing answers 200, as net/http does
	l := pp.pk.listener.Load()
	keepAlive := pp.keepAlive && !pp.pk.draining.Load() && w.header.Get("Connection") != "close"
	wire := w.toWire(keepAlive)
	// A kept-alive connection with nothing read ahead stays in the watcher, handed over to its idle wait.
	var idle *idleConn
	if keepAlive && len(pp.unread) == 0 {
		idle = &idleConn{l: l, w: pp.pk.watcher, c: pp.conn, wc: pp.watched}
		if !pp.pk.watcher.handOver(pp.watched, idle.readable) {
			idle = nil
		}
	}
	if idle == nil {
		pp.pk.watcher.unwatch(pp.watched)
	}
	reusable, err := writeAnswer(pp.conn, wire)
	kept := keepAlive && err == nil && !pp.gone.Load() && reusable
	switch {
	case idle != nil && kept:
		idle.hold()
	case idle != nil:
		idle.drop()
	case kept:
		holdIdle(l, pp.pk.watcher, withUnread(pp.conn, pp.unread))
	default:
		_ = pp.conn.Close()
	}
	pp.finish()
}

// serve runs the resumed pass; false when it panicked, which, as net/http does for a handler, ends the
// request without an answer (logged unless the panic is http.ErrAbortHandler).
func (pk *Parker) serve(w http.ResponseWriter, r *http.Request) (served bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				log.Printf("longpoll: panic answering %s %s: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
			}
			served = false
		}
	}()
	pk.handler.ServeHTTP(w, r)
	return true
}

// end ends a poll without sending anything.
func (pp *parkedPoll) end() {
	pp.pk.watcher.unwatch(pp.watched)
	_ = pp.conn.Close()
	pp.finish()
}

func (pp *parkedPoll) finish() {
	pp.cancel()
	pp.pk.parked.Add(-1)
	pp.release()
}

// resumer runs woken parked polls on at most maxResumers goroutines. A commit wakes every waiting poll
// of its organization at once, and they share its read and claim in batches, so a thousand goroutines
// keep up; a goroutine (and its stack) each would cost more memory than the waiting polls.
type resumer struct {
	mu      sync.Mutex
	queue   []*parkedPoll
	running int
}

const maxResumers = 1024

func (r *resumer) add(pp *parkedPoll) {
	r.mu.Lock()
	r.queue = append(r.queue, pp)
	start := r.running < maxResumers
	if start {
		r.running++
	}
	r.mu.Unlock()
	if start {
		go r.work()
	}
}

func (r *resumer) work() {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.queue = nil
			r.running--
			r.mu.Unlock()
			return
		}
		pp := r.queue[0]
		r.queue[0], r.queue = nil, r.queue[1:]
		r.mu.Unlock()
		pp.resume()
	}
}
