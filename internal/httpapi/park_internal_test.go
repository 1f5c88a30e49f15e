package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParkedPollGoneBeforeParked: the watcher may see the client close the connection before the poll
// has armed its timer and wake (a connection closed right after the request): the poll is then ended by
// park, once armed, and nothing is called on what is not set yet.
func TestParkedPollGoneBeforeParked(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: newMetrics(nil)}
	server, client := net.Pipe()
	defer client.Close()
	released, woken := false, false
	p := &parkedPoll{s: s, conn: server, release: func() { released = true },
		remaining: func() time.Duration { return time.Minute },
		onWake:    func(func()) func() { return func() {} },
		step:      func(context.Context) (func(w http.ResponseWriter) error, bool) { woken = true; return nil, true }}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	s.parked.Add(1)

	p.clientGone() // before park: must leave the ending to it
	require.Equal(t, pollStarting, p.state.Load())
	p.park()
	require.Equal(t, pollOver, p.state.Load())
	require.True(t, released, "the caller's slot is released")
	require.False(t, woken, "a poll whose client left takes nothing")
	require.Zero(t, s.parked.Load())
}
