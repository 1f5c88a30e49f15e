package clienttest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// tsDir holds the TypeScript scenario and its toolchain (package-lock.json pins it; make test installs it
// with npm ci).
const tsDir = "ts"

// TestTypeScriptClientScenario generates types from the document the server serves with openapi-typescript,
// compiles scenario.ts with tsc --strict, and runs it with Node against the server through a proxy that
// checks every answer against the document.
func TestTypeScriptClientScenario(t *testing.T) {
	t.Parallel()
	env := apitest.New(t) // first: under -short it skips, toolchain or not
	for _, tool := range []string{"openapi-typescript", "tsc"} {
		if _, err := os.Stat(filepath.Join(tsDir, "node_modules", ".bin", tool)); err != nil {
			t.Fatalf("the TypeScript toolchain is not installed (%v): run make test, which runs npm ci in internal/clienttest/ts", err)
		}
	}
	doc := env.Anonymous().Get("/api/docs").Body
	require.NoError(t, os.MkdirAll(filepath.Join(tsDir, "gen"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(tsDir, "gen", "openapi.json"), doc, 0o644))

	run(t, nil, "node_modules/.bin/openapi-typescript", "gen/openapi.json", "-o", "gen/api.d.ts")
	run(t, nil, "node_modules/.bin/tsc", "-p", ".")
	out := run(t, []string{"HUBD_URL=" + env.CheckedURL(), "HUBD_TOKEN=" + env.Token("acme", "alice", auth.RoleAdmin)},
		"node", "dist/scenario.js")
	require.Contains(t, out, "scenario passed")
}

// run runs a command in tsDir and returns its output; a failure fails the test with that output.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	return runIn(t, tsDir, env, name, args...)
}

// runIn is run in another directory.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}
