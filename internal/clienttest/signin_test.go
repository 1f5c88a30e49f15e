package clienttest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/httpapi"
)

// appDir is the reference browser app (web/app): index.html, config.json, and dist/ built by tsc.
var appDir = filepath.Join("..", "..", "web", "app")

// appServer serves the reference app from its own origin (another port than hubd's, so every call the app
// makes to hubd is cross-origin), with config.json answered from the test's values.
type appServer struct {
	URL string // the page: its origin + pathname is the redirect URI to register

	mu     sync.Mutex
	config []byte
}

func (a *appServer) configure(t *testing.T, base, clientID string) {
	t.Helper()
	data, err := json.Marshal(map[string]string{"base": base, "clientID": clientID})
	require.NoError(t, err)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.config = data
}

func (a *appServer) origin() string { return strings.TrimSuffix(a.URL, "/") }

func serveApp(t *testing.T) *appServer {
	t.Helper()
	a := &appServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(appDir, "index.html"))
	})
	mux.HandleFunc("GET /config.json", func(w http.ResponseWriter, _ *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(a.config)
	})
	mux.Handle("GET /dist/", http.StripPrefix("/dist/", http.FileServer(http.Dir(filepath.Join(appDir, "dist")))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a.URL = srv.URL + "/"
	return a
}

// requireSignInToolchain fails the test unless the app's and the browser test's toolchains and Chromium
// are installed, then builds the app and the script.
func requireSignInToolchain(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(appDir, "node_modules", ".bin", "tsc")); err != nil {
		t.Fatalf("the reference app's toolchain is not installed (%v): run make test, which runs npm ci in web/app", err)
	}
	if _, err := os.Stat(filepath.Join(tsDir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("the browser test's toolchain is not installed (%v): run make test, which runs npm ci in internal/clienttest/ts", err)
	}
	if _, err := os.Stat(chromium()); err != nil {
		t.Fatalf("Chromium is not installed (%v): run make test, which installs Debian's chromium package, or set CHROMIUM", err)
	}
	buildOnce.Do(func() {
		runIn(t, appDir, nil, "node_modules/.bin/tsc", "-p", ".")
		run(t, nil, "node_modules/.bin/tsc", "-p", "tsconfig.signin.json")
		built = true
	})
	if !built {
		t.Fatal("building the reference app or the sign-in script failed (see the first test that built them)")
	}
}

var (
	buildOnce sync.Once
	built     bool
)

// signIn runs signin.ts: Chromium opens the app, signs in as username on the provider's login page and
// must come back showing wantUser and wantOrg.
func signIn(t *testing.T, app *appServer, username, password, wantUser, wantOrg string) {
	t.Helper()
	runSignIn(t, app, "SIGNIN_USERNAME="+username, "SIGNIN_PASSWORD="+password,
		"WANT_USER="+wantUser, "WANT_ORGANIZATION="+wantOrg)
}

// signInRefused is signIn where hubd refuses the token exchange: the app must come back showing
// wantError.
func signInRefused(t *testing.T, app *appServer, username, password, wantError string) {
	t.Helper()
	runSignIn(t, app, "SIGNIN_USERNAME="+username, "SIGNIN_PASSWORD="+password, "WANT_ERROR="+wantError)
}

func runSignIn(t *testing.T, app *appServer, env ...string) {
	t.Helper()
	env = append(env, "APP_URL="+app.URL, "CHROMIUM="+chromium())
	out := run(t, env, "node", "dist-signin/signin.js")
	require.Contains(t, out, "sign-in test passed")
}

// TestBrowserAppWithoutSignIn opens the reference app against a hubd with browser sign-in off: the app
// reads /api/info from its own origin (CORS, by --cors-origins) and says that this hubd does not support
// browser sign-in instead of offering it.
func TestBrowserAppWithoutSignIn(t *testing.T) {
	t.Parallel()
	app := serveApp(t)
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{CORSOrigins: []string{app.origin()}}})
	requireSignInToolchain(t)
	app.configure(t, env.CheckedURL(), "any-client")
	runSignIn(t, app, "EXPECT_UNSUPPORTED=1")
}
