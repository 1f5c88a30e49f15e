package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// BenchmarkListSpacesDepth lists 100,000 Spaces in pages of 100 with a where, an order_by and continue,
// and measures one page at several depths: keyset pagination makes page 1,000 cost what page 1 does.
// Run with `make bench`; figures are recorded in docs/performance.md.
func BenchmarkListSpacesDepth(b *testing.B) {
	const total, pageSize = 100_000, 100
	env := apitest.New(b)
	token := env.Token("acme", "alice", auth.RoleAdmin)
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	_, err := env.App.Store.Pool.Exec(context.Background(), `
		INSERT INTO space (space_id, organization_id, slug, display_name, labels, created_at, updated_at)
		SELECT gen_random_uuid(), $1, 'space-' || lpad(i::text, 6, '0'), 'Space ' || i,
		       jsonb_build_object('tier', CASE WHEN i % 2 = 0 THEN 'prod' ELSE 'dev' END),
		       now() - make_interval(secs => i), now()
		FROM generate_series(1, $2::int) AS i`, org, total)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := env.App.Store.Pool.Exec(context.Background(), "ANALYZE space"); err != nil {
		b.Fatal(err)
	}
	query := url.Values{"where": {"Labels.tier IS NOT NULL"}, "order_by": {"Slug"}, "limit": {fmt.Sprint(pageSize)}}

	get := func(cont string) (string, error) {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		req, _ := http.NewRequest(http.MethodGet, env.URL+"/api/space?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return "", err
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("status %d", resp.StatusCode)
		}
		return resp.Header.Get("Service-Continue"), nil
	}

	// Walk the list once, keeping the token that starts each measured depth.
	depths := []int{1, 10, 100, 500, 1000}
	tokens := map[int]string{1: ""}
	cont := ""
	for page := 1; page < depths[len(depths)-1]; page++ {
		if cont, err = get(cont); err != nil {
			b.Fatal(err)
		}
		if cont == "" {
			b.Fatalf("the list ended after %d pages", page)
		}
		tokens[page+1] = cont
	}
	// For contrast, the deprecated offset reaches the same depth by skipping rows.
	b.Run("offset=99900", func(b *testing.B) {
		saved := query
		query = url.Values{"where": saved["where"], "order_by": saved["order_by"], "limit": saved["limit"], "offset": {"99900"}}
		defer func() { query = saved }()
		for b.Loop() {
			if _, err := get(""); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, depth := range depths {
		b.Run(fmt.Sprintf("page=%d", depth), func(b *testing.B) {
			for b.Loop() {
				if _, err := get(tokens[depth]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUnits measures, over 10,000 Kubernetes Units in one Space: a data PUT (each a new Revision),
// a data GET, and a where_data list (a page of 100 Units whose Deployments have 7 replicas). Figures are in
// docs/performance.md.
func BenchmarkUnits(b *testing.B) {
	const total = 10_000
	env := apitest.New(b)
	token := env.Token("acme", "alice", auth.RoleAdmin)
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	ctx := context.Background()
	spaceID := uuid.New()
	if _, err := env.App.Store.Pool.Exec(ctx, `INSERT INTO space (space_id, organization_id, slug) VALUES ($1, $2, 'bench')`, spaceID, org); err != nil {
		b.Fatal(err)
	}
	_, err := env.App.Store.Pool.Exec(ctx, `
		WITH src AS (
			SELECT i, format(E'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%s\nspec:\n  replicas: %s\n', i, i % 10) AS data
			FROM generate_series(1, $3::int) AS i
		), stored AS (
			INSERT INTO config_data (data_hash, data, data_size)
			SELECT encode(sha256(convert_to(data, 'UTF8')), 'hex'), convert_to(data, 'UTF8'), octet_length(data) FROM src
			ON CONFLICT DO NOTHING
		)
		INSERT INTO unit (unit_id, organization_id, space_id, slug, toolchain_type, data_hash, data_size, head_doc)
		SELECT gen_random_uuid(), $1, $2, 'app-' || i, 'Kubernetes/YAML', encode(sha256(convert_to(data, 'UTF8')), 'hex'), octet_length(data),
		       jsonb_build_array(jsonb_build_object('ResourceType', 'apps/v1/Deployment', 'ResourceName', 'app-' || i,
		           'Value', jsonb_build_object('apiVersion', 'apps/v1', 'kind', 'Deployment',
		               'metadata', jsonb_build_object('name', 'app-' || i), 'spec', jsonb_build_object('replicas', i % 10))))
		FROM src`, org, spaceID, total)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := env.App.Store.Pool.Exec(ctx, "ANALYZE unit; ANALYZE config_data"); err != nil {
		b.Fatal(err)
	}
	var unitID uuid.UUID
	if err := env.App.Store.Pool.QueryRow(ctx, "SELECT unit_id FROM unit WHERE slug = 'app-1'").Scan(&unitID); err != nil {
		b.Fatal(err)
	}
	dataPath := fmt.Sprintf("%s/api/space/%s/unit/%s/data", env.URL, spaceID, unitID)
	do := func(method, u string, body []byte) {
		req, _ := http.NewRequest(method, u, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/yaml")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s %s: status %d", method, u, resp.StatusCode)
		}
	}
	b.Run("data-put", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			do(http.MethodPut, dataPath, fmt.Appendf(nil, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-1\nspec:\n  replicas: %d\n", i))
		}
	})
	b.Run("data-get", func(b *testing.B) {
		for b.Loop() {
			do(http.MethodGet, dataPath, nil)
		}
	})
	b.Run("where_data-list", func(b *testing.B) {
		q := url.Values{"where_data": {"spec.replicas = 7"}, "limit": {"100"}, "select": {"Slug"}}
		for b.Loop() {
			do(http.MethodGet, fmt.Sprintf("%s/api/space/%s/unit?%s", env.URL, spaceID, q.Encode()), nil)
		}
	})
}
