package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

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
