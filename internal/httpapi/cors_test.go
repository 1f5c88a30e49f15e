package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/oas"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
)

// TestCORS: browser apps of the configured origins call the API: preflights are answered, answers carry
// Access-Control-Allow-Origin and expose the headers a client reads; other origins get no grant, and a
// server without --cors-origins grants none.
func TestCORS(t *testing.T) {
	t.Parallel()
	const app = "https://app.example.com"
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{CORSOrigins: []string{app}}})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	origin := func(o string) apitest.RequestOption { return apitest.WithHeader("Origin", o) }

	pre := c.Do(http.MethodOptions, "/api/space", nil, origin(app),
		apitest.WithHeader("Access-Control-Request-Method", "PUT"),
		apitest.WithHeader("Access-Control-Request-Headers", "authorization,content-type,if-match"))
	require.Equal(t, http.StatusNoContent, pre.Status)
	require.Equal(t, app, pre.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, pre.Header.Get("Access-Control-Allow-Methods"), "PUT")
	for _, h := range []string{"Authorization", "Content-Type", "If-Match"} {
		require.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), h)
	}
	require.Equal(t, "600", pre.Header.Get("Access-Control-Max-Age"))

	resp := c.Get("/api/space", origin(app)).Expect(http.StatusOK)
	require.Equal(t, app, resp.Header.Get("Access-Control-Allow-Origin"))
	exposed := resp.Header.Get("Access-Control-Expose-Headers")
	for _, h := range []string{"ETag", "Service-Continue", "Warning", "X-Request-Id", "Hubd-Version"} {
		require.Contains(t, exposed, h)
	}
	require.Empty(t, c.Get("/api/space", origin("https://evil.example.com")).Expect(http.StatusOK).Header.Get("Access-Control-Allow-Origin"))

	plain := apitest.New(t)
	resp = plain.Client(plain.Token("acme", "alice", auth.RoleAdmin)).Get("/api/space", origin(app)).Expect(http.StatusOK)
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

func TestParseOrigins(t *testing.T) {
	got, err := httpapi.ParseOrigins(" https://a.example.com , http://localhost:5173/,*,")
	require.NoError(t, err)
	require.Equal(t, []string{"https://a.example.com", "http://localhost:5173", "*"}, got)
	for _, bad := range []string{"a.example.com", "ftp://x", "https://x/path", "https://u@x", "https://x?q=1"} {
		_, err := httpapi.ParseOrigins(bad)
		require.Error(t, err, bad)
	}
}

// TestCompression: JSON answers are gzip-compressed for clients that accept it (without Content-Length);
// configuration data is sent as stored, with its Content-Length and ETag.
func TestCompression(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	gz := apitest.WithHeader("Accept-Encoding", "gzip")

	docs := f.env.Anonymous().Get("/api/docs", gz).Expect(http.StatusOK)
	require.Equal(t, "gzip", docs.Header.Get("Content-Encoding"))
	require.Empty(t, docs.Header.Get("Content-Length"))
	require.Contains(t, docs.Header.Get("Vary"), "Accept-Encoding")
	require.JSONEq(t, string(oas.Document), string(docs.Body))

	u := f.create(t, "web", "AppConfig/Env")
	data := "A=" + strings.Repeat("x", 4096) + "\n"
	f.put(t, u, "text/plain", data).Expect(http.StatusOK)
	resp := f.c.Get(f.path(u)+"/data", gz).Expect(http.StatusOK)
	require.Empty(t, resp.Header.Get("Content-Encoding"))
	require.Equal(t, strconv.Itoa(len(data)), resp.Header.Get("Content-Length"))
	require.Equal(t, data, string(resp.Body))

	// A client that does not accept gzip gets the JSON as it is.
	plain := f.env.Anonymous().Get("/api/docs", apitest.WithHeader("Accept-Encoding", "identity")).Expect(http.StatusOK)
	require.Empty(t, plain.Header.Get("Content-Encoding"))
	require.JSONEq(t, string(oas.Document), string(plain.Body))
}
