package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/configdata"
)

// TestMediaTypesAreCaseInsensitive: a PATCH whose Content-Type is spelled in another case is the same
// media type (RFC 9110): it is applied, never answered with a failure to bind the body.
func TestMediaTypesAreCaseInsensitive(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	web := f.create(t, "web", configdata.AppConfigEnv)
	sp := "/api/space/" + f.space.SpaceID.String()
	var target api.Target
	c.Post(sp+"/target", map[string]any{"Slug": "envs", "ToolchainType": configdata.AppConfigEnv, "ProviderType": "ArgoCDOCI"}).Expect(http.StatusOK).JSON(&target)
	var tag api.Tag
	c.Post(sp+"/tag", map[string]any{"Slug": "rel"}).Expect(http.StatusOK).JSON(&tag)

	patch := []byte(`{"DisplayName":"Mixed case"}`)
	for _, ct := range []string{"Application/JSON", "APPLICATION/MERGE-PATCH+JSON; charset=UTF-8", " application/Merge-Patch+Json"} {
		for _, path := range []string{sp, sp + "/target/" + target.TargetID.String(), sp + "/tag/" + tag.TagID.String()} {
			m := c.Do(http.MethodPatch, path, apitest.Raw{ContentType: ct, Data: patch}).Expect(http.StatusOK).Map()
			require.Equal(t, "Mixed case", m["DisplayName"], "%s %s", ct, path)
		}
		var res api.UnitCreateOrUpdateResponse
		c.Do(http.MethodPatch, f.path(web), apitest.Raw{ContentType: ct, Data: patch}).Expect(http.StatusOK).JSON(&res)
		require.Equal(t, "Mixed case", res.Unit.DisplayName, ct)
		c.Do(http.MethodPatch, "/api/unit?"+where("Slug = 'web'").Encode(), apitest.Raw{ContentType: ct, Data: patch}).Expect(http.StatusOK)
	}
}

// TestDataTakesAnyContentType: configuration data is raw bytes whatever the Content-Type says, even
// none or one that does not parse.
func TestDataTakesAnyContentType(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.AppConfigEnv)
	for i, ct := range []string{"", "text/plain; charset", "not a media type", "application/x-whatever"} {
		data := fmt.Sprintf("A=%d\n", i)
		var res api.UnitCreateOrUpdateResponse
		f.put(t, u, ct, data).Expect(http.StatusOK).JSON(&res)
		require.Equal(t, configdata.Hash([]byte(data)), res.Unit.DataHash, "Content-Type %q", ct)
	}
	resp := f.c.Get(f.path(u) + "/data").Expect(http.StatusOK)
	require.Equal(t, "A=3\n", string(resp.Body))
}
