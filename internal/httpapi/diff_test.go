package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/configdata"
)

func TestDiffs(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	u := f.create(t, "app", configdata.AppConfigYAML)
	f.put(t, u, "application/yaml", "server:\n  port: 8080\n  host: a\n").Expect(http.StatusOK)
	f.put(t, u, "application/yaml", "server:\n  port: 9090\n  tls: true\n").Expect(http.StatusOK)

	var d api.Diff
	c.Get(f.path(u) + "/diff").Expect(http.StatusOK).JSON(&d)
	require.Equal(t, int64(1), d.FromRevisionNum)
	require.Equal(t, int64(2), d.ToRevisionNum)
	require.Contains(t, d.UnifiedDiff, "-  port: 8080")
	require.Contains(t, d.UnifiedDiff, "+  port: 9090")
	got := map[string]api.PathChange{}
	for _, ch := range d.Changes {
		got[ch.Path] = ch
	}
	require.Equal(t, api.PathChangeChange("Changed"), got["server.port"].Change)
	require.EqualValues(t, 8080, got["server.port"].OldValue)
	require.EqualValues(t, 9090, got["server.port"].NewValue)
	require.Equal(t, api.PathChangeChange("Removed"), got["server.host"].Change)
	require.Nil(t, got["server.host"].NewValue)
	require.Equal(t, api.PathChangeChange("Added"), got["server.tls"].Change)

	c.Get(f.path(u) + "/diff?from=0&to=1").Expect(http.StatusOK).JSON(&d)
	require.Len(t, d.Changes, 2)
	for _, ch := range d.Changes {
		require.Equal(t, api.PathChangeChange("Added"), ch.Change)
	}
	c.Get(f.path(u) + "/diff?from=2&to=2").Expect(http.StatusOK).JSON(&d)
	require.Empty(t, d.Changes)
	require.Empty(t, d.UnifiedDiff)
	e := c.Get(f.path(u)+"/diff?to=7").ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "to", e.Error.ErrorMetadata.Items[0].Item)
	c.Get(f.path(u)+"/diff?from=-1").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Two configurations.
	c.Post("/api/diff", map[string]any{"ToolchainType": configdata.AppConfigEnv, "From": "A=1\nB=2\n", "To": "A=1\nB=3\n"}).Expect(http.StatusOK).JSON(&d)
	require.Len(t, d.Changes, 1)
	require.Equal(t, "B", d.Changes[0].Path)
	e = c.Post("/api/diff", map[string]any{"ToolchainType": configdata.AppConfigJSON, "From": "{}", "To": "{"}).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
	require.Contains(t, e.Message, "To")
	c.Post("/api/diff", map[string]any{"ToolchainType": "Nope", "From": "", "To": ""}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Many Units at once; a Unit without the asked Revisions reports its own error.
	empty := f.create(t, "empty", configdata.AppConfigEnv)
	var diffs []api.UnitDiff
	c.Get("/api/unit_diff?" + where("Slug IN ('app', 'empty')").Encode() + "&order_by=Slug").Expect(http.StatusOK).JSON(&diffs)
	require.Len(t, diffs, 2)
	require.Equal(t, "app", diffs[0].Slug)
	require.Len(t, diffs[0].Diff.Changes, 3)
	require.Equal(t, empty.UnitID, diffs[1].UnitID)
	require.NotNil(t, diffs[1].Diff, "an empty Unit diffs Revision 0 with itself")
	c.Get("/api/unit_diff?from=1&" + where("Slug IN ('app', 'empty')").Encode() + "&order_by=Slug").Expect(http.StatusOK).JSON(&diffs)
	require.NotNil(t, diffs[1].Error)
	require.Equal(t, api.ErrorTypeValidation, diffs[1].Error.Type)
}

// TestBulkReadsStream reads more Units than one chunk, without and with limit.
func TestBulkReadsStream(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	const total = 450
	data := "A=1\n"
	_, err := f.env.App.Store.Pool.Exec(context.Background(), `
		INSERT INTO config_data (data_hash, data, data_size) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		configdata.Hash([]byte(data)), []byte(data), len(data))
	require.NoError(t, err)
	_, err = f.env.App.Store.Pool.Exec(context.Background(), `
		INSERT INTO unit (unit_id, organization_id, space_id, slug, toolchain_type, data_hash, data_size, head_doc)
		SELECT gen_random_uuid(), $1, $2, 'bulk-' || lpad(i::text, 4, '0'), 'AppConfig/Env', $3, $4, '[{"ResourceType":"","ResourceName":"","Value":{"A":"1"}}]'
		FROM generate_series(1, $5::int) AS i`, f.space.OrganizationID, f.space.SpaceID, configdata.Hash([]byte(data)), len(data), total)
	require.NoError(t, err)

	var items []api.UnitData
	resp := f.c.Get("/api/unit_data?" + where("Slug LIKE 'bulk-%'").Encode()).Expect(http.StatusOK)
	require.Empty(t, resp.Header.Get("Service-Continue"))
	resp.JSON(&items)
	require.Len(t, items, total)
	seen := map[string]bool{}
	for _, it := range items {
		require.Equal(t, data, it.Data)
		require.Equal(t, configdata.Hash([]byte(data)), it.DataHash)
		seen[it.Slug] = true
	}
	require.Len(t, seen, total)

	// With limit, one page and its continuation.
	resp = f.c.Get("/api/unit_data?limit=100&" + where("Slug LIKE 'bulk-%'").Encode()).Expect(http.StatusOK)
	resp.JSON(&items)
	require.Len(t, items, 100)
	next := resp.Header.Get("Service-Continue")
	require.NotEmpty(t, next)
	f.c.Get("/api/unit_data?limit=100&" + where("Slug LIKE 'bulk-%'").Encode() + "&continue=" + url.QueryEscape(next)).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 100)
	f.c.Get("/api/unit_data?"+where("Nope = 1").Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// where_data applies to bulk reads too.
	f.c.Get("/api/unit_data?" + url.Values{"where_data": {"A = '1'"}}.Encode()).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, total)

	// Mutation sources of Units and data and sources of Revisions.
	real := f.create(t, "real", configdata.AppConfigEnv)
	f.put(t, real, "text/plain", "X=1\nY=2\n").Expect(http.StatusOK)
	f.put(t, real, "text/plain", "X=1\nY=3\n").Expect(http.StatusOK)
	var ums []api.UnitMutationSources
	f.c.Get("/api/unit_mutation_sources?" + where("Slug = 'real'").Encode()).Expect(http.StatusOK).JSON(&ums)
	require.Len(t, ums, 1)
	bySrc := map[string]int64{}
	for _, s := range ums[0].Sources {
		bySrc[s.Path] = s.MutationNum
	}
	require.Equal(t, map[string]int64{"X": 1, "Y": 2}, bySrc)
	var rd []api.RevisionData
	f.c.Get("/api/revision_data?distinct_on=Off&limit=10&" + where("UnitID = '"+real.UnitID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&rd)
	require.Len(t, rd, 2)
	f.c.Get("/api/revision_data?" + where("UnitID = '"+real.UnitID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&rd)
	require.Len(t, rd, 1)
	require.Equal(t, "X=1\nY=3\n", rd[0].Data)
	f.c.Get("/api/revision_data?distinct_on=Off").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	var rms []api.RevisionMutationSources
	f.c.Get("/api/revision_mutation_sources?distinct_on=Off&limit=10&" + where("UnitID = '"+real.UnitID.String()+"'").Encode() + "&order_by=RevisionNum").Expect(http.StatusOK).JSON(&rms)
	require.Len(t, rms, 2)
	require.Len(t, rms[0].Sources, 2)
	raw, _ := json.Marshal(rms[1].Sources)
	require.Contains(t, string(raw), `"MutationNum":2`)
	f.c.Get("/api/revision_mutation_sources?distinct_on=Off").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
}
