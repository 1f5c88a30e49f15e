package longpoll

import (
	"errors"
	"net"
	"sync"
	"time"
)

// IdleTimeout is how long the server keeps a keep-alive connection waiting for its next request (the
// http.Server's IdleTimeout, and that of the connections of answered parked polls).
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
func holdIdle(l *returningListener, w *connWatcher, c net.Conn) {
	ic := &idleConn{l: l, w: w, c: c}
	if ic.wc = w.watch(c, ic.readable); ic.wc == nil {
		l.give(c)
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

// returningListener is the server's listener (Parker.Listener): besides the connections it accepts, it
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
