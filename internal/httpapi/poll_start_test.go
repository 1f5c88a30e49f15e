package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
)

// TestPollStartTurns: with one turn to start a long poll (MaxPollStarts 1), polls sent together all
// start and wait: a poll's turn ends once it has taken the first time, not when it is answered, whether
// it waits parked or on its goroutine (HTTP/1.0 connections are not parked). Polls answered at once by
// their first take give their turn back too. A request whose body is still arriving holds no turn.
func TestPollStartTurns(t *testing.T) { inEachLongPollMode(t, testPollStartTurns) }

func testPollStartTurns(t *testing.T, opts apitest.Options) {
	t.Parallel()
	opts.HTTP.MaxPollStarts = 1
	env := apitest.New(t, opts)
	f := newWorkerFixture(t, env)
	client := &http.Client{Transport: env.Transport()}
	ctx := context.Background()
	pollPath := func(name string) string { return f.base + "/event_cursor/" + name + "/poll" }

	slow, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	require.NoError(t, err)
	defer slow.Close()
	_, err = fmt.Fprintf(slow, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
		pollPath("slow"), f.token)
	require.NoError(t, err)
	const polls = 6
	send := func(timeout int) []rawPoll {
		var wg sync.WaitGroup
		results := make([]rawPoll, polls)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = sendPoll(ctx, env, client, f.token, pollPath("turn-"+strconv.Itoa(i)),
					map[string]any{"TimeoutSeconds": timeout, "EventTypes": []string{"tag.created"}})
			}()
		}
		if timeout > 0 {
			waitPolls(t, env, polls, polls)
			f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": "woken"}).Expect(http.StatusOK)
		}
		wg.Wait()
		return results
	}
	for _, r := range send(30) {
		require.NoError(t, r.err)
		require.Equal(t, http.StatusOK, r.status)
		require.Len(t, r.events, 1)
	}
	// HTTP/1.0 polls wait on their goroutines: both start (their cursors exist) before the Tag.
	type sent struct {
		req  *http.Request
		body []byte
		conn net.Conn
	}
	var old []sent
	for i := range 2 {
		conn, err := net.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
		require.NoError(t, err)
		defer conn.Close()
		body, _ := json.Marshal(map[string]any{"TimeoutSeconds": 30, "EventTypes": []string{"tag.created"}})
		req, err := http.NewRequest(http.MethodPost, env.URL+pollPath("old-"+strconv.Itoa(i)), bytes.NewReader(body))
		require.NoError(t, err)
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.0", 1, 0
		req.Header.Set("Authorization", "Bearer "+f.token)
		req.Header.Set("Content-Type", "application/json")
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			req.URL.Path, req.Host, f.token, len(body), body)
		require.NoError(t, err)
		old = append(old, sent{req: req, body: body, conn: conn})
	}
	waitPolls(t, env, len(old), 0) // past their first take, on their goroutines
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": "old"}).Expect(http.StatusOK)
	for _, s := range old {
		require.NoError(t, s.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(s.conn), s.req)
		require.NoError(t, err)
		require.NoError(t, env.CheckResponse(s.req, s.body, resp))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var events []api.EventLogEntry
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&events))
		require.Len(t, events, 1)
	}

	// The first polls' cursors are behind by the Tag the HTTP/1.0 polls got: polls that find it at once.
	for _, r := range send(0) {
		require.NoError(t, r.err)
		require.Equal(t, http.StatusOK, r.status)
		require.Len(t, r.events, 1)
		require.Equal(t, "tag.created", r.events[0].EventType)
	}
}
