package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// BenchmarkWorkerApply applies 1,000 Units through one worker: one POST /unit/apply queues them, the worker
// (this package, in the process) writes each Unit's file and reports Completed; the figure is operations per
// second from the request to the last Completed. Beside it, in the same run, the same 1,000 Units each get
// one plain data PUT, one request at a time. Run with `make bench`.
func BenchmarkWorkerApply(b *testing.B) {
	const units = 1000
	env := apitest.New(b)
	token := env.Token("acme", "alice", auth.RoleAdmin)
	do := func(method, path, contentType string, body []byte) []byte {
		req, _ := http.NewRequest(method, env.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return out
	}
	var ids struct{ SpaceID, BridgeWorkerID, Secret, TargetID string }
	decode(b, do(http.MethodPost, "/api/space", "application/json", []byte(`{"Slug": "bench"}`)), &ids)
	sp := "/api/space/" + ids.SpaceID
	decode(b, do(http.MethodPost, sp+"/bridge_worker", "application/json", []byte(`{"Slug": "files"}`)), &ids)
	decode(b, do(http.MethodPost, sp+"/target", "application/json", fmt.Appendf(nil,
		`{"Slug": "files", "ToolchainType": "AppConfig/YAML", "ProviderType": "Kubernetes", "BridgeWorkerID": %q}`, ids.BridgeWorkerID)), &ids)
	paths := make([]string, units)
	for i := range units {
		var created struct{ Unit struct{ UnitID string } }
		decode(b, do(http.MethodPost, sp+"/unit", "application/json", fmt.Appendf(nil,
			`{"Slug": "u-%04d", "ToolchainType": "AppConfig/YAML", "TargetID": %q}`, i, ids.TargetID)), &created)
		paths[i] = sp + "/unit/" + created.Unit.UnitID
		do(http.MethodPut, paths[i]+"/data", "application/yaml", fmt.Appendf(nil, "replicas: %d\n", i))
	}

	w, err := New(Config{BaseURL: env.URL, WorkerID: ids.BridgeWorkerID, Secret: ids.Secret, Dir: b.TempDir(), PollSeconds: 5,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()

	completed := func() int {
		var n int
		if err := env.App.Store.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM queued_operation WHERE bridge_worker_id = $1 AND status = 'Completed'`, ids.BridgeWorkerID).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	applyURL := "/api/unit/apply?" + url.Values{"where": {"SpaceID = '" + ids.SpaceID + "'"}}.Encode()
	var apply, put time.Duration
	round := 0
	for b.Loop() {
		round++
		start := time.Now()
		do(http.MethodPost, applyURL, "application/json", []byte(`{}`))
		for completed() < round*units {
			time.Sleep(5 * time.Millisecond)
		}
		apply += time.Since(start)

		start = time.Now()
		for i, p := range paths {
			do(http.MethodPut, p+"/data", "application/yaml", fmt.Appendf(nil, "replicas: %d\nround: %d\n", i, round))
		}
		put += time.Since(start)
	}
	ops := float64(b.N * units)
	b.ReportMetric(ops/apply.Seconds(), "applies/s")
	b.ReportMetric(ops/put.Seconds(), "data-puts/s")
	b.ReportMetric(put.Seconds()/apply.Seconds(), "apply/put-throughput")
}

func decode(b *testing.B, body []byte, into any) {
	b.Helper()
	if err := json.Unmarshal(body, into); err != nil {
		b.Fatalf("decoding %s: %v", body, err)
	}
}
