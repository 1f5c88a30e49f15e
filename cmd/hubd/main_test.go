package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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

// TestServeShutsDownGracefully: on shutdown the server stops taking work and finishes what is in flight.
func TestServeShutsDownGracefully(t *testing.T) {
	dbURL := apitest.NewDatabase(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, []string{"--addr", addr, "--database-url", dbURL, "--log-level", "error"})
	}()
	base := "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond)

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
