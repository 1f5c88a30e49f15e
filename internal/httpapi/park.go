package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/event"
)

// A long poll that finds nothing to hand out is parked: its HTTP/1.1 connection is taken from net/http
// (Hijack) and held by a small record, with a timer, a call registered with the notifier and its socket
// watched (connWatcher: one epoll for the process) to notice the client leaving. Its handler goroutine,
// net/http's per-request buffers and the request's state are let go, so a waiting poll costs a few
// kilobytes and no goroutine, where a handler waiting on its goroutine costs tens. Woken (a notification
// of its organization, its timeout, the replica stopping waiters), the poll takes again on one of a few
// shared goroutines (resumer); when it has its answer it writes the response itself, with the headers
// the middleware would have set, and keeps the connection (keep-alive) until the client sends its next
// request, which it hands back to the server through its Listener (holdIdle). Connections that cannot be
// hijacked (HTTP/2) and requests without a caller's slot wait on their handler goroutine as before.

// answerWriteTimeout bounds writing a parked poll's answer to a client that stopped reading.
const answerWriteTimeout = 10 * time.Second

// longPoll answers a long poll prepared by its service: at once when its first take hands something out,
// else parked when its connection allows, else waiting on this goroutine. answer converts what the poll
// handed out to the operation's response; visit writes that response (its Visit method); parked is the
// response the handler returns for a parked poll, which writes nothing.
func longPoll[T any, R any](ctx context.Context, s *Server, p *event.Poll[T], answer func([]T) (R, error), visit func(R, http.ResponseWriter) error, parked R) (R, error) {
	out, done, err := p.Next(ctx)
	pollStarted(ctx)
	if !done {
		step := func(ctx context.Context) (write func(http.ResponseWriter) error, wait bool) {
			var out []T
			var err error
			if !p.Stopping() {
				var done bool
				if out, done, err = p.Next(ctx); !done {
					return nil, true
				}
			}
			resp, err := answerOrError(out, err, answer)
			return func(w http.ResponseWriter) error {
				if err != nil {
					return err
				}
				return visit(resp, w)
			}, false
		}
		if s.park(ctx, step, p.Remaining, p.OnWake) {
			return parked, nil
		}
		out, err = p.Wait(ctx)
	}
	return answerOrError(out, err, answer)
}

func answerOrError[T any, R any](out []T, err error, answer func([]T) (R, error)) (R, error) {
	if err != nil {
		var zero R
		return zero, err
	}
	return answer(out)
}

// pollStartsPerConn is how many long polls may be starting at once per database connection of the
// replica: enough to keep the connections busy.
const pollStartsPerConn = 8

// pollGate lets a long poll start (prepare, take the first time) when fewer than pollStarts are
// starting, else waits for its turn or ctx's end. A fleet of bots polls again at once after every
// event, thousands of requests; started all together, each would wait for a database connection deep in
// its handler, holding a grown goroutine stack and its request's memory, and their sum pushed the
// collector into running nearly all the time (10,000 polls sent at once cost 2.2 ms of CPU each, against
// 0.5 ms with room). Waiting here, checked but before any database work, a request holds little. The
// turn ends at started, which longPoll calls once the first take is done (the poll is answered, parked
// or waits), and which the caller calls too when the request ends before that.
func (s *Server) pollGate(ctx context.Context) (_ context.Context, started func(), err error) {
	select {
	case s.pollStarts <- struct{}{}:
	case <-ctx.Done():
		return ctx, nil, apierr.From(ctx.Err())
	}
	started = sync.OnceFunc(func() { <-s.pollStarts })
	return context.WithValue(ctx, pollStartKey{}, started), started, nil
}

type pollStartKey struct{}

// pollStarted ends the turn pollGate gave the poll of ctx.
func pollStarted(ctx context.Context) {
	if started, ok := ctx.Value(pollStartKey{}).(func()); ok {
		started()
	}
}

// parkedResponse is what the handler of a parked poll returns: the answer is written later, by the poll.
type parkedResponse struct{}

func (parkedResponse) VisitPollBridgeWorkerEventsResponse(http.ResponseWriter) error { return nil }
func (parkedResponse) VisitPollChannelResponse(http.ResponseWriter) error            { return nil }

var (
	_ api.PollBridgeWorkerEventsResponseObject = parkedResponse{}
	_ api.PollChannelResponseObject            = parkedResponse{}
)

// heldRequest is a long poll's request while its handler runs: what parking needs of it. The contract
// middleware puts it in the context; a parked poll takes over the caller's in-flight slot (release).
type heldRequest struct {
	c       echo.Context
	release func()
	parked  bool
}

type heldRequestKey struct{}

// done ends the handler's hold: the slot is released unless the poll was parked, which releases it
// when answered.
func (h *heldRequest) done() {
	if !h.parked {
		h.release()
	}
	h.c = nil // Echo reuses its contexts
}

// parkedPoll states.
const (
	pollStarting int32 = iota // being parked
	pollParked                // waiting for a wake
	pollRunning               // woken, taking again (resumer)
	pollOver                  // answered, or its client gone
)

type parkedPoll struct {
	s     *Server
	conn  net.Conn
	obs   observation
	reply replyHeaders
	// ctx is the poll's work: its request's values and deadline; cancelled when the client goes.
	ctx    context.Context
	cancel context.CancelFunc
	// step takes again: the answer's writer, or wait to be parked again.
	step      func(ctx context.Context) (write func(http.ResponseWriter) error, wait bool)
	remaining func() time.Duration
	onWake    func(func()) func()
	release   func()

	state atomic.Int32
	// mu orders parking (registering the timer and the wake) before a wake's resume cancels them.
	mu         sync.Mutex
	timer      *time.Timer
	cancelWake func()
	// unread is what net/http read ahead of a next request the client sent before the answer; watched is
	// the connection's registration with watcher; gone is set when it saw the client close.
	unread  []byte
	watcher *connWatcher
	watched *watchedConn
	gone    atomic.Bool
}

// replyHeaders is what a parked poll's response carries besides its own: what the middleware set before
// the handler ran (CORS), the request's warnings, and whether the client keeps the connection.
type replyHeaders struct {
	header    http.Header
	warnings  []string
	keepAlive bool
}

// park parks the poll of the request in ctx if its connection allows; false leaves the request as it was.
func (s *Server) park(ctx context.Context, step func(context.Context) (func(http.ResponseWriter) error, bool), remaining func() time.Duration, onWake func(func()) func()) bool {
	held, _ := ctx.Value(heldRequestKey{}).(*heldRequest)
	if held == nil || held.c == nil || s.draining.Load() {
		return false
	}
	c := held.c
	req := c.Request()
	if !req.ProtoAtLeast(1, 1) || req.ProtoAtLeast(2, 0) {
		return false
	}
	reply := replyHeaders{header: headerRoom(c.Response().Header()), warnings: warnings(c), keepAlive: !req.Close}
	obs := observed(c)
	conn, rw, err := c.Response().Hijack()
	if err != nil {
		return false
	}
	// net/http leaves its read deadline (ReadTimeout) on the connection; the poll sets its own.
	if err := conn.SetDeadline(time.Time{}); err != nil {
		_ = conn.Close()
		return true
	}
	p := &parkedPoll{s: s, conn: conn, obs: obs, reply: reply, step: step, remaining: remaining, onWake: onWake,
		release: held.release, watcher: parkedConns()}
	if n := rw.Reader.Buffered(); n > 0 { // a next request, sent before this one was answered
		p.unread, _ = rw.Reader.Peek(n)
		p.unread = bytes.Clone(p.unread)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(remaining() + s.cfg.RequestTimeout)
	}
	p.ctx, p.cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
	held.parked = true
	c.Set(ctxParked, true)
	s.parked.Add(1)
	p.watched = p.watcher.watch(conn, func(closed bool) {
		if closed {
			p.clientGone()
		}
	})
	p.park()
	return true
}

// headerRoom is a copy of h with room for the headers the answer adds (its Content-Type, the request's
// identity), so adding them when the poll is answered does not grow the map then.
func headerRoom(h http.Header) http.Header {
	c := make(http.Header, len(h)+4)
	for k, v := range h {
		c[k] = slices.Clone(v)
	}
	return c
}

// park waits for the poll's wakes, or ends the poll when its client left while it was not parked (the
// watcher then left the ending to it).
func (p *parkedPoll) park() {
	p.arm()
	if p.gone.Load() && p.state.CompareAndSwap(pollParked, pollOver) {
		p.unpark()
		p.end(statusClientGone)
	}
}

// arm registers the poll's wakes: its timeout and the organization's next notification.
func (p *parkedPoll) arm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state.Store(pollParked)
	p.timer = time.AfterFunc(p.remaining(), p.wake)
	p.cancelWake = p.onWake(p.wake)
}

// wake runs on the notifier's or the timer's goroutine: it must not block.
func (p *parkedPoll) wake() {
	if p.state.CompareAndSwap(pollParked, pollRunning) {
		p.s.resumes.add(p)
	}
}

// resumer runs woken parked polls on at most maxResumers goroutines. A commit wakes every waiting poll
// of its organization at once, and they share its read and claim in batches, so a thousand
// goroutines keep up; a goroutine (and its stack) each would cost more memory than the waiting polls.
type resumer struct {
	mu      sync.Mutex
	queue   []*parkedPoll
	running int
}

const maxResumers = 1024

func (r *resumer) add(p *parkedPoll) {
	r.mu.Lock()
	r.queue = append(r.queue, p)
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
		p := r.queue[0]
		r.queue[0], r.queue = nil, r.queue[1:]
		r.mu.Unlock()
		p.resume()
	}
}

func (p *parkedPoll) unpark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer.Stop()
	p.cancelWake()
}

func (p *parkedPoll) resume() {
	p.unpark()
	write, wait := p.step(p.ctx)
	switch {
	case p.gone.Load():
		p.end(statusClientGone)
	case wait:
		p.park()
	default:
		p.answer(write)
	}
}

// statusClientGone is what the log and metrics record of a poll whose client left before its answer
// (nginx's convention: no response was sent).
const statusClientGone = 499

// clientGone ends the poll when connWatcher saw its client close the connection: at once when parked,
// else when it next parks or its running take returns (its context is cancelled).
func (p *parkedPoll) clientGone() {
	p.gone.Store(true)
	p.cancel()
	if p.state.CompareAndSwap(pollParked, pollOver) {
		p.unpark()
		p.end(statusClientGone)
	}
}

// answer writes the poll's response, then hands the connection back to the server or closes it.
func (p *parkedPoll) answer(write func(http.ResponseWriter) error) {
	p.state.Store(pollOver)
	body, out := answerBuffers.get(), answerBuffers.get()
	defer answerBuffers.put(body)
	defer answerBuffers.put(out)
	rec := &recordedResponse{header: p.reply.header, status: http.StatusOK, body: body}
	if err := write(rec); err != nil {
		body.Reset()
		rec = &recordedResponse{header: p.reply.header, body: body}
		status, errBody := p.s.errorBody(p.ctx, p.obs.requestID, err, apierr.From(err), rec.header)
		rec.header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		rec.status = status
		_ = json.NewEncoder(body).Encode(errBody)
	}
	keepAlive := p.reply.keepAlive && !p.s.draining.Load() && p.s.listener.Load() != nil
	p.s.identify(rec.header, p.obs.requestID, p.reply.warnings)
	// The head: the status line, the headers the response and the middleware set, then what net/http
	// would add itself.
	out.Grow(512 + rec.body.Len())
	out.WriteString("HTTP/1.1 ")
	out.Write(strconv.AppendInt(out.AvailableBuffer(), int64(rec.status), 10))
	out.WriteByte(' ')
	out.WriteString(http.StatusText(rec.status))
	out.WriteString("\r\n")
	_ = rec.header.Write(out)
	out.WriteString("Date: ")
	out.Write(time.Now().UTC().AppendFormat(out.AvailableBuffer(), http.TimeFormat))
	if rec.status != http.StatusNoContent && rec.status != http.StatusNotModified {
		out.WriteString("\r\nContent-Length: ")
		out.Write(strconv.AppendInt(out.AvailableBuffer(), int64(rec.body.Len()), 10))
	}
	if !keepAlive {
		out.WriteString("\r\nConnection: close")
	}
	out.WriteString("\r\n\r\n")
	out.Write(rec.body.Bytes())
	// A kept-alive connection with nothing read ahead stays in the watcher, handed over to its idle wait.
	var idle *idleConn
	if keepAlive && len(p.unread) == 0 {
		idle = &idleConn{l: p.s.listener.Load(), w: p.watcher, c: p.conn, wc: p.watched}
		if !p.watcher.handOver(p.watched, idle.readable) {
			idle = nil
		}
	}
	if idle == nil {
		p.watcher.unwatch(p.watched)
	}
	written, err := p.write(out.Bytes())
	status := rec.status
	if err != nil {
		status = statusClientGone
	}
	kept := keepAlive && err == nil && !p.gone.Load() && written
	switch {
	case idle != nil && kept:
		idle.hold()
	case idle != nil:
		idle.drop()
	case kept:
		p.s.holdIdle(p.watcher, withUnread(p.conn, p.unread))
	default:
		_ = p.conn.Close()
	}
	p.finish(status)
}

// write writes the answer: at once when the socket takes it all, else with a deadline that bounds a
// client that stopped reading; written reports the connection fit to serve the next request (no deadline
// left on it).
func (p *parkedPoll) write(b []byte) (written bool, err error) {
	n := writeNow(p.conn, b)
	if n == len(b) {
		return true, nil
	}
	if err := p.conn.SetWriteDeadline(time.Now().Add(answerWriteTimeout)); err != nil {
		return false, err
	}
	if _, err := p.conn.Write(b[n:]); err != nil {
		return false, err
	}
	return p.conn.SetDeadline(time.Time{}) == nil, nil
}

// end ends a poll whose client left: nothing is written.
func (p *parkedPoll) end(status int) {
	p.state.Store(pollOver)
	p.watcher.unwatch(p.watched)
	_ = p.conn.Close()
	p.finish(status)
}

func (p *parkedPoll) finish(status int) {
	p.cancel()
	p.release()
	p.s.record(p.obs, status)
	p.s.parked.Add(-1)
}

// IdleTimeout is how long the server keeps a keep-alive connection waiting for its next request.
const IdleTimeout = 2 * time.Minute

// idleConn is an answered poll's keep-alive connection held in the watcher until its client sends the
// next request, which the server then serves, closes it, or leaves it idle for IdleTimeout: a bot between
// two polls costs the server no goroutine and no buffers. A poll hands its own registration over before
// it writes its answer (connWatcher.handOver), so what the watcher sees before the poll is done with the
// connection waits for hold.
type idleConn struct {
	l  *returningListener
	w  *connWatcher
	c  net.Conn
	wc *watchedConn

	mu     sync.Mutex
	state  int // idleWaiting, idleSeen, idleHeld or idleDropped
	closed bool
	timer  *time.Timer
}

// idleConn states.
const (
	idleWaiting = iota // the poll still holds the connection
	idleSeen           // the watcher saw it readable (closed tells how) while the poll held it
	idleHeld           // waiting for the next request, with its idle timer
	idleDropped        // the poll closes it instead (its answer failed)
)

// holdIdle keeps c, newly registered with w, until its next request; without a watcher it goes back to
// the server at once.
func (s *Server) holdIdle(w *connWatcher, c net.Conn) {
	ic := &idleConn{l: s.listener.Load(), w: w, c: c}
	if ic.wc = w.watch(c, ic.readable); ic.wc == nil {
		ic.l.give(c)
		return
	}
	ic.hold()
}

// readable is the connection's onReadable.
func (ic *idleConn) readable(closed bool) {
	ic.mu.Lock()
	switch ic.state {
	case idleWaiting:
		ic.state, ic.closed = idleSeen, closed
		ic.mu.Unlock()
	case idleHeld:
		ic.timer.Stop()
		ic.mu.Unlock()
		ic.next(closed)
	default: // dropped while the watcher was taking it out: the connection is the watcher's to close
		ic.mu.Unlock()
		_ = ic.c.Close()
	}
}

// hold starts the idle wait, or ends it when the watcher has seen the next request or the client leave.
func (ic *idleConn) hold() {
	ic.mu.Lock()
	if ic.state == idleSeen {
		ic.mu.Unlock()
		ic.next(ic.closed)
		return
	}
	ic.state = idleHeld
	ic.timer = time.AfterFunc(IdleTimeout, func() {
		if ic.w.unwatch(ic.wc) {
			_ = ic.c.Close()
		}
	})
	ic.mu.Unlock()
}

// drop closes the connection instead of holding it.
func (ic *idleConn) drop() {
	ic.mu.Lock()
	seen := ic.state == idleSeen
	ic.state = idleDropped
	ic.mu.Unlock()
	if seen || ic.w.unwatch(ic.wc) {
		_ = ic.c.Close()
	}
}

// next serves the client's next request, or closes the connection the client closed.
func (ic *idleConn) next(closed bool) {
	if closed {
		_ = ic.c.Close()
		return
	}
	go ic.l.give(ic.c)
}

// recordedResponse is a response written to memory, to be sent on a hijacked connection.
type recordedResponse struct {
	header http.Header
	status int
	body   *bytes.Buffer
}

// answerBuffers are the buffers parked polls write their answers in: a fan-out writes thousands of
// answers at once, and buffers allocated (and cleared) for each were a tenth of its CPU. A buffer grown
// past maxPooledAnswer by a large answer is left to the collector.
var answerBuffers bufferPool

const maxPooledAnswer = 64 << 10

type bufferPool struct{ pool sync.Pool }

func (p *bufferPool) get() *bytes.Buffer {
	if b, ok := p.pool.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

func (p *bufferPool) put(b *bytes.Buffer) {
	if b.Cap() <= maxPooledAnswer {
		b.Reset()
		p.pool.Put(b)
	}
}

func (r *recordedResponse) Header() http.Header         { return r.header }
func (r *recordedResponse) WriteHeader(status int)      { r.status = status }
func (r *recordedResponse) Write(b []byte) (int, error) { return r.body.Write(b) }

// WaitParked waits until every parked poll has been answered (after StopWaiters, at once), or ctx ends.
func (s *Server) WaitParked(ctx context.Context) error {
	for s.parked.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// returningListener is the server's listener (Server.Listener): besides the connections it accepts, it
// hands net/http the connections of answered parked polls, which are then served as new connections —
// to the client, the same keep-alive connection.
type returningListener struct {
	net.Listener
	accepted chan acceptResult
	returned chan net.Conn
	closed   chan struct{}
	start    sync.Once
	close    sync.Once
}

type acceptResult struct {
	conn net.Conn
	err  error
}

func newReturningListener(ln net.Listener) *returningListener {
	return &returningListener{Listener: ln, accepted: make(chan acceptResult), returned: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *returningListener) Accept() (net.Conn, error) {
	l.start.Do(func() { go l.acceptLoop() })
	select {
	case c := <-l.returned:
		return c, nil
	case r := <-l.accepted:
		return r.conn, r.err
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// acceptLoop accepts from the wrapped listener until it fails for good (closed).
func (l *returningListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		select {
		case l.accepted <- acceptResult{c, err}:
		case <-l.closed:
			if c != nil {
				_ = c.Close()
			}
			return
		}
		var ne net.Error
		if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			return
		}
	}
}

func (l *returningListener) Close() error {
	l.close.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// give hands a connection back to the server, or closes it when the server has stopped listening.
func (l *returningListener) give(c net.Conn) {
	select {
	case l.returned <- c:
	case <-l.closed:
		_ = c.Close()
	}
}

// withUnread returns c, reading first what was already read of it (a next request).
func withUnread(c net.Conn, unread []byte) net.Conn {
	if len(unread) == 0 {
		return c
	}
	if u, ok := c.(*unreadConn); ok {
		u.unread = append(unread, u.unread...)
		return u
	}
	return &unreadConn{Conn: c, unread: unread}
}

type unreadConn struct {
	net.Conn
	unread []byte
}

func (c *unreadConn) Read(b []byte) (int, error) {
	if len(c.unread) > 0 {
		n := copy(b, c.unread)
		c.unread = c.unread[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
