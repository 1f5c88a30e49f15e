package longpoll

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParkerAnswersThroughTheHandler: a parked poll is answered by serving its request again (without its
// body, read when it came, and its credentials) through the server's whole handler, so a middleware wrapping it
// applies to the answer (once: the parking pass writes nothing); the connection then serves the
// client's next request. A poll the Parker cannot park
// (HTTP/1.0) waits on its goroutine.
func TestParkerAnswersThroughTheHandler(t *testing.T) {
	polls := make(chan *testPoll, 1)
	var pk *Parker
	poll := func(w http.ResponseWriter, r *http.Request) {
		if res, ok := Resumed(r.Context()); ok {
			require.False(t, res.Gone)
			require.Empty(t, r.Header.Get("Authorization"), "credentials are not kept while the poll waits")
			require.Equal(t, "kept", r.Header.Get("X-Other"))
			body, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			require.Empty(t, body, "the body was read when the request came")
			_, _ = io.WriteString(w, "answered")
			return
		}
		_, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		ctx, done := Hold(r.Context(), Request{W: w, R: r, Release: func() {}})
		defer done()
		p := newTestPoll(1)
		polls <- p
		if pk.Wait(ctx, p) == Done {
			_, _ = io.WriteString(w, "answered on its goroutine")
		}
	}
	var answers atomic.Int32
	counted := func(next http.HandlerFunc) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Seen-By", "middleware")
			next(&countingWriter{ResponseWriter: w, answers: &answers}, r)
		})
	}
	srv := httptest.NewUnstartedServer(nil)
	handler := counted(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/poll" {
			poll(w, r)
			return
		}
		_, _ = io.WriteString(w, "next")
	})
	pk = NewParker(handler, 0)
	srv.Config.Handler = handler
	srv.Listener = pk.Listener(srv.Listener)
	srv.Start()
	defer srv.Close()
	client := srv.Client()

	answered := make(chan *http.Response)
	go func() {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/poll", strings.NewReader("the body"))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer secret")
		req.Header.Set("X-Other", "kept")
		resp, err := client.Do(req)
		require.NoError(t, err)
		answered <- resp
	}()
	p := <-polls
	<-p.armed
	require.Equal(t, 1, pk.Parked())
	p.wake()
	resp := <-answered
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "answered", string(body))
	require.Equal(t, "middleware", resp.Header.Get("Seen-By"))
	require.Equal(t, int32(1), answers.Load(), "the parking pass answered nothing")
	require.Eventually(t, func() bool { return pk.Parked() == 0 }, 10*time.Second, time.Millisecond, "answered: no longer parked")

	reused := false
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(),
		&httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}), http.MethodGet, srv.URL+"/next", nil)
	require.NoError(t, err)
	resp, err = client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, resp.Body.Close())
	require.True(t, reused, "the parked poll's connection serves the next request")
	require.Equal(t, int32(2), answers.Load())

	// HTTP/1.0: not parked.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /poll HTTP/1.0\r\nContent-Length: 3\r\n\r\nold")
	require.NoError(t, err)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		answered <- resp
	}()
	p = <-polls
	<-p.armed
	require.Zero(t, pk.Parked())
	require.Equal(t, 1, pk.Waiting())
	p.wake()
	resp = <-answered
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "answered on its goroutine", string(body))
}

// countingWriter counts the answers written through it; it unwraps for the Parker's hijack.
type countingWriter struct {
	http.ResponseWriter
	answers *atomic.Int32
	wrote   bool
}

func (w *countingWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		w.answers.Add(1)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
