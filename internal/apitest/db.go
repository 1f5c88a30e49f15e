// Package apitest runs hubd for tests the way it runs in production: a real PostgreSQL database (one per
// test, cloned from a migrated template), the real HTTP server, and a client that validates every
// response against the served OpenAPI document and records which operations were called.
package apitest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubd/hubd/internal/migrate"
	hubdsql "github.com/hubd/hubd/sql"
)

// AdminURL is the server the tests use (DATABASE_URL, as `make test` sets it). Every test that needs
// PostgreSQL reaches it through here, so `go test -short` (the fast loop, no database) skips them here.
func AdminURL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL: -short leaves out the database suites; `make test` runs the full suite")
	}
	u := os.Getenv("DATABASE_URL")
	if u == "" {
		t.Fatal("DATABASE_URL is not set: run the tests with `make test`, which finds or starts PostgreSQL")
	}
	return u
}

// withDatabase returns u pointing at database name.
func withDatabase(u, name string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("parsing DATABASE_URL: %w", err)
	}
	parsed.Path = "/" + name
	return parsed.String(), nil
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// templateDatabase creates (once per schema, shared by concurrent test processes) a migrated database
// that test databases are cloned from.
func templateDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t) // outside the Once: a skip or failure there must not mark the template made
	templateOnce.Do(func() {
		templateName = "hubd_tmpl_" + migrationsHash()
		templateErr = createTemplate(admin, templateName)
	})
	if templateErr != nil {
		t.Fatalf("preparing the template database: %v", templateErr)
	}
	return templateName
}

func migrationsHash() string {
	h := sha256.New()
	names, _ := fs.Glob(hubdsql.Migrations, "migrations/*.sql")
	sort.Strings(names)
	for _, n := range names {
		data, _ := fs.ReadFile(hubdsql.Migrations, n)
		h.Write([]byte(n))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func createTemplate(adminURL, name string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// Test binaries of several packages start at once; one of them builds the template.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext('hubd.test.template'))"); err != nil {
		return err
	}
	defer conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtext('hubd.test.template'))") //nolint:errcheck
	var ready bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)", name).Scan(&ready); err != nil {
		return err
	}
	if ready {
		return nil
	}
	// Templates of older schemas are left alone: another checkout on this server may be using one.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return err
	}
	target, err := withDatabase(adminURL, name)
	if err != nil {
		return err
	}
	if err := migrate.Up(target); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH is_template = true ALLOW_CONNECTIONS = false")
	return err
}

// NewDatabase creates an empty, migrated database for one test and drops it when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return createDatabase(t, templateDatabase(t))
}

// NewBlankDatabase creates a database without any schema (for migration tests).
func NewBlankDatabase(t testing.TB) string {
	t.Helper()
	return createDatabase(t, "template0")
}

func createDatabase(t testing.TB, tmpl string) string {
	t.Helper()
	admin := AdminURL(t)
	name := "hubd_t_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connecting to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	var createErr error
	for attempt := 0; attempt < 20; attempt++ {
		_, createErr = conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s",
			pgx.Identifier{name}.Sanitize(), pgx.Identifier{tmpl}.Sanitize()))
		if createErr == nil || !strings.Contains(createErr.Error(), "being accessed by other users") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if createErr != nil {
		t.Fatalf("creating test database: %v", createErr)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			t.Errorf("dropping test database: %v", err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping test database: %v", err)
		}
	})
	u, err := withDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
