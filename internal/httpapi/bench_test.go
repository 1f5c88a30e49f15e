package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

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
		if bytes.HasPrefix(body, []byte("{")) {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/yaml")
		}
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
	b.Run("view-list", func(b *testing.B) { benchViewPage(b, env, token, org, spaceID, do) })
	// Last, as the Triggers stay in force: the data PUT with three Triggers in the Space (two validating, one
	// with WhereUnit, one mutating that changes nothing after the first write).
	b.Run("data-put-triggers", func(b *testing.B) {
		for _, t := range []string{
			`{"Slug": "replicas", "Event": "Mutation", "ToolchainType": "Kubernetes/YAML", "FunctionName": "value-matches",
			  "Arguments": [{"Value": "spec.replicas"}, {"Value": "^[0-9]+$"}]}`,
			`{"Slug": "named", "Event": "Mutation", "ToolchainType": "Kubernetes/YAML", "FunctionName": "path-exists",
			  "Arguments": [{"Value": "metadata.name"}], "WhereUnit": "Slug LIKE 'app-%'"}`,
			`{"Slug": "stamp", "Event": "Mutation", "ToolchainType": "Kubernetes/YAML", "FunctionName": "set-label",
			  "Arguments": [{"Value": "managed-by"}, {"Value": "hubd"}]}`,
		} {
			do(http.MethodPost, fmt.Sprintf("%s/api/space/%s/trigger", env.URL, spaceID), []byte(t))
		}
		i := 0
		for b.Loop() {
			i++
			do(http.MethodPut, dataPath, fmt.Appendf(nil, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-1\nspec:\n  replicas: %d\n", i))
		}
	})
}

// benchViewPage times, in each iteration, one page of 100 Units with view= (5 columns: three attributes,
// the included Space's Slug and a data path) over the 10,000, the same page without view=, and the raw
// SQL a hand-written service would run for it over pgx (the Units' rows and the data path's values),
// reporting p50 and p99 of each and the p99 ratios.
func benchViewPage(b *testing.B, env *apitest.Env, token string, org, spaceID uuid.UUID, do func(method, u string, body []byte)) {
	viewBody := fmt.Sprintf(`{"Slug": "bench", "Of": "Unit", "Columns": [
		{"Name": "Unit", "ColumnSource": {"MetadataAttribute": "Slug"}},
		{"Name": "Type", "ColumnSource": {"MetadataAttribute": "ToolchainType"}},
		{"Name": "Revision", "ColumnSource": {"MetadataAttribute": "HeadRevisionNum"}},
		{"Name": "Space", "ColumnSource": {"MetadataAttribute": "Space.Slug"}},
		{"Name": "Replicas", "ColumnSource": {"DataPath": {"Path": "spec.replicas", "ResourceType": "apps/v1/Deployment"}}}]}`)
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/space/%s/view", env.URL, spaceID), bytes.NewReader([]byte(viewBody)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var created struct{ ViewID uuid.UUID }
	if err := json.NewDecoder(resp.Body).Decode(&created); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("creating the View: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	list := fmt.Sprintf("%s/api/space/%s/unit?", env.URL, spaceID)
	withView := list + url.Values{"view": {created.ViewID.String()}, "limit": {"100"}}.Encode()
	plain := list + url.Values{"limit": {"100"}}.Encode()
	ctx := context.Background()
	raw := func() {
		rows, err := env.App.Store.Pool.Query(ctx, `SELECT unit.*, jsonb_path_query_array(unit.head_doc, $3::jsonpath)
			FROM unit WHERE organization_id = $1 AND space_id = $2 AND hidden_reason = '' ORDER BY unit_id LIMIT 101`,
			org, spaceID, `$[*] ? (@.ResourceType == "apps/v1/Deployment").Value."spec"."replicas"`)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				b.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
	}
	timed := func(into *[]time.Duration, f func()) {
		start := time.Now()
		f()
		*into = append(*into, time.Since(start))
	}
	var viewed, listed, sql []time.Duration
	for b.Loop() {
		timed(&viewed, func() { do(http.MethodGet, withView, nil) })
		timed(&listed, func() { do(http.MethodGet, plain, nil) })
		timed(&sql, raw)
	}
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(float64(len(s))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(viewed, 0.5), "view-p50-ms")
	b.ReportMetric(pct(viewed, 0.99), "view-p99-ms")
	b.ReportMetric(pct(listed, 0.99), "plain-p99-ms")
	b.ReportMetric(pct(sql, 0.99), "sql-p99-ms")
	b.ReportMetric(pct(viewed, 0.99)/pct(listed, 0.99), "view/plain-p99")
	b.ReportMetric(pct(viewed, 0.99)/pct(sql, 0.99), "view/sql-p99")
}

// BenchmarkGuestList compares one list page read by a guest with the same request by an admin, over
// 100,000 Units in 10 Spaces of which the guest is granted one (10,000 Units; 90% of the rows are withheld
// from it). An admin's list carries no visibility condition; a guest's carries it in its SQL (grants,
// reached Spaces), so its pages must stay as cheap. Each iteration times both requests, so the figures
// and their ratio (guest/admin) come from one run.
func BenchmarkGuestList(b *testing.B) {
	const spaces, perSpace = 10, 10_000
	env := apitest.New(b)
	ctx := context.Background()
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	guestID := env.Principal("acme", "gus", auth.RoleGuest).UserID
	tokens := map[string]string{"admin": env.Token("acme", "alice", auth.RoleAdmin), "guest": env.Token("acme", "gus", auth.RoleGuest)}
	granted := uuid.New()
	_, err := env.App.Store.Pool.Exec(ctx, `
		WITH empty AS (
			INSERT INTO config_data (data_hash, data, data_size) VALUES (encode(sha256(''::bytea), 'hex'), ''::bytea, 0)
			ON CONFLICT DO NOTHING
		), spaces AS (
			INSERT INTO space (space_id, organization_id, slug, permissions)
			SELECT CASE WHEN s = 0 THEN $2 ELSE gen_random_uuid() END, $1, 'space-' || s,
			       CASE WHEN s = 0 THEN jsonb_build_object('View', jsonb_build_object('UserIDs', jsonb_build_object($3::text, true))) ELSE '{}' END
			FROM generate_series(0, $4::int - 1) AS s
			RETURNING space_id, slug
		)
		INSERT INTO unit (unit_id, organization_id, space_id, slug, toolchain_type, data_hash, labels)
		SELECT gen_random_uuid(), $1, spaces.space_id, 'unit-' || lpad(i::text, 6, '0') || '-' || spaces.slug, 'Kubernetes/YAML',
		       encode(sha256(''::bytea), 'hex'), jsonb_build_object('tier', CASE WHEN i % 10 = 0 THEN 'x' ELSE 'y' END)
		FROM spaces, generate_series(1, $5::int) AS i`, org, granted, guestID.String(), spaces, perSpace)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := env.App.Store.Pool.Exec(ctx, "ANALYZE unit; ANALYZE space"); err != nil {
		b.Fatal(err)
	}
	get := func(who, path string, q url.Values) (string, time.Duration) {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodGet, env.URL+path+"?"+q.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+tokens[who])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK || n < 1000 {
			b.Fatalf("%s %s: status %d, %d bytes, %v", who, path, resp.StatusCode, n, err)
		}
		return resp.Header.Get("Service-Continue"), time.Since(start)
	}
	page := url.Values{"order_by": {"Slug"}, "limit": {"100"}}
	// continued returns the query of page n of q for each caller (n-1 pages walked first).
	continued := func(path string, q url.Values, n int) map[string]url.Values {
		out := map[string]url.Values{}
		for who := range tokens {
			cur := url.Values{}
			for k, v := range q {
				cur[k] = v
			}
			for i := 1; i < n; i++ {
				next, _ := get(who, path, cur)
				cur.Set("continue", next)
			}
			out[who] = cur
		}
		return out
	}
	where := url.Values{"where": {"Labels.tier = 'x'"}, "order_by": {"Slug"}, "limit": {"100"}}
	cases := []struct {
		name, path string
		query      map[string]url.Values
	}{
		{"all-units/page=1", "/api/unit", continued("/api/unit", page, 1)},
		{"all-units/page=50", "/api/unit", continued("/api/unit", page, 50)},
		{"all-units/where", "/api/unit", continued("/api/unit", where, 1)},
		{"granted-space/page=1", "/api/space/" + granted.String() + "/unit", continued("/api/space/"+granted.String()+"/unit", page, 1)},
		// The same rows for both: what the guest's where costs when the admin's reads as sparse a match.
		{"granted-space/where", "/api/space/" + granted.String() + "/unit", continued("/api/space/"+granted.String()+"/unit", where, 1)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var admin, guest time.Duration
			for b.Loop() {
				_, d := get("admin", c.path, c.query["admin"])
				admin += d
				_, d = get("guest", c.path, c.query["guest"])
				guest += d
			}
			b.ReportMetric(float64(admin.Microseconds())/float64(b.N), "admin-µs/op")
			b.ReportMetric(float64(guest.Microseconds())/float64(b.N), "guest-µs/op")
			b.ReportMetric(float64(guest)/float64(admin), "guest/admin")
		})
	}
}
