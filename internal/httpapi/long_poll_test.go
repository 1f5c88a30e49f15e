package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/longpoll"
)

// inEachLongPollMode runs test once in each long-poll mode, with the Options that select it.
func inEachLongPollMode(t *testing.T, test func(t *testing.T, opts apitest.Options)) {
	t.Parallel()
	for _, mode := range longpoll.Modes {
		t.Run(string(mode), func(t *testing.T) {
			test(t, apitest.Options{HTTP: httpapi.Config{LongPollMode: mode}})
		})
	}
}

// onDatabase is opts for another replica on the database at url.
func onDatabase(opts apitest.Options, url string) apitest.Options {
	opts.DatabaseURL = url
	return opts
}

// metric reads one series of the replica's /metrics (its name and labels as /metrics writes them); 0
// when the replica has not reported it yet.
func metric(t *testing.T, env *apitest.Env, series string) int {
	t.Helper()
	resp, err := env.HTTPClient().Get(env.URL + "/metrics")
	require.NoError(t, err)
	// Read to the end: a body closed early closes its connection, and the tests check that a waiting
	// poll's connection goes on serving its client (the metrics request may run on it).
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err)
			return int(n)
		}
	}
	return 0
}

// waitPolls waits until n long polls wait on env's replica. In the parked mode those of HTTP/1.1
// clients are parked (parked of them); in the goroutine mode none is.
func waitPolls(t *testing.T, env *apitest.Env, n, parked int) {
	t.Helper()
	require.Eventually(t, func() bool { return metric(t, env, "hubd_waiting_long_polls") == n }, 10*time.Second, 5*time.Millisecond,
		"want %d waiting polls", n)
	if env.Config.HTTP.LongPollMode == longpoll.ModeGoroutine {
		parked = 0
	}
	require.Equal(t, parked, metric(t, env, "hubd_parked_long_polls"))
}

// rawPoll sends a worker event-cursor poll through a validating transport and reports whether the
// connection it used had served a request before.
type rawPoll struct {
	status int
	proto  int // the HTTP major version answered
	header http.Header
	events []api.EventLogEntry
	reused bool
	err    error
}

func sendPoll(ctx context.Context, env *apitest.Env, client *http.Client, token, path string, body map[string]any) rawPoll {
	data, _ := json.Marshal(body)
	var out rawPoll
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { out.reused = info.Reused }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, env.URL+path, bytes.NewReader(data))
	if err != nil {
		out.err = err
		return out
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		out.err = err
		return out
	}
	defer resp.Body.Close()
	out.status, out.proto, out.header = resp.StatusCode, resp.ProtoMajor, resp.Header
	raw, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(raw, &out.events)
	}
	out.err = err
	return out
}

// TestWaitingPolls: a long poll that finds nothing waits (parked, off its goroutine, in the parked mode)
// and answers: woken by an event with the event (the response carries the headers every response
// carries, and the connection serves the client's next request), at its timeout with nothing, and when
// the replica stops waiters with nothing. A client that leaves a waiting poll claims nothing: the events
// go to the cursor's next poll, and the request is recorded with status 499. A waiting poll keeps its
// caller's in-flight slot.
func TestWaitingPolls(t *testing.T) { inEachLongPollMode(t, testWaitingPolls) }

func testWaitingPolls(t *testing.T, opts apitest.Options) {
	t.Parallel()
	opts.HTTP.MaxInFlightPerCaller = 3
	env := apitest.New(t, opts)
	f := newWorkerFixture(t, env)
	token := f.token
	client := &http.Client{Transport: env.Transport()}
	ctx := context.Background()
	tag := func(slug string) {
		f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": slug}).Expect(http.StatusOK)
	}
	pollPath := func(name string) string { return f.base + "/event_cursor/" + name + "/poll" }
	body := map[string]any{"TimeoutSeconds": 30, "EventTypes": []string{"tag.created"}}

	// Woken by an event: answered with it, and the connection goes on serving the client.
	done := make(chan rawPoll, 1)
	go func() { done <- sendPoll(ctx, env, client, token, pollPath("main"), body) }()
	waitPolls(t, env, 1, 1)
	tag("v1")
	got := <-done
	require.NoError(t, got.err)
	require.Equal(t, http.StatusOK, got.status)
	require.Len(t, got.events, 1)
	require.Equal(t, "tag.created", got.events[0].EventType)
	require.NotEmpty(t, got.header.Get("X-Request-Id"))
	require.NotEmpty(t, got.header.Get("Hubd-Version"))
	waitPolls(t, env, 0, 0)
	next := sendPoll(ctx, env, client, token, pollPath("main"), map[string]any{"TimeoutSeconds": 0})
	require.NoError(t, next.err)
	require.Equal(t, http.StatusOK, next.status)
	require.Empty(t, next.events)
	require.True(t, next.reused, "the parked poll's connection serves the next request")

	// A client that leaves claims nothing.
	leaving, leave := context.WithCancel(ctx)
	go func() { done <- sendPoll(leaving, env, client, token, pollPath("main"), body) }()
	waitPolls(t, env, 1, 1)
	leave()
	require.Error(t, (<-done).err)
	waitPolls(t, env, 0, 0)
	require.Equal(t, 1, metric(t, env, `hubd_http_requests_total{operation="PollBridgeWorkerEvents",status="499"}`))
	tag("v2")
	require.Equal(t, []string{"tag.created"}, eventTypes(f.poll(t, f.worker, "main", nil)), "the left poll claimed nothing")

	// The caller's slots: three parked polls hold them all (MaxInFlightPerCaller 3).
	var wg sync.WaitGroup
	results := make([]rawPoll, 3)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = sendPoll(ctx, env, client, token, pollPath("slot-"+strconv.Itoa(i)), body)
		}()
	}
	waitPolls(t, env, 3, 3)
	f.worker.Get(f.base).ExpectError(http.StatusTooManyRequests, api.ErrorTypeTooManyRequests)
	tag("v3")
	wg.Wait()
	for _, r := range results {
		require.NoError(t, r.err)
		require.Len(t, r.events, 1)
	}
	f.worker.Get(f.base).Expect(http.StatusOK)

	// The timeout: a worker poll answers an empty list, a Channel poll 204.
	timedOut := sendPoll(ctx, env, client, token, pollPath("quiet"), map[string]any{"TimeoutSeconds": 1})
	require.NoError(t, timedOut.err)
	require.Equal(t, http.StatusOK, timedOut.status)
	require.Empty(t, timedOut.events)
	var ch api.Channel
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/channel", map[string]any{"Slug": "bot"}).Expect(http.StatusOK).JSON(&ch)
	chBase := "/api/space/" + f.space.SpaceID.String() + "/channel/" + ch.ChannelID.String()
	var lease api.ChannelLease
	f.admin.Post(chBase+"/lease", nil).Expect(http.StatusOK).JSON(&lease)
	f.admin.Post(chBase+"/poll", map[string]any{"ClaimToken": lease.ClaimToken, "TimeoutSeconds": 1}).Expect(http.StatusNoContent)

	// Stopping waiters answers parked polls at once, with nothing.
	go func() { done <- sendPoll(ctx, env, client, token, pollPath("quiet"), body) }()
	waitPolls(t, env, 1, 1)
	start := time.Now()
	env.App.Notifier.StopWaiters()
	stopped := <-done
	require.NoError(t, stopped.err)
	require.Equal(t, http.StatusOK, stopped.status)
	require.Empty(t, stopped.events)
	require.Less(t, time.Since(start), 10*time.Second)
	waitPolls(t, env, 0, 0)
}

// TestPollClientGoneEarly: clients that close their connection right after sending a poll, before it
// waits, end their polls (none stays waiting) and the server goes on serving.
func TestPollClientGoneEarly(t *testing.T) { inEachLongPollMode(t, testPollClientGoneEarly) }

func testPollClientGoneEarly(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newWorkerFixture(t, env)
	addr := strings.TrimPrefix(env.URL, "http://")
	for i := range 20 {
		body := `{"TimeoutSeconds": 60}`
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "POST %s/event_cursor/early-%d/poll HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", f.base, i, addr, f.token, len(body), body)
		require.NoError(t, err)
		require.NoError(t, conn.Close())
	}
	waitPolls(t, env, 0, 0)
	require.Empty(t, f.poll(t, f.worker, "after", nil), "the server still answers")
}

// TestPollKeepAlive follows one connection: a request its client sends while its poll waits is served
// after the poll's answer; a poll answered on the kept-alive connection leaves it waiting for the next
// request (in the watcher, in the parked mode), which is served; and a client that ends its side of the
// waiting connection has the server close it.
func TestPollKeepAlive(t *testing.T) { inEachLongPollMode(t, testPollKeepAlive) }

func testPollKeepAlive(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newWorkerFixture(t, env)
	conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	r := bufio.NewReader(conn)
	type sent struct {
		req  *http.Request
		body []byte
	}
	send := func(method, path string, body map[string]any) sent {
		s := sent{}
		if body != nil {
			s.body, _ = json.Marshal(body)
		}
		s.req, err = http.NewRequest(method, env.URL+path, bytes.NewReader(s.body))
		require.NoError(t, err)
		s.req.Header.Set("Authorization", "Bearer "+f.token)
		s.req.Header.Set("Content-Type", "application/json")
		require.NoError(t, s.req.Write(conn))
		return s
	}
	read := func(s sent) []api.EventLogEntry {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(r, s.req)
		require.NoError(t, err)
		require.NoError(t, env.CheckResponse(s.req, s.body, resp))
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s", s.req.Method, s.req.URL.Path)
		var events []api.EventLogEntry
		if s.req.Method == http.MethodPost {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&events))
		}
		return events
	}
	waitingPoll := func() sent {
		s := send(http.MethodPost, f.base+"/event_cursor/keep/poll", map[string]any{"TimeoutSeconds": 30, "EventTypes": []string{"tag.created"}})
		waitPolls(t, env, 1, 1)
		return s
	}
	tag := func(slug string) {
		f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": slug}).Expect(http.StatusOK)
	}

	first := waitingPoll()
	pipelined := send(http.MethodGet, f.base, nil)
	tag("k1")
	require.Len(t, read(first), 1)
	read(pipelined)

	second := waitingPoll()
	tag("k2")
	require.Len(t, read(second), 1)
	read(send(http.MethodGet, f.base, nil)) // served after waiting in the watcher

	third := waitingPoll()
	tag("k3")
	require.Len(t, read(third), 1)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = r.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the server closes the connection its client ended")
}
