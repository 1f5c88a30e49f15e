package longpoll

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testPoll is a Poll the test wakes (wake) and that is done at its doneAt-th Take.
type testPoll struct {
	mu        sync.Mutex
	onWake    func()
	takes     int
	doneAt    int
	remaining time.Duration
	armed     chan struct{} // receives when OnWake registers a call
}

func newTestPoll(doneAt int) *testPoll {
	return &testPoll{doneAt: doneAt, remaining: time.Hour, armed: make(chan struct{}, 16)}
}

func (p *testPoll) Take(context.Context) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.takes++
	return p.takes >= p.doneAt
}

func (p *testPoll) Remaining() time.Duration { return p.remaining }

func (p *testPoll) OnWake(fn func()) func() {
	p.mu.Lock()
	p.onWake = fn
	p.mu.Unlock()
	p.armed <- struct{}{}
	return func() {
		p.mu.Lock()
		p.onWake = nil
		p.mu.Unlock()
	}
}

// wake calls the registered wake, as the notifier does.
func (p *testPoll) wake() {
	p.mu.Lock()
	fn := p.onWake
	p.mu.Unlock()
	if fn != nil {
		fn()
	}
}

func (p *testPoll) taken() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takes
}

// TestGoroutineWait: a poll waiting on its goroutine takes again at each wake until it is done, and ends
// Gone, without taking, when its request's context ends.
func TestGoroutineWait(t *testing.T) {
	var g Goroutine
	p := newTestPoll(2)
	done := make(chan Outcome)
	go func() { done <- g.Wait(context.Background(), p) }()
	<-p.armed
	require.Equal(t, 1, g.Waiting())
	p.wake()
	<-p.armed // the first take found nothing: waiting again
	p.wake()
	require.Equal(t, Done, <-done)
	require.Equal(t, 2, p.taken())
	require.Zero(t, g.Waiting())

	p = newTestPoll(1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- g.Wait(ctx, p) }()
	<-p.armed
	cancel()
	require.Equal(t, Gone, <-done)
	require.Zero(t, p.taken())
}

// TestParkedPollGoneBeforeParked: the watcher may see the client close the connection before the poll
// has armed its timer and wake (a connection closed right after the request): the poll then ends once
// armed, through the resumed pass (which records it) without taking or sending anything.
func TestParkedPollGoneBeforeParked(t *testing.T) {
	passes := make(chan Resumption, 1)
	pk := NewParker(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		res, _ := Resumed(r.Context())
		passes <- res
	}), time.Minute)
	server, client := net.Pipe()
	defer client.Close()
	released := make(chan struct{})
	p := newTestPoll(1)
	pp := &parkedPoll{pk: pk, conn: server, poll: p, req: httptest.NewRequest(http.MethodPost, "/poll", nil),
		release: func() { close(released) }}
	pp.ctx, pp.cancel = context.WithCancel(context.Background())
	pk.parked.Add(1)

	pp.clientGone() // before park: must leave the ending to it
	require.Equal(t, pollStarting, pp.state.Load())
	pp.park()
	<-released
	require.True(t, (<-passes).Gone)
	require.Equal(t, pollOver, pp.state.Load())
	require.Zero(t, p.taken(), "a poll whose client left takes nothing")
	require.Zero(t, pk.Parked())
}

// TestParkedPollPanicEnds: a resumed pass that panics (http.ErrAbortHandler, which the server's own
// recovery lets through) ends the poll as net/http ends such a request: no answer, the connection closed,
// the request released.
func TestParkedPollPanicEnds(t *testing.T) {
	pk := NewParker(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }), time.Minute)
	server, client := net.Pipe()
	defer client.Close()
	released := false
	pp := &parkedPoll{pk: pk, conn: server, poll: newTestPoll(1), req: httptest.NewRequest(http.MethodPost, "/poll", nil),
		release: func() { released = true }}
	pp.ctx, pp.cancel = context.WithCancel(context.Background())
	pk.parked.Add(1)
	pp.answer()
	_, err := client.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "nothing answered, the connection closed")
	require.True(t, released)
	require.Zero(t, pk.Parked())
}

// TestWriteAnswer: an answer larger than the socket takes at once is written whole, in order, by the
// write that waits; a small one at once; and a connection that is not a socket is written too.
func TestWriteAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()

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
	reusable, err := writeAnswer(server, large)
	require.NoError(t, err)
	require.True(t, reusable)
	require.Equal(t, large, <-read)

	pipeServer, pipeClient := net.Pipe()
	defer pipeClient.Close()
	go func() { _, _ = io.ReadFull(pipeClient, make([]byte, len(small))) }()
	reusable, err = writeAnswer(pipeServer, small)
	require.NoError(t, err)
	require.True(t, reusable)
}

// TestAnswerWire: an answer is laid out as net/http lays one out: what the pass set, its own
// Content-Length (none for 204) and Connection: close when the connection is not kept.
func TestAnswerWire(t *testing.T) {
	w := newAnswerWriter()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "999") // the answer's own length counts
	_, err := w.Write([]byte(`[1]`))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(w.toWire(true)))), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, int64(3), resp.ContentLength)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.NotEmpty(t, resp.Header.Get("Date"))
	require.False(t, resp.Close)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "[1]", string(body))
	w.free()

	w = newAnswerWriter()
	require.Empty(t, w.Header(), "a pooled writer starts empty")
	w.WriteHeader(http.StatusNoContent)
	wire := string(w.toWire(false))
	require.NotContains(t, wire, "Content-Length")
	resp, err = http.ReadResponse(bufio.NewReader(strings.NewReader(wire)), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.True(t, resp.Close)
}

// TestGate: a poll's turn to start is one of the Gate's; a poll waits for one until its request ends,
// and its turn ends once however often it is ended (Started and the caller's end both end it).
func TestGate(t *testing.T) {
	g := NewGate(1)
	ctx, first, err := g.Enter(context.Background())
	require.NoError(t, err)

	waiting, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = g.Enter(waiting)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a poll waits for a turn no longer than its request")

	Started(ctx) // after the first take...
	first()      // ...and at the request's end: the turn is given back once
	_, second, err := g.Enter(context.Background())
	require.NoError(t, err)
	waiting, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = g.Enter(waiting)
	require.Error(t, err, "ending a turn twice must not give back two")
	second()
	Started(context.Background()) // a context without a turn: nothing to end
}
