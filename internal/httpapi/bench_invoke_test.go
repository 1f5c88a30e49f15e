package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// BenchmarkInvokeSetImage sets an image on 1,000 Kubernetes Units in one POST /function/invoke (each Unit
// changes, so each gets a Revision and a Mutation), beside what a hand-written service would do over pgx
// for the same change: read the 1,000 data, edit each (the same YAML edit), and write the new contents and
// heads in one batch. It reports ms per request of each and their ratio. Run with `make bench`.
func BenchmarkInvokeSetImage(b *testing.B) {
	const total = 1000
	env := apitest.New(b)
	token := env.Token("acme", "alice", auth.RoleAdmin)
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	ctx := context.Background()
	spaceID := uuid.New()
	pool := env.App.Store.Pool
	if _, err := pool.Exec(ctx, `INSERT INTO space (space_id, organization_id, slug) VALUES ($1, $2, 'invoke')`, spaceID, org); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		WITH src AS (
			SELECT i, format(E'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%s\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: main\n          image: nginx:1.0\n        - name: side\n          image: envoy:1.0\n', i) AS data
			FROM generate_series(1, $3::int) AS i
		), stored AS (
			INSERT INTO config_data (data_hash, data, data_size)
			SELECT encode(sha256(convert_to(data, 'UTF8')), 'hex'), convert_to(data, 'UTF8'), octet_length(data) FROM src
			ON CONFLICT DO NOTHING
		)
		INSERT INTO unit (unit_id, organization_id, space_id, slug, toolchain_type, data_hash, data_size)
		SELECT gen_random_uuid(), $1, $2, 'app-' || i, 'Kubernetes/YAML', encode(sha256(convert_to(data, 'UTF8')), 'hex'), octet_length(data)
		FROM src`, org, spaceID, total); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ANALYZE unit; ANALYZE config_data"); err != nil {
		b.Fatal(err)
	}
	invokeURL := fmt.Sprintf("%s/api/space/%s/function/invoke?%s", env.URL, spaceID, url.Values{"where": {"Slug LIKE 'app-%'"}}.Encode())
	image := 0
	var hubd, raw time.Duration
	for b.Loop() {
		image++
		body := fmt.Appendf(nil, `{"FunctionInvocations": [{"FunctionName": "set-image", "Arguments": [{"Value": "main"}, {"Value": "nginx:%d"}]}]}`, image)
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, invokeURL, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("invoke: status %d", resp.StatusCode)
		}
		hubd += time.Since(start)

		image++
		start = time.Now()
		setImageOverSQL(b, ctx, pool, spaceID, fmt.Sprintf("nginx:%d", image))
		raw += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(hubd.Milliseconds())/n, "hubd-ms/request")
	b.ReportMetric(float64(raw.Milliseconds())/n, "sql-ms/request")
	b.ReportMetric(float64(hubd)/float64(raw), "hubd/sql")
}

// setImageOverSQL is the baseline: the same change by hand over pgx, without history or checks.
func setImageOverSQL(b *testing.B, ctx context.Context, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}, spaceID uuid.UUID, image string) {
	rows, err := pool.Query(ctx, `SELECT u.unit_id, c.data FROM unit u JOIN config_data c ON c.data_hash = u.data_hash WHERE u.space_id = $1`, spaceID)
	if err != nil {
		b.Fatal(err)
	}
	type edit struct {
		id   uuid.UUID
		data []byte
	}
	var edits []edit
	for rows.Next() {
		var e edit
		if err := rows.Scan(&e.id, &e.data); err != nil {
			b.Fatal(err)
		}
		edits = append(edits, e)
	}
	rows.Close()
	value, _ := configdata.ValueNode(image)
	path := []configdata.PathSegment{{Key: "spec"}, {Key: "template"}, {Key: "spec"}, {Key: "containers"}, {Match: true, MatchKey: "name", MatchValue: "main"}, {Key: "image"}}
	batch := &pgx.Batch{}
	for _, e := range edits {
		tree, err := configdata.Open(configdata.KubernetesYAML, e.data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := configdata.Set(tree.Resources[0].Root, path, value); err != nil {
			b.Fatal(err)
		}
		out, err := tree.Render()
		if err != nil {
			b.Fatal(err)
		}
		hash := configdata.Hash(out)
		batch.Queue(`INSERT INTO config_data (data_hash, data, data_size) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, hash, out, len(out))
		batch.Queue(`UPDATE unit SET data_hash = $1, data_size = $2 WHERE unit_id = $3`, hash, len(out), e.id)
	}
	if err := pool.SendBatch(ctx, batch).Close(); err != nil {
		b.Fatal(err)
	}
}
