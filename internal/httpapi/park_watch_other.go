//go:build !linux

package httpapi

// connWatcher is Linux's (epoll). Elsewhere a parked poll notices a client that left when it is woken
// (its notification or its timeout) and the answer cannot be written.
type connWatcher struct{}

func parkedConns() *connWatcher { return nil }

func (*connWatcher) watch(*parkedPoll) bool { return false }

func (*connWatcher) unwatch(*parkedPoll) {}
