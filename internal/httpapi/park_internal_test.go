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

	"github.com/hubd/hubd/internal/apierr"
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

// TestParkedPollWrite: an answer larger than the socket takes at once is written whole, in order, by
// the write that waits; a small one at once; and a connection that is not a socket is written too.
func TestParkedPollWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()
	p := &parkedPoll{conn: server}

	small := []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	require.Equal(t, len(small), writeNow(server, small), "a small answer is taken at once")
	got := make([]byte, len(small))
	_, err = io.ReadFull(client, got)
	require.NoError(t, err)
	require.Equal(t, small, got)

	large := make([]byte, 32<<20)
	for i := range large {
		large[i] = byte(i % 251)
	}
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(large))))
		read <- b
	}()
	written, err := p.write(large)
	require.NoError(t, err)
	require.True(t, written)
	require.Equal(t, large, <-read)

	pipeServer, pipeClient := net.Pipe()
	defer pipeClient.Close()
	go func() { _, _ = io.ReadFull(pipeClient, make([]byte, len(small))) }()
	written, err = (&parkedPoll{conn: pipeServer}).write(small)
	require.NoError(t, err)
	require.True(t, written)
}

// TestPollGate: a long poll's turn to start is one of MaxPollStarts; a poll waits for one until its
// request ends (GatewayTimeout when its deadline passes), and its turn ends once however often it is
// ended (the handler's end and longPoll both end it).
func TestPollGate(t *testing.T) {
	s := &Server{pollStarts: make(chan struct{}, 1)}
	ctx, first, err := s.pollGate(context.Background())
	require.NoError(t, err)

	waiting, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = s.pollGate(waiting)
	require.True(t, apierr.Is(err, apierr.TypeGatewayTimeout), "a poll waits for a turn no longer than its request: %v", err)

	pollStarted(ctx) // longPoll ends the turn after the first take...
	first()          // ...and the handler's end does too: the turn is given back once
	_, second, err := s.pollGate(context.Background())
	require.NoError(t, err)
	waiting, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = s.pollGate(waiting)
	require.Error(t, err, "ending a turn twice must not give back two")
	second()
	pollStarted(context.Background()) // a context without a turn: nothing to end
}
