package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
)

// captureStdout runs f and returns what it printed.
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdout
	os.Stdout = w
	ferr := f()
	os.Stdout = saved
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(out), ferr
}

func TestTokenCommand(t *testing.T) {
	dbURL := apitest.NewDatabase(t)
	env := apitest.New(t, apitest.Options{DatabaseURL: dbURL})
	ctx := context.Background()
	args := func(extra ...string) []string {
		return append([]string{"--database-url", dbURL, "--base-url", env.URL}, extra...)
	}

	out, err := captureStdout(t, func() error { return token(ctx, args("--org", "acme", "--user", "alice", "--role", "manager")) })
	require.NoError(t, err)
	var me api.OrganizationMember
	env.Client(strings.TrimSpace(out)).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, "alice", me.Username)
	require.Equal(t, api.OrgRole("manager"), me.OrgRole)

	// Without --role the membership keeps its role.
	out, err = captureStdout(t, func() error { return token(ctx, args("--org", "acme", "--user", "alice")) })
	require.NoError(t, err)
	env.Client(strings.TrimSpace(out)).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, api.OrgRole("manager"), me.OrgRole)

	_, err = captureStdout(t, func() error { return token(ctx, args("--org", "acme", "--user", "alice", "--role", "owner")) })
	require.Error(t, err)
	_, err = captureStdout(t, func() error { return token(ctx, args("--org", "acme")) })
	require.Error(t, err)
	_, err = captureStdout(t, func() error { return token(ctx, args("--org", "not a slug", "--user", "x")) })
	require.Error(t, err)
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// waitReady waits until the server at base answers /readyz with 200.
func waitReady(t *testing.T, base string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond)
}

// TestTokenUsesTheRecordedIssuer: serve records its base URL, so hubd token mints tokens that server
// accepts without being told the URL again, and refuses to mint for another one.
func TestTokenUsesTheRecordedIssuer(t *testing.T) {
	dbURL := apitest.NewDatabase(t)
	addr := freeAddr(t)
	base := "http://localhost:" + strings.TrimPrefix(addr, "127.0.0.1:") // not http://<addr>, hubd token's default

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, []string{"--addr", addr, "--base-url", base, "--database-url", dbURL, "--log-level", "error"})
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-served)
	})
	waitReady(t, base)

	out, err := captureStdout(t, func() error {
		return token(context.Background(), []string{"--database-url", dbURL, "--org", "acme", "--user", "alice"})
	})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, base+"/api/me", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(out))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	_, err = captureStdout(t, func() error {
		return token(context.Background(), []string{"--database-url", dbURL, "--base-url", "http://" + addr, "--org", "acme", "--user", "alice"})
	})
	require.ErrorContains(t, err, "issues tokens as "+base)
	require.ErrorContains(t, err, "refuse a token for http://"+addr)
}

// TestEnsureDBCreatesTheNamedDatabase: make run with a DATABASE_URL naming a database its server lacks
// creates it (.ci/ensure-db, which make run calls) rather than failing to connect.
func TestEnsureDBCreatesTheNamedDatabase(t *testing.T) {
	admin := apitest.AdminURL(t)
	parsed, err := url.Parse(admin)
	require.NoError(t, err)
	name := "hubd_ensure_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	parsed.Path = "/" + name
	named := parsed.String()

	conn, err := pgx.Connect(context.Background(), admin)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name) })

	cmd := exec.Command("../../.ci/ensure-db", "hubd")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+named)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Equal(t, named, strings.TrimSpace(string(out)), "an explicit DATABASE_URL is used as given")
	var exists bool
	require.NoError(t, conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists))
	require.True(t, exists, "the database DATABASE_URL names was not created")
}

// TestServeShutsDownGracefully: on shutdown the server stops taking work and finishes what is in flight.
func TestServeShutsDownGracefully(t *testing.T) {
	dbURL := apitest.NewDatabase(t)
	addr := freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, []string{"--addr", addr, "--database-url", dbURL, "--log-level", "error"})
	}()
	base := "http://" + addr
	waitReady(t, base)

	out, err := captureStdout(t, func() error {
		return token(context.Background(), []string{"--database-url", dbURL, "--base-url", base, "--org", "acme", "--user", "alice"})
	})
	require.NoError(t, err)
	tok := strings.TrimSpace(out)

	// Hold a lock the list needs, so the request is in flight when shutdown begins.
	conn, err := pgx.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	tx, err := conn.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), "LOCK TABLE space IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	observer, err := pgx.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer observer.Close(context.Background())

	status := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/space", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	require.Eventually(t, func() bool {
		select {
		case s := <-status:
			t.Fatalf("the request ended (status %d) before it could be held in flight", s)
		default:
		}
		// Not conn: inside its transaction pg_stat_activity would answer from a cached snapshot.
		var waiting bool
		err := observer.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM space%')`).Scan(&waiting)
		require.NoError(t, err)
		return waiting
	}, 10*time.Second, 10*time.Millisecond)

	cancel() // as SIGTERM would
	select {
	case err := <-served:
		t.Fatalf("serve returned while a request was in flight: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, tx.Rollback(context.Background()))
	require.Equal(t, http.StatusOK, <-status)
	require.NoError(t, <-served)
}
