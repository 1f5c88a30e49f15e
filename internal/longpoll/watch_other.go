//go:build !linux

package longpoll

import "net"

// connWatcher is Linux's (epoll). Elsewhere a parked poll notices a client that left when it is woken
// (its notification or its timeout) and the answer cannot be written, and an answered poll's connection
// goes back to the server at once.
type connWatcher struct{}

type watchedConn struct{}

func heldConns() *connWatcher { return nil }

func (*connWatcher) watch(net.Conn, func(closed bool)) *watchedConn { return nil }

func (*connWatcher) unwatch(*watchedConn) bool { return false }

func (*connWatcher) handOver(*watchedConn, func(closed bool)) bool { return false }

// writeNow is Linux's; elsewhere every answer is written by a write that may wait.
func writeNow(net.Conn, []byte) int { return 0 }
