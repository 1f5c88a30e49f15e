package clienttest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/httpapi"
)

// chromium is the browser the test drives: Debian's package, which make test installs when missing;
// CHROMIUM names another.
func chromium() string {
	if path := os.Getenv("CHROMIUM"); path != "" {
		return path
	}
	return "/usr/bin/chromium"
}

// TestBrowserDocsAndCORS runs browser.ts in headless Chromium: the reference page hubd serves renders the
// document with nothing loaded from another origin, and a page of a configured origin calls the API
// through CORS while a page of another origin is refused by the browser.
func TestBrowserDocsAndCORS(t *testing.T) {
	t.Parallel()
	// The browser app: an empty page. It is served at 127.0.0.1 (an origin hubd allows) and at localhost
	// (the same server, another origin).
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>a browser app</title>"))
	}))
	t.Cleanup(app.Close)
	other := strings.Replace(app.URL, "127.0.0.1", "localhost", 1)
	require.NotEqual(t, app.URL, other)

	// The server first: under -short it skips, toolchain or not.
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{CORSOrigins: []string{app.URL}}})
	if _, err := os.Stat(filepath.Join(tsDir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("the browser test's toolchain is not installed (%v): run make test, which runs npm ci in internal/clienttest/ts", err)
	}
	if _, err := os.Stat(chromium()); err != nil {
		t.Fatalf("Chromium is not installed (%v): run make test, which installs Debian's chromium package, or set CHROMIUM", err)
	}
	doc, err := apitest.Document()
	require.NoError(t, err)

	run(t, nil, "node_modules/.bin/tsc", "-p", "tsconfig.browser.json")
	out := run(t, []string{
		"HUBD_URL=" + env.CheckedURL(),
		"HUBD_TOKEN=" + env.Token("acme", "alice", auth.RoleAdmin),
		"APP_URL=" + app.URL,
		"OTHER_APP_URL=" + other,
		"DOC_TITLE=" + doc.Info.Title,
		"CHROMIUM=" + chromium(),
	}, "node", "dist-browser/browser.js")
	require.Contains(t, out, "browser test passed")
}
