package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// send sends one request and fails the benchmark on an unexpected status.
func (c benchClient) send(b *testing.B, method, path, contentType string, body []byte, want int) []byte {
	b.Helper()
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		b.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, out)
	}
	return out
}

// benchUnits makes a Space and n Units of AppConfig/YAML data in it through the API, and answers the Space
// ID and the Units' IDs.
func benchUnits(b *testing.B, c benchClient, slug string, n int, data func(i int) string) (string, []string) {
	var space struct{ SpaceID string }
	decodeInto(b, c.send(b, http.MethodPost, "/api/space", "application/json", fmt.Appendf(nil, `{"Slug": %q}`, slug), http.StatusOK), &space)
	ids := make([]string, n)
	for i := range n {
		var u struct{ Unit struct{ UnitID string } }
		body := fmt.Appendf(nil, `{"Slug": "u-%04d", "ToolchainType": "AppConfig/YAML"}`, i)
		decodeInto(b, c.send(b, http.MethodPost, "/api/space/"+space.SpaceID+"/unit", "application/json", body, http.StatusOK), &u)
		ids[i] = u.Unit.UnitID
		c.send(b, http.MethodPut, "/api/space/"+space.SpaceID+"/unit/"+ids[i]+"/data", "application/yaml", []byte(data(i)), http.StatusOK)
	}
	return space.SpaceID, ids
}

// BenchmarkLinkFanOut writes one upstream Unit that 100 Links (AutoUpdate, one path each) read, so each
// write also writes the 100 downstream Units in its transaction, beside the same write of a Unit no Link
// reads. It reports ms per write of each and their ratio. Run with `make bench`.
func BenchmarkLinkFanOut(b *testing.B) {
	const fanOut = 100
	env := apitest.New(b)
	c := benchClient{base: env.URL, token: env.Token("acme", "alice", auth.RoleAdmin), http: http.DefaultClient}
	spaceID, ids := benchUnits(b, c, "fanout", fanOut+2, func(i int) string { return fmt.Sprintf("db:\n  host: h0\napp:\n  name: app-%d\n", i) })
	upstream, plain := ids[0], ids[1]
	for i, down := range ids[2:] {
		body := fmt.Appendf(nil, `{"Slug": "l-%04d", "FromUnitID": %q, "ToUnitID": %q, "AutoUpdate": true,
			"UpstreamPaths": [{"Path": "db.host"}], "DownstreamPaths": [{"Path": "database.host"}]}`, i, down, upstream)
		c.send(b, http.MethodPost, "/api/space/"+spaceID+"/link", "application/json", body, http.StatusOK)
	}
	write := func(unitID string, n int) time.Duration {
		start := time.Now()
		c.send(b, http.MethodPut, "/api/space/"+spaceID+"/unit/"+unitID+"/data", "application/yaml", fmt.Appendf(nil, "db:\n  host: h%d\n", n), http.StatusOK)
		return time.Since(start)
	}
	var linked, alone time.Duration
	n := 0
	for b.Loop() {
		n++
		linked += write(upstream, n)
		alone += write(plain, n)
	}
	f := float64(b.N)
	b.ReportMetric(float64(linked.Microseconds())/1000/f, "fanout100-ms/write")
	b.ReportMetric(float64(alone.Microseconds())/1000/f, "nolinks-ms/write")
	b.ReportMetric(float64(linked)/float64(alone), "ratio")
}

// BenchmarkUpgradeClones upgrades 1,000 clones of one Unit after a change upstream, in one bulk PATCH
// /unit?upgrade=true (each clone gets a Revision made by a three-way merge that keeps its own override),
// beside a bulk function invocation that writes the same 1,000 Units without a merge. It reports ms per
// request of each and their ratio. Run with `make bench`.
func BenchmarkUpgradeClones(b *testing.B) {
	const clones = 1000
	env := apitest.New(b)
	c := benchClient{base: env.URL, token: env.Token("acme", "alice", auth.RoleAdmin), http: http.DefaultClient}
	spaceID, ids := benchUnits(b, c, "upstream", 1, func(int) string { return "image: nginx:0\nreplicas: 2\nlog: info\n" })
	upstream := ids[0]
	var dest struct{ SpaceID string }
	decodeInto(b, c.send(b, http.MethodPost, "/api/space", "application/json", []byte(`{"Slug": "clones", "Labels": {"clones": "yes"}}`), http.StatusOK), &dest)
	// name_pattern gives each of the 1,000 copies of the one Unit its own Slug.
	prefixes := make([]string, clones)
	for i := range prefixes {
		prefixes[i] = fmt.Sprintf("c%04d-", i)
	}
	clone := url.Values{"where": {fmt.Sprintf("UnitID = '%s'", upstream)}, "where_space": {"Labels.clones = 'yes'"}}
	for i := 0; i < clones; i += 100 {
		q := url.Values{}
		for k, v := range clone {
			q[k] = v
		}
		q.Set("name_prefixes", strings.Join(prefixes[i:i+100], ","))
		c.send(b, http.MethodPost, "/api/unit?"+q.Encode(), "application/merge-patch+json", []byte(`{}`), http.StatusOK)
	}
	// Each clone overrides one path of its own, which the upgrades keep.
	override := url.Values{"where": {fmt.Sprintf("SpaceID = '%s'", dest.SpaceID)}}.Encode()
	c.send(b, http.MethodPost, "/api/space/"+dest.SpaceID+"/function/invoke?"+override, "application/json",
		[]byte(`{"ToolchainType": "AppConfig/YAML", "FunctionInvocations": [{"FunctionName": "set-value", "Arguments": [{"Value": "log"}, {"Value": "debug"}]}]}`), http.StatusOK)
	upgradeURL := "/api/unit?" + url.Values{"upgrade": {"true"}, "where": {fmt.Sprintf("UpstreamUnitID = '%s'", upstream)}}.Encode()
	var upgrade, invoke time.Duration
	n := 0
	for b.Loop() {
		n++
		c.send(b, http.MethodPut, "/api/space/"+spaceID+"/unit/"+upstream+"/data", "application/yaml", fmt.Appendf(nil, "image: nginx:%d\nreplicas: 2\nlog: info\n", n), http.StatusOK)
		start := time.Now()
		c.send(b, http.MethodPatch, upgradeURL, "application/merge-patch+json", []byte(`{}`), http.StatusOK)
		upgrade += time.Since(start)

		start = time.Now()
		c.send(b, http.MethodPost, "/api/space/"+dest.SpaceID+"/function/invoke?"+override, "application/json",
			fmt.Appendf(nil, `{"ToolchainType": "AppConfig/YAML", "FunctionInvocations": [{"FunctionName": "set-value", "Arguments": [{"Value": "replicas"}, {"Value": %d}]}]}`, n+2), http.StatusOK)
		invoke += time.Since(start)
	}
	f := float64(b.N)
	b.ReportMetric(float64(upgrade.Milliseconds())/f, "upgrade1000-ms/request")
	b.ReportMetric(float64(invoke.Milliseconds())/f, "invoke1000-ms/request")
	b.ReportMetric(float64(upgrade)/float64(invoke), "ratio")
}

func decodeInto(b *testing.B, body []byte, into any) {
	b.Helper()
	if err := json.Unmarshal(body, into); err != nil {
		b.Fatalf("decoding %s: %v", body, err)
	}
}
