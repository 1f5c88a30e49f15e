package longpoll

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// connWatcher tells when held connections turn readable without a goroutine per connection: their
// sockets are registered (one-shot) with one epoll instance, which one goroutine waits on. It watches
// parked polls' connections, to notice a client leaving, and the idle keep-alive connections of
// answered ones, to hand them back to the server only when the next request comes. A socket that turns
// readable is peeked without consuming anything: end of stream means the client closed it; data is a
// next request; neither (a stale readiness) watches again.
//
// Whoever takes a connection out of the watcher (unwatch returning true, or the watcher itself before
// it calls onReadable) owns it from then on: a registered file descriptor always belongs to the
// connection it was registered for, as nothing closes a connection still registered.
type connWatcher struct {
	epfd  int
	mu    sync.Mutex
	conns map[int32]*watchedConn
}

// watchedConn is one registration: onReadable is called once, on the watcher's goroutine (it must not
// block), with closed false for a next request and true when the client closed the connection.
type watchedConn struct {
	fd int32
	// mu orders handOver against the registration's removal (taken), without the watcher's lock.
	mu         sync.Mutex
	onReadable func(closed bool)
	taken      bool
}

var (
	heldConnsOnce sync.Once
	heldConnsW    *connWatcher
)

// heldConns is the process's watcher, whatever the Parkers; nil when epoll is not available.
func heldConns() *connWatcher {
	heldConnsOnce.Do(func() {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		heldConnsW = &connWatcher{epfd: epfd, conns: map[int32]*watchedConn{}}
		go heldConnsW.run()
	})
	return heldConnsW
}

// watch registers c; nil when it cannot be watched (no watcher, not a socket, or bytes of a next request
// already read from it).
func (w *connWatcher) watch(c net.Conn, onReadable func(closed bool)) *watchedConn {
	if w == nil {
		return nil
	}
	fd, ok := socketFD(c)
	if !ok {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: fd}
	if unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev) != nil {
		return nil
	}
	wc := &watchedConn{fd: fd, onReadable: onReadable}
	w.conns[fd] = wc
	return wc
}

// unwatch stops watching wc and reports whether it still was: false when onReadable has been or is
// being called.
func (w *connWatcher) unwatch(wc *watchedConn) bool {
	if w == nil || wc == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conns[wc.fd] != wc {
		return false
	}
	w.remove(wc)
	return true
}

// handOver gives wc a new onReadable when it is still watched, and reports whether it was: the
// connection stays registered, one-shot as it was, so an answered poll's connection waits for its next
// request without leaving epoll and joining it again (two system calls an answer).
func (w *connWatcher) handOver(wc *watchedConn, onReadable func(closed bool)) bool {
	if w == nil || wc == nil {
		return false
	}
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.taken {
		return false
	}
	wc.onReadable = onReadable
	return true
}

// remove drops wc (w.mu held).
func (w *connWatcher) remove(wc *watchedConn) {
	wc.mu.Lock()
	wc.taken = true
	wc.mu.Unlock()
	delete(w.conns, wc.fd)
	_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(wc.fd), nil)
}

func (w *connWatcher) run() {
	events := make([]unix.EpollEvent, 256)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			if wc, closed, ok := w.readable(ev.Fd); ok {
				wc.onReadable(closed)
			}
		}
	}
}

// readable peeks at a socket epoll reported: ok when its connection is taken out of the watcher for
// onReadable, closed when the client has closed it.
func (w *connWatcher) readable(fd int32) (wc *watchedConn, closed, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wc = w.conns[fd]
	if wc == nil {
		return nil, false, false // unwatched since
	}
	var b [1]byte
	n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: fd}
		if unix.EpollCtl(w.epfd, unix.EPOLL_CTL_MOD, int(fd), &ev) == nil {
			return nil, false, false
		}
		err = nil // no longer watchable: treated as a next request, which the server then reads
		n = 1
	}
	w.remove(wc)
	return wc, err != nil || n == 0, true
}

// socketFD is the file descriptor of the socket under c's wrappers, when nothing of it was read ahead.
func socketFD(c net.Conn) (int32, bool) {
	sc, ok := socketOf(c)
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var fd int32
	if raw.Control(func(f uintptr) { fd = int32(f) }) != nil {
		return 0, false
	}
	return fd, true
}

// socketOf is the socket under c's wrappers (a listener's own, which give it with NetConn; not TLS, whose
// bytes on the socket are not the answer's), when nothing of it was read ahead.
func socketOf(c net.Conn) (syscall.Conn, bool) {
	for {
		switch t := c.(type) {
		case *tls.Conn:
			return nil, false
		case *unreadConn:
			if len(t.unread) > 0 {
				return nil, false
			}
			c = t.Conn
		case syscall.Conn:
			return t, true
		case interface{ NetConn() net.Conn }:
			c = t.NetConn()
		default:
			return nil, false
		}
	}
}

// writeNow writes b to c's socket in one attempt that does not wait, and returns how much the socket
// took: all of an answer smaller than its send buffer, as its client is waiting for it. Only what is
// left needs a write that may wait, with the deadline that bounds a client that stopped reading.
func writeNow(c net.Conn, b []byte) int {
	sc, ok := socketOf(c)
	if !ok {
		return 0
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = raw.Write(func(fd uintptr) bool {
		n, _ = unix.Write(int(fd), b)
		return true // one attempt
	})
	return max(n, 0)
}
