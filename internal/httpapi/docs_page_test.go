package httpapi_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/docsui"
	"github.com/hubd/hubd/gen/oas"
	"github.com/hubd/hubd/internal/apitest"
)

// TestDocsPage: a browser (Accept ranks text/html first) gets the browsable reference at /api/docs, /docs
// and /docs/; every other client gets the JSON. The page's links resolve, from each address, to the
// document and to the embedded script, and its policy forbids loading anything from another origin.
func TestDocsPage(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Anonymous()
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
	links := regexp.MustCompile(`spec-url="([^"]+)"[\s\S]*<script src="([^"]+)"`)

	for _, path := range []string{"/api/docs", "/docs", "/docs/"} {
		page := c.Get(path, apitest.WithHeader("Accept", browser)).Expect(http.StatusOK)
		require.Equal(t, "text/html; charset=UTF-8", page.Header.Get("Content-Type"), path)
		if path == "/api/docs" {
			require.Contains(t, page.Header.Values("Vary"), "Accept")
		}
		policy := page.Header.Get("Content-Security-Policy")
		require.Contains(t, policy, "default-src 'none'", path)
		require.Contains(t, policy, "script-src 'self'", path)
		require.Contains(t, policy, "connect-src 'self'", path)
		m := links.FindStringSubmatch(string(page.Body))
		require.Len(t, m, 3, "%s: the page names the document and the script:\n%s", path, page.Body)
		base := env.URL + path

		doc := c.Get(strings.TrimPrefix(resolve(t, base, m[1]), env.URL)).Expect(http.StatusOK)
		require.JSONEq(t, string(oas.Document), string(doc.Body), "%s: spec-url %s", path, m[1])
		script := c.Get(strings.TrimPrefix(resolve(t, base, m[2]), env.URL)).Expect(http.StatusOK)
		require.Equal(t, docsui.Script, script.Body, "%s: script %s", path, m[2])
		require.Equal(t, "text/javascript; charset=utf-8", script.Header.Get("Content-Type"))
		require.Equal(t, "public, max-age=31536000, immutable", script.Header.Get("Cache-Control"))
	}

	// Clients that name no type, JSON first, or JSON exactly above a wildcard HTML get JSON.
	for _, accept := range []string{"", "*/*", "application/json", "application/json, text/html;q=0.9",
		"text/html;q=0.5, application/json", "text/*;q=0.5, application/*", "text/html;q=0"} {
		resp := c.Get("/api/docs", apitest.WithHeader("Accept", accept)).Expect(http.StatusOK)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "Accept: %q", accept)
		require.Contains(t, resp.Header.Values("Vary"), "Accept", "a cache keeps the JSON and the page apart")
		require.JSONEq(t, string(oas.Document), string(resp.Body), "Accept: %q", accept)
	}

	// The script is compressed for browsers; an unknown asset is not found; an unversioned one is revalidated.
	gz := c.Get("/docs/assets/redoc.standalone.js", apitest.WithHeader("Accept-Encoding", "gzip")).Expect(http.StatusOK)
	require.Equal(t, "gzip", gz.Header.Get("Content-Encoding"))
	require.Equal(t, "no-cache", gz.Header.Get("Cache-Control"))
	require.Equal(t, docsui.Script, gz.Body)
	require.Contains(t, string(c.Get("/docs/assets/redoc.standalone.js.LICENSE.txt").Expect(http.StatusOK).Body), "MIT")
	c.Get("/docs/assets/other.js").Expect(http.StatusNotFound)
}

// resolve resolves a link of a page at base.
func resolve(t *testing.T, base, ref string) string {
	t.Helper()
	u, err := http.NewRequest(http.MethodGet, base, nil)
	require.NoError(t, err)
	r, err := u.URL.Parse(ref)
	require.NoError(t, err)
	return r.String()
}
