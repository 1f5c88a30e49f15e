package httpapi

import (
	"errors"
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// connWatcher notices a parked poll's client leaving without a goroutine per connection: the parked
// connections' sockets are registered (one-shot) with one epoll instance, which one goroutine waits
// on. A socket that turns readable is peeked without consuming anything: end of stream means the client
// closed it (the poll ends unanswered); data is a next request, left for the server to read after the
// answer; neither (a stale readiness) watches again.
//
// A connection is unwatched before it is closed or handed back, under mu, so a registered file
// descriptor always belongs to the poll it is registered for.
type connWatcher struct {
	epfd  int
	mu    sync.Mutex
	polls map[int32]*parkedPoll
}

// parkedConns is the process's watcher: one epoll instance and goroutine, whatever the Servers.
var parkedConns = sync.OnceValue(newConnWatcher)

func newConnWatcher() *connWatcher {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil // parked polls then notice a client that left when they are woken
	}
	w := &connWatcher{epfd: epfd, polls: map[int32]*parkedPoll{}}
	go w.run()
	return w
}

// watch registers p's connection; false when it cannot be watched (not a socket, or bytes of a next
// request already read from it).
func (w *connWatcher) watch(p *parkedPoll) bool {
	if w == nil {
		return false
	}
	fd, ok := socketFD(p.conn)
	if !ok {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: fd}
	if unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev) != nil {
		return false
	}
	w.polls[fd] = p
	p.watchFD = fd
	return true
}

// unwatch stops watching p's connection, if it still is.
func (w *connWatcher) unwatch(p *parkedPoll) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.polls[p.watchFD] == p {
		delete(w.polls, p.watchFD)
		_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(p.watchFD), nil)
	}
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
			if p := w.readable(ev.Fd); p != nil {
				p.clientGone()
			}
		}
	}
}

// readable peeks at a socket epoll reported and returns its poll when the client has closed it.
func (w *connWatcher) readable(fd int32) *parkedPoll {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.polls[fd]
	if p == nil {
		return nil // unwatched since
	}
	var b [1]byte
	n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	stale := errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)
	if stale {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: fd}
		if unix.EpollCtl(w.epfd, unix.EPOLL_CTL_MOD, int(fd), &ev) == nil {
			return nil
		}
	}
	delete(w.polls, fd)
	_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
	if stale || (err == nil && n > 0) {
		return nil // a next request, served after the answer (or, rarely, no longer watched)
	}
	return p // end of stream, or the socket failed
}

// socketFD is the file descriptor of the socket under c's wrappers, when nothing of it was read ahead.
func socketFD(c net.Conn) (int32, bool) {
	for {
		switch t := c.(type) {
		case *unreadConn:
			if len(t.unread) > 0 {
				return 0, false
			}
			c = t.Conn
		case *protocolErrorConn:
			c = t.Conn
		case syscall.Conn:
			raw, err := t.SyscallConn()
			if err != nil {
				return 0, false
			}
			var fd int32
			if raw.Control(func(f uintptr) { fd = int32(f) }) != nil {
				return 0, false
			}
			return fd, true
		default:
			return 0, false
		}
	}
}
