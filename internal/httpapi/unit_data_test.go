package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// TestDataWithNonFiniteNumbers: infinity and NaN have no JSON form, so where_data, mutation sources and
// diffs could not see them: data holding one is refused like unparseable data, and nothing is stored.
func TestDataWithNonFiniteNumbers(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	cases := []struct{ toolchain, data, item string }{
		{configdata.AppConfigTOML, "a = 1\nlimit = inf\n", "data"},
		{configdata.AppConfigYAML, "a: 1\nlimit: .nan\n", "line 2"},
		{configdata.AppConfigJSON, `{"limit": 1e999}`, "data"},
	}
	for i, c := range cases {
		u := f.create(t, "u"+string(rune('a'+i)), c.toolchain)
		e := f.put(t, u, "text/plain", c.data).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
		require.Contains(t, e.Error.Message, "limit", c.data)
		require.Equal(t, c.item, e.Error.ErrorMetadata.Items[0].Item, c.data)
		var got api.ExtendedUnit
		f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&got)
		require.Equal(t, u.UnitID, got.Unit.UnitID)
		require.Equal(t, int64(0), got.Unit.HeadRevisionNum, "nothing stored")
	}
	// The same data, finite, is stored and found by where_data.
	u := f.create(t, "finite", configdata.AppConfigTOML)
	f.put(t, u, "text/plain", "limit = 1e300\n").Expect(http.StatusOK)
	var units []api.ExtendedUnit
	f.c.Get(f.unitsPath() + "?" + url.Values{"where_data": {"limit > 1"}}.Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
}

// TestMalformedDataRefused: for every ToolchainType, data that does not parse (for Env: lines that are
// not assignments, such as "no equals here", a bare "export" or "=v") is 400 Data naming its line, and
// nothing is stored: the Unit keeps its head Revision, DataHash and data.
func TestMalformedDataRefused(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	type malformed struct {
		data string
		line int
	}
	cases := []struct {
		toolchain, valid string
		malformed        []malformed
	}{
		{configdata.KubernetesYAML, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", []malformed{
			{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n", 4},
			{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n- not a resource\n", 6},
		}},
		{configdata.AppConfigProperties, "a=1\n", []malformed{{"a=1\nb=\\u12\n", 2}, {"a=1\n=v\n", 2}}},
		{configdata.AppConfigYAML, "a: 1\n", []malformed{{"a: 1\nb: 'open\n", 2}, {"a: 1\nb: 2\n- c\n", 3}}},
		{configdata.AppConfigTOML, "a = 1\n", []malformed{{"a = 1\n[b\n", 2}}},
		{configdata.AppConfigINI, "a = 1\n", []malformed{{"a = 1\nno equals here\n", 2}, {"a = 1\n[]\n", 2}}},
		{configdata.AppConfigJSON, `{"a": 1}`, []malformed{{"{\n  \"a\": 1,\n}", 3}}},
		{configdata.AppConfigEnv, "A=1\n", []malformed{
			{"A=1\nno equals here\n", 2},
			{"A=1\nexport\n", 2},
			{"A=1\n=v\n", 2},
			{"# c\nA=1\n\n1BAD KEY=x\n", 4},
			{"A=1\nB='open\n", 2},
		}},
		{configdata.AppConfigText, "hello\n", []malformed{{"hello\ncaf\xe9\n", 2}}},
	}
	require.Len(t, cases, len(configdata.ToolchainTypes))
	for i, c := range cases {
		u := f.create(t, "u"+string(rune('a'+i)), c.toolchain)
		f.put(t, u, "text/plain", c.valid).Expect(http.StatusOK)
		var before api.ExtendedUnit
		f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&before)
		require.Equal(t, int64(1), before.Unit.HeadRevisionNum, c.toolchain)
		for _, m := range c.malformed {
			e := f.put(t, u, "text/plain", m.data).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
			line := fmt.Sprintf("line %d", m.line)
			require.Contains(t, e.Error.Message, c.toolchain+": "+line+": ", "%s %q", c.toolchain, m.data)
			require.Len(t, e.Error.ErrorMetadata.Items, 1)
			require.Equal(t, line, e.Error.ErrorMetadata.Items[0].Item, "%s %q: %s", c.toolchain, m.data, e.Error.Message)
			require.NotEmpty(t, e.Error.ErrorMetadata.Items[0].Description)

			var after api.ExtendedUnit
			f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&after)
			require.Equal(t, before.Unit.HeadRevisionNum, after.Unit.HeadRevisionNum, "nothing stored: %s %q", c.toolchain, m.data)
			require.Equal(t, before.Unit.DataHash, after.Unit.DataHash, "nothing stored: %s %q", c.toolchain, m.data)
			require.Equal(t, before.Unit.Version, after.Unit.Version, "nothing stored: %s %q", c.toolchain, m.data)
			require.Equal(t, c.valid, string(f.c.Get(f.path(u)+"/data").Expect(http.StatusOK).Body))
		}
	}
}

// TestDataMustBeUTF8: data in another encoding is refused for every ToolchainType (served inside JSON
// it would be mangled), naming its line; UTF-8 data comes back byte for byte, also from /unit_data.
func TestDataMustBeUTF8(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	for i, c := range []struct{ toolchain, data string }{
		{configdata.AppConfigJSON, "{\"a\": 1,\n\"name\": \"caf\xe9\"}"},
		{configdata.AppConfigYAML, "a: 1\nname: caf\xe9\n"},
		{configdata.AppConfigINI, "a = 1\nname = caf\xe9\n"},
	} {
		u := f.create(t, "u"+string(rune('a'+i)), c.toolchain)
		e := f.put(t, u, "text/plain", c.data).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
		require.Equal(t, "line 2", e.Error.ErrorMetadata.Items[0].Item, c.toolchain)
		require.Contains(t, e.Error.Message, "UTF-8", c.toolchain)
		good := strings.ReplaceAll(c.data, "\xe9", "é")
		f.put(t, u, "text/plain", good).Expect(http.StatusOK)
		require.Equal(t, good, string(f.c.Get(f.path(u)+"/data").Expect(http.StatusOK).Body))
	}
}

// TestIfMatchIsStrong: If-Match compares strongly (RFC 9110): a weak tag never matches, even naming the
// DataHash; quoted, bare, listed and * do. If-None-Match stays weak.
func TestIfMatchIsStrong(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, u, "text/plain", "A=1\n").Expect(http.StatusOK)
	hash := configdata.Hash([]byte("A=1\n"))
	f.put(t, u, "text/plain", "A=2\n", apitest.WithHeader("If-Match", `W/"`+hash+`"`)).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.put(t, u, "text/plain", "A=2\n", apitest.WithHeader("If-Match", `W/"other", W/"`+hash+`"`)).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Equal(t, "A=1\n", string(f.c.Get(f.path(u)+"/data").Expect(http.StatusOK).Body), "nothing written")
	h := func(d string) string { return configdata.Hash([]byte(d)) }
	for _, w := range []struct{ ifMatch, data string }{
		{`"` + h("A=1\n") + `"`, "A=2\n"},
		{"*", "A=3\n"},
		{`W/"x", "other", "` + h("A=3\n") + `"`, "A=4\n"},
		{h("A=4\n"), "A=5\n"},
	} {
		f.put(t, u, "text/plain", w.data, apitest.WithHeader("If-Match", w.ifMatch)).Expect(http.StatusOK)
	}
	f.c.Get(f.path(u)+"/data", apitest.WithHeader("If-None-Match", `W/"`+configdata.Hash([]byte("A=5\n"))+`"`)).Expect(http.StatusNotModified)

	// Data is sent whole, with its length (also when larger than what net/http measures by itself).
	large := "A=" + strings.Repeat("x", 10_000) + "\n"
	f.put(t, u, "text/plain", large).Expect(http.StatusOK)
	resp := f.c.Get(f.path(u) + "/data").Expect(http.StatusOK)
	require.Equal(t, large, string(resp.Body))
	require.Equal(t, strconv.Itoa(len(large)), resp.Header.Get("Content-Length"))
	require.Equal(t, `"`+h(large)+`"`, resp.Header.Get("ETag"))
}

// TestDataWithDuplicateKeys: JSON naming a key twice is refused like YAML and TOML, and the YAML message
// says where the key was first defined.
func TestDataWithDuplicateKeys(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	j := f.create(t, "j", configdata.AppConfigJSON)
	e := f.put(t, j, "application/json", "{\"replicas\": 1,\n \"replicas\": 2}").ExpectError(http.StatusBadRequest, api.ErrorTypeData)
	require.Equal(t, "line 2", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, `key "replicas" of the top-level object is defined twice (first at line 1)`)
	y := f.create(t, "y", configdata.AppConfigYAML)
	e = f.put(t, y, "application/yaml", "replicas: 1\nname: x\nreplicas: 2\n").ExpectError(http.StatusBadRequest, api.ErrorTypeData)
	require.Equal(t, "line 3", e.Error.ErrorMetadata.Items[0].Item)
	require.Equal(t, `mapping key "replicas" already defined at line 1`, e.Error.ErrorMetadata.Items[0].Description)
}

// TestPatchWithRestoreIsOneWrite: PATCH ?restore=N changes the fields and restores the data as one
// write: Version goes up by one and one unit.updated event (with the new RevisionNum) is emitted.
func TestPatchWithRestoreIsOneWrite(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, u, "text/plain", "A=1\n").Expect(http.StatusOK)
	var res api.UnitCreateOrUpdateResponse
	f.put(t, u, "text/plain", "A=2\n").Expect(http.StatusOK).JSON(&res)
	before := res.Unit.Version
	ctx := context.Background()
	log := f.env.App.Store.Events
	start, err := log.Tail(ctx)
	require.NoError(t, err)

	for i, patch := range []map[string]any{{"DisplayName": "restored"}, {}} {
		f.c.Patch(f.path(u)+"?restore=1", patch).Expect(http.StatusOK).JSON(&res)
		require.Equal(t, before+int64(i)+1, res.Unit.Version, "one write, one Version")
		require.Equal(t, "restored", res.Unit.DisplayName)
		require.Equal(t, configdata.Hash([]byte("A=1\n")), res.Unit.DataHash)
	}
	var got api.ExtendedUnit
	f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, res.Unit.Version, got.Unit.Version)

	entries, err := log.Read(ctx, f.env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID, start, 100)
	require.NoError(t, err)
	require.Len(t, entries, 2, "one event per write")
	for i, e := range entries {
		require.Equal(t, "unit.updated", e.EventType)
		var payload map[string]any
		require.NoError(t, json.Unmarshal(e.Payload, &payload))
		require.EqualValues(t, 3+i, payload["RevisionNum"])
		require.EqualValues(t, before+int64(i)+1, payload["Version"])
	}
	// A PATCH without restore still bumps Version once, with its own event.
	f.c.Patch(f.path(u), map[string]any{"DisplayName": "plain"}).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, before+3, res.Unit.Version)
}

// TestDataAsJSONString: clients that encode every body as JSON upload text as one JSON string with media
// type application/json; the string's text is the data of every ToolchainType but AppConfig/JSON, whose
// data is the JSON document itself. A JSON object is data as written; a broken string is 400 Data.
func TestDataAsJSONString(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	yamlText := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for i, c := range []struct{ toolchain, body, want string }{
		{configdata.KubernetesYAML, quoted(yamlText), yamlText},
		{configdata.AppConfigTOML, " " + quoted("port = 8080\n"), "port = 8080\n"},
		{configdata.AppConfigEnv, quoted("A=1\n"), "A=1\n"},
		{configdata.AppConfigJSON, `"just a string"`, `"just a string"`},
		{configdata.AppConfigYAML, `{"a": 1}`, `{"a": 1}`},
	} {
		u := f.create(t, "s"+string(rune('a'+i)), c.toolchain)
		f.put(t, u, "application/json; charset=utf-8", c.body).Expect(http.StatusOK)
		require.Equal(t, c.want, string(f.c.Get(f.path(u)+"/data").Expect(http.StatusOK).Body), c.toolchain)
	}
	u := f.create(t, "broken", configdata.AppConfigEnv)
	e := f.put(t, u, "application/json", `"A=1`).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
	require.Contains(t, e.Error.Message, "one JSON string")
	// As text/plain a body is data as written, quote included: JSON-string unwrapping is for JSON only.
	f.put(t, u, "text/plain", quoted("A=1\n")).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
}
