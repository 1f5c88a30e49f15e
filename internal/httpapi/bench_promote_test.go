package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// BenchmarkPromote promotes a change of 100 Units of one Space (dev) into 100 Spaces holding a clone of
// each (10,000 Units, each upgraded by one new Revision and given the ChangeOrder's two Tags), through
// POST /promote with a ChangeOrder, beside the baseline: the same 10,000 upgrades through bulk PATCH
// /unit?upgrade=true (one request per Space, so each stays within the request deadline). It reports ms per promotion and per
// Unit, the statements it runs per Unit, the baseline's ms and statements per Unit, and the ratios. Run
// with `make bench`.
func BenchmarkPromote(b *testing.B) {
	const spaces, units, batch = 100, 100, 10
	env := apitest.New(b)
	c := benchClient{base: env.URL, token: env.Token("acme", "alice", auth.RoleAdmin), http: http.DefaultClient}
	devID, _ := benchUnits(b, c, "dev", units, func(i int) string { return fmt.Sprintf("image: web:0\nreplicas: %d\nlog: info\n", i%5+1) })
	batches := make([][]string, batch)
	for i := range spaces {
		var sp struct{ SpaceID string }
		decodeInto(b, c.send(b, http.MethodPost, "/api/space", "application/json",
			fmt.Appendf(nil, `{"Slug": "prod-%03d", "Labels": {"tier": "prod", "batch": "%d"}}`, i, i/(spaces/batch)), http.StatusOK), &sp)
		batches[i/(spaces/batch)] = append(batches[i/(spaces/batch)], "'"+sp.SpaceID+"'")
	}
	// The clones, one batch of Spaces (1,000 Units) per request.
	for i := range batch {
		q := url.Values{"where": {"SpaceID = '" + devID + "'"}, "where_space": {fmt.Sprintf("Labels.batch = '%d'", i)}}
		c.send(b, http.MethodPost, "/api/unit?"+q.Encode(), "application/merge-patch+json", []byte(`{}`), http.StatusOK)
	}
	change := func(n int) {
		q := url.Values{"where": {"SpaceID = '" + devID + "'"}}
		c.send(b, http.MethodPost, "/api/space/"+devID+"/function/invoke?"+q.Encode(), "application/json",
			fmt.Appendf(nil, `{"ToolchainType": "AppConfig/YAML", "FunctionInvocations": [{"FunctionName": "set-value", "Arguments": [{"Value": "image"}, {"Value": "web:%d"}]}]}`, n), http.StatusOK)
	}
	var promoted, upgraded time.Duration
	var promoteStatements, upgradeStatements int64
	n := 0
	for b.Loop() {
		n++
		change(2 * n)
		var co struct{ ChangeOrderID string }
		decodeInto(b, c.send(b, http.MethodPost, "/api/space/"+devID+"/change_order", "application/json",
			fmt.Appendf(nil, `{"Slug": "change-%d", "WhereSpace": "Labels.tier = 'prod'"}`, n), http.StatusOK), &co)
		before := env.App.Store.Statements()
		start := time.Now()
		var r struct {
			Complete bool
			Spaces   []struct{ Units []struct{ Action string } }
		}
		decodeInto(b, c.send(b, http.MethodPost, "/api/promote", "application/json", fmt.Appendf(nil, `{"ChangeOrderID": %q}`, co.ChangeOrderID), http.StatusOK), &r)
		promoted += time.Since(start)
		promoteStatements += env.App.Store.Statements() - before
		upgrades := 0
		for _, s := range r.Spaces {
			for _, u := range s.Units {
				if u.Action == "Upgrade" {
					upgrades++
				}
			}
		}
		if !r.Complete || len(r.Spaces) != spaces || upgrades != spaces*units {
			b.Fatalf("the promotion reached %d Spaces and upgraded %d Units (complete %v), want %d and %d", len(r.Spaces), upgrades, r.Complete, spaces, spaces*units)
		}

		change(2*n + 1)
		before = env.App.Store.Statements()
		start = time.Now()
		for _, ids := range batches {
			for _, id := range ids {
				q := url.Values{"upgrade": {"true"}, "where": {fmt.Sprintf("UpstreamSpaceID = '%s' AND SpaceID = %s", devID, id)}}
				c.send(b, http.MethodPatch, "/api/unit?"+q.Encode(), "application/merge-patch+json", []byte(`{}`), http.StatusOK)
			}
		}
		upgraded += time.Since(start)
		upgradeStatements += env.App.Store.Statements() - before
	}
	f, per := float64(b.N), float64(b.N*spaces*units)
	b.ReportMetric(float64(promoted.Milliseconds())/f, "promote10000-ms/op")
	b.ReportMetric(float64(promoted.Microseconds())/1000/per, "promote-ms/unit")
	b.ReportMetric(float64(promoteStatements)/per, "promote-statements/unit")
	b.ReportMetric(float64(upgraded.Milliseconds())/f, "upgrade10000-ms/op")
	b.ReportMetric(float64(upgradeStatements)/per, "upgrade-statements/unit")
	b.ReportMetric(float64(promoted)/float64(upgraded), "promote/upgrade")
}
