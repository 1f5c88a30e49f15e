package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// BenchmarkApplyThroughWorker applies 1,000 Units through one BridgeWorker: one bulk POST /unit/apply
// queues them, the worker reads its queue and reports each Completed (a UnitEvent and apply.completed
// each), one request at a time. It reports operations per second from the start to the last Completed,
// beside a plain data PUT measured in the same iteration. Run with `make bench`.
func BenchmarkApplyThroughWorker(b *testing.B) {
	const units, puts = 1000, 100
	env := apitest.New(b)
	c := benchClient{base: env.URL, token: env.Token("acme", "alice", auth.RoleAdmin), http: http.DefaultClient}
	spaceID, ids := benchUnits(b, c, "apply", units, func(i int) string { return fmt.Sprintf("app:\n  name: app-%d\n", i) })
	var w struct{ BridgeWorkerID, Secret string }
	decodeInto(b, c.send(b, http.MethodPost, "/api/space/"+spaceID+"/bridge_worker", "application/json", []byte(`{"Slug": "files"}`), http.StatusOK), &w)
	var tg struct{ TargetID string }
	decodeInto(b, c.send(b, http.MethodPost, "/api/space/"+spaceID+"/target", "application/json",
		fmt.Appendf(nil, `{"Slug": "dir", "ToolchainType": "AppConfig/YAML", "ProviderType": "Kubernetes", "BridgeWorkerID": %q}`, w.BridgeWorkerID), http.StatusOK), &tg)
	sel := "?" + url.Values{"where": {fmt.Sprintf("SpaceID = '%s'", spaceID)}}.Encode()
	c.send(b, http.MethodPatch, "/api/unit"+sel, "application/merge-patch+json", fmt.Appendf(nil, `{"TargetID": %q}`, tg.TargetID), http.StatusOK)
	worker := benchClient{base: env.URL, token: workerToken(b, env, uuid.MustParse(w.BridgeWorkerID), w.Secret), http: http.DefaultClient}
	queue := "/api/bridge_worker/" + w.BridgeWorkerID

	var applying, putting time.Duration
	n := 0
	for b.Loop() {
		n++
		start := time.Now()
		c.send(b, http.MethodPost, "/api/unit/apply"+sel, "", nil, http.StatusOK)
		var ops []struct{ QueuedOperationID string }
		decodeInto(b, worker.send(b, http.MethodGet, queue+"/queued_operation", "", nil, http.StatusOK), &ops)
		if len(ops) != units {
			b.Fatalf("the queue holds %d operations, want %d", len(ops), units)
		}
		for _, op := range ops {
			worker.send(b, http.MethodPost, queue+"/user_action_result", "application/json",
				fmt.Appendf(nil, `{"QueuedOperationID": %q, "Status": "Completed"}`, op.QueuedOperationID), http.StatusOK)
		}
		applying += time.Since(start)
		start = time.Now()
		for i := range puts {
			c.send(b, http.MethodPut, "/api/space/"+spaceID+"/unit/"+ids[0]+"/data", "application/yaml",
				fmt.Appendf(nil, "app:\n  name: app-0\n  round: %d-%d\n", n, i), http.StatusOK)
		}
		putting += time.Since(start)
	}
	f := float64(b.N)
	perApply := float64(applying.Microseconds()) / 1000 / f / units
	perPut := float64(putting.Microseconds()) / 1000 / f / puts
	b.ReportMetric(1000/perApply, "applies/s")
	b.ReportMetric(perApply, "ms/apply")
	b.ReportMetric(perPut, "ms/put")
	b.ReportMetric(perApply/perPut, "ratio")
}
