package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestHalfClosedClientIsAnswered: a client that shuts down its sending side once its request is written
// (shutdown(SHUT_WR), as `nc -N` does) still waits for the answer, which HTTP/1.1 allows; it gets it,
// not 503 "the request was cancelled". With a body and without.
func TestHalfClosedClientIsAnswered(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	token := env.Token("acme", "alice", auth.RoleAdmin)
	u, err := url.Parse(env.URL)
	require.NoError(t, err)
	send := func(method, path, body string) *http.Response {
		t.Helper()
		conn, err := net.Dial("tcp", u.Host)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
		req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n", method, path, u.Host, token)
		if body != "" {
			req += fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
		}
		_, err = io.WriteString(conn, req+"\r\n"+body)
		require.NoError(t, err)
		require.NoError(t, conn.(*net.TCPConn).CloseWrite())
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		return resp
	}
	resp := send(http.MethodPost, "/api/space", `{"Slug": "dev"}`)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	resp = send(http.MethodGet, "/api/space", "")
	b, _ = io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `"dev"`)
}
