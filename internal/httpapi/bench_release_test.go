package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// BenchmarkReleasePublishPull publishes a Release of 1,000 Units (about 300 bytes of YAML each) and
// pulls it from the OCI registry as a client does (the manifest by tag "latest", then the bundle by
// digest), beside the baseline: one SQL query over pgx reading the same 1,000 Units' data. It reports ms
// of the first publish (which marks each Unit released), per later publish (the same Revisions again), per
// pull and per baseline read, the ratios, the bundle's and the data's sizes, and the bytes the process
// allocates per publish. Run with `make bench`.
func BenchmarkReleasePublishPull(b *testing.B) {
	const units = 1000
	env := apitest.New(b)
	c := benchClient{base: env.URL, token: env.Token("acme", "alice", auth.RoleAdmin), http: http.DefaultClient}
	spaceID, _ := benchUnits(b, c, "release", units, func(i int) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-%04d\n  namespace: shop\n  labels:\n    app: app-%04d\n"+
			"data:\n  LOG_LEVEL: info\n  DATABASE_URL: postgres://db.shop.svc:5432/app%04d\n  REPLICAS: \"%d\"\n  FEATURE_FLAGS: a,b,c\n", i, i, i, i%5+1)
	})
	space := "/api/space/" + spaceID
	var target struct{ TargetID string }
	decodeInto(b, c.send(b, http.MethodPost, space+"/target", "application/json",
		[]byte(`{"Slug": "cluster", "ToolchainType": "AppConfig/YAML", "ProviderType": "FluxOCI"}`), http.StatusOK), &target)
	c.send(b, http.MethodPatch, "/api/unit?"+url.Values{"where": {"SpaceID = '" + spaceID + "'"}}.Encode(), "application/merge-patch+json",
		fmt.Appendf(nil, `{"TargetID": %q}`, target.TargetID), http.StatusOK)
	publish := fmt.Appendf(nil, `{"TargetID": %q, "BundleBaseName": "apps"}`, target.TargetID)
	repo := "/v2/acme/release/apps"

	// The first publish marks every Unit released; later ones bundle the same Revisions and mark none.
	start := time.Now()
	c.send(b, http.MethodPost, space+"/release", "application/json", publish, http.StatusOK)
	first := time.Since(start)

	var published, pulled, baseline time.Duration
	var allocated uint64
	var bundleSize, dataSize int64
	var mem runtime.MemStats
	for b.Loop() {
		runtime.ReadMemStats(&mem)
		before := mem.TotalAlloc
		start = time.Now()
		var r struct {
			Digest    string
			UnitCount int64
			DataSize  int64
		}
		decodeInto(b, c.send(b, http.MethodPost, space+"/release", "application/json", publish, http.StatusOK), &r)
		published += time.Since(start)
		runtime.ReadMemStats(&mem)
		allocated += mem.TotalAlloc - before
		if r.UnitCount != units {
			b.Fatalf("the Release bundled %d Units, want %d", r.UnitCount, units)
		}

		start = time.Now()
		var m ocispec.Manifest
		if err := json.Unmarshal(c.send(b, http.MethodGet, repo+"/manifests/latest", "", nil, http.StatusOK), &m); err != nil || len(m.Layers) != 1 {
			b.Fatalf("manifest: %v %+v", err, m)
		}
		bundle := c.send(b, http.MethodGet, repo+"/blobs/"+m.Layers[0].Digest.String(), "", nil, http.StatusOK)
		pulled += time.Since(start)
		bundleSize = int64(len(bundle))

		start = time.Now()
		rows, err := env.App.Store.Pool.Query(context.Background(), `SELECT cd.data FROM unit u
			JOIN config_data cd ON cd.data_hash = u.data_hash WHERE u.space_id = $1`, spaceID)
		if err != nil {
			b.Fatal(err)
		}
		dataSize = 0
		for rows.Next() {
			var data []byte
			if err := rows.Scan(&data); err != nil {
				b.Fatal(err)
			}
			dataSize += int64(len(data))
		}
		if rows.Close(); rows.Err() != nil {
			b.Fatal(rows.Err())
		}
		baseline += time.Since(start)
	}
	f := float64(b.N)
	b.ReportMetric(float64(first.Microseconds())/1000, "first-publish1000-ms")
	b.ReportMetric(float64(published.Microseconds())/1000/f, "publish1000-ms/op")
	b.ReportMetric(float64(pulled.Microseconds())/1000/f, "pull-ms/op")
	b.ReportMetric(float64(baseline.Microseconds())/1000/f, "sql-read1000-ms/op")
	b.ReportMetric(float64(published)/float64(baseline), "publish/sql")
	b.ReportMetric(float64(pulled)/float64(baseline), "pull/sql")
	b.ReportMetric(float64(bundleSize)/1024, "bundle-KiB")
	b.ReportMetric(float64(dataSize)/1024, "data-KiB")
	b.ReportMetric(float64(allocated)/f/(1<<20), "alloc-MiB/publish")
}
