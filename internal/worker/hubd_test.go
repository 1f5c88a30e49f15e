package worker

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestAgainstHubd runs the worker against a real hubd through the test harness's client, which checks
// every request the worker sends and every answer it gets against the served document: apply, a dry
// run, drift read back by refresh, import filling an empty Unit, destroy, and a refresh that fails.
func TestAgainstHubd(t *testing.T) {
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	var space struct{ SpaceID string }
	admin.Post("/api/space", map[string]any{"Slug": "dev"}).Expect(http.StatusOK).JSON(&space)
	sp := "/api/space/" + space.SpaceID
	var bw struct{ BridgeWorkerID, Secret string }
	admin.Post(sp+"/bridge_worker", map[string]any{"Slug": "files"}).Expect(http.StatusOK).JSON(&bw)
	var target struct{ TargetID string }
	admin.Post(sp+"/target", map[string]any{"Slug": "files", "ToolchainType": "AppConfig/YAML", "ProviderType": "Kubernetes",
		"BridgeWorkerID": bw.BridgeWorkerID}).Expect(http.StatusOK).JSON(&target)
	newUnit := func(slug string) string {
		var created struct{ Unit struct{ UnitID string } }
		admin.Post(sp+"/unit", map[string]any{"Slug": slug, "ToolchainType": "AppConfig/YAML", "TargetID": target.TargetID}).
			Expect(http.StatusOK).JSON(&created)
		return sp + "/unit/" + created.Unit.UnitID
	}
	web := newUnit("web")
	admin.Put(web+"/data", yamlBody("replicas: 2\n")).Expect(http.StatusOK)

	dir := t.TempDir()
	w, err := New(Config{BaseURL: env.URL, WorkerID: bw.BridgeWorkerID, Secret: bw.Secret, Dir: dir, PollSeconds: 5,
		HTTPClient: env.HTTPClient(), Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	workerToken := func() string {
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		env.Anonymous().Post("/auth/worker", map[string]any{"WorkerID": bw.BridgeWorkerID, "Secret": bw.Secret}).Expect(http.StatusOK).JSON(&tok)
		return tok.AccessToken
	}()
	asWorker := env.Client(workerToken)
	// act starts an action and waits for the worker to finish it.
	act := func(unit, action string, body map[string]any) string {
		t.Helper()
		var op struct{ QueuedOperationID, Status string }
		if body == nil {
			body = map[string]any{}
		}
		admin.Post(unit+"/"+action, body).Expect(http.StatusOK).JSON(&op)
		require.Eventually(t, func() bool {
			asWorker.Get("/api/bridge_worker/" + bw.BridgeWorkerID + "/queued_operation/" + op.QueuedOperationID).Expect(http.StatusOK).JSON(&op)
			return op.Status == StatusCompleted || op.Status == StatusFailed
		}, 20*time.Second, 20*time.Millisecond)
		return op.Status
	}
	dataOf := func(unit string) string {
		return string(admin.Get(unit + "/data").Expect(http.StatusOK).Body)
	}
	file := filepath.Join(dir, "dev", "web.yaml")

	status := act(web, "apply", nil)
	require.Equal(t, StatusCompleted, status)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "replicas: 2\n", string(got))

	admin.Put(web+"/data", yamlBody("replicas: 3\n")).Expect(http.StatusOK)
	status = act(web, "apply", map[string]any{"DryRun": true})
	require.Equal(t, StatusCompleted, status)
	got, err = os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, "replicas: 2\n", string(got), "a dry run wrote the file")

	require.NoError(t, os.WriteFile(file, []byte("replicas: 5\n"), 0o644))
	status = act(web, "refresh", nil)
	require.Equal(t, StatusCompleted, status)
	require.Equal(t, "replicas: 5\n", dataOf(web), "the drift did not become the Unit's data")

	db := newUnit("db")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dev", "db.yaml"), []byte("storage: 10Gi\n"), 0o644))
	status = act(db, "import", nil)
	require.Equal(t, StatusCompleted, status)
	require.Equal(t, "storage: 10Gi\n", dataOf(db))

	status = act(web, "destroy", nil)
	require.Equal(t, StatusCompleted, status)
	require.NoFileExists(t, file)
	status = act(web, "refresh", nil)
	require.Equal(t, StatusFailed, status)
}

func yamlBody(s string) apitest.Raw {
	return apitest.Raw{Data: []byte(s), ContentType: "application/yaml"}
}
