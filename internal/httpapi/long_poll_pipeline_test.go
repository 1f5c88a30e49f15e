package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/longpoll"
)

// TestWaitingPollAnswerPassesMiddleware: the answer of a poll that waited goes through the server's
// middleware chain like any answer, also when it was parked (answered by its request served again): a
// middleware added to the server applies to it, once, and the answer keeps its request's X-Request-Id
// and is recorded once in the metrics.
func TestWaitingPollAnswerPassesMiddleware(t *testing.T) {
	inEachLongPollMode(t, func(t *testing.T, opts apitest.Options) {
		t.Parallel()
		env := apitest.New(t, opts)
		f := newWorkerFixture(t, env)
		var answers atomic.Int32
		env.Server.Echo().Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				c.Response().Header().Set("Hubd-Test-Middleware", "seen")
				if strings.HasSuffix(c.Request().URL.Path, "/poll") {
					c.Response().Before(func() { answers.Add(1) })
				}
				return next(c)
			}
		})
		const recorded = `hubd_http_requests_total{operation="PollBridgeWorkerEvents",status="200"}`
		before := metric(t, env, recorded)

		done := make(chan *http.Response, 1)
		go func() {
			body := `{"TimeoutSeconds": 30, "EventTypes": ["tag.created"]}`
			req, err := http.NewRequest(http.MethodPost, env.URL+f.base+"/event_cursor/mw/poll", strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+f.token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Request-Id", "poll-through-middleware")
			resp, err := env.HTTPClient().Do(req)
			require.NoError(t, err)
			done <- resp
		}()
		waitPolls(t, env, 1, 1)
		f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": "mw"}).Expect(http.StatusOK)
		resp := <-done
		var events []api.EventLogEntry
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&events))
		require.NoError(t, resp.Body.Close())
		require.Len(t, events, 1)
		require.Equal(t, "seen", resp.Header.Get("Hubd-Test-Middleware"))
		require.Equal(t, "poll-through-middleware", resp.Header.Get("X-Request-Id"))
		require.Equal(t, int32(1), answers.Load(), "one answer written, through the middleware")
		require.Equal(t, before+1, metric(t, env, recorded), "recorded once")
	})
}

// TestLongPollOverTLS: over TLS, HTTP/2 or HTTP/1.1, a waiting poll is never parked (its connection is
// not net/http's to hand over): it waits on its goroutine and is answered.
func TestLongPollOverTLS(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{TLS: true})
	require.Equal(t, longpoll.ModeParked, longpoll.Modes[0], "the server runs in the parked mode")
	f := newWorkerFixture(t, env)
	ctx := context.Background()
	for _, c := range []struct {
		transport http.RoundTripper
		proto     int
	}{{env.Transport(), 2}, {env.HTTP1Transport(), 1}} {
		done := make(chan rawPoll, 1)
		go func() {
			done <- sendPoll(ctx, env, &http.Client{Transport: c.transport}, f.token, f.base+"/event_cursor/tls/poll",
				map[string]any{"TimeoutSeconds": 30, "EventTypes": []string{"tag.created"}})
		}()
		waitPolls(t, env, 1, 0)
		f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/tag", map[string]any{"Slug": "tls-" + strconv.Itoa(c.proto)}).Expect(http.StatusOK)
		got := <-done
		require.NoError(t, got.err)
		require.Equal(t, c.proto, got.proto)
		require.Equal(t, http.StatusOK, got.status)
		require.Len(t, got.events, 1)
		waitPolls(t, env, 0, 0)
	}
}
