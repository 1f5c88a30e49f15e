package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/configdata"
)

// TestGuardsHoldAgainstEveryDataWrite: a guarded path is changed only with a clearance that clears its
// guards, by every write of a Unit's data: a data PUT and a restore (PATCH restore=N) are 409 Conflict
// naming the path without one, and store nothing; an invocation withholds the change (Guarded). Paths
// without guards need no clearance. No write path copies data onto an existing Unit otherwise (a clone
// makes a new Unit, which has no guards).
func TestGuardsHoldAgainstEveryDataWrite(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	u := f.unitWithData(t, "app", configdata.AppConfigYAML, "replicas: 1\nname: web\n")
	f.c.Post(f.path(u)+"/guard", map[string]any{"ResourceGuards": []any{map[string]any{
		"Resource": map[string]any{"ResourceType": "", "ResourceName": ""},
		"Set":      map[string]any{"replicas": map[string]string{"owner": "sre"}}}}}).Expect(http.StatusOK)
	clear := url.Values{"clearance": {`[{"Key": "owner", "Operator": "In", "Values": ["sre"]}]`}}
	wrong := url.Values{"clearance": {`[{"Key": "owner", "Operator": "In", "Values": ["dev"]}]`}}
	put := func(query url.Values, data string) *apitest.Response {
		p := f.path(u) + "/data"
		if len(query) > 0 {
			p += "?" + query.Encode()
		}
		return f.c.Do(http.MethodPut, p, apitest.Raw{ContentType: "text/plain", Data: []byte(data)})
	}

	// Data PUT.
	e := put(nil, "replicas: 5\nname: web\n").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Contains(t, e.Error.Message, "replicas")
	put(wrong, "replicas: 5\nname: web\n").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Contains(t, f.data(t, u), "replicas: 1")
	put(nil, "replicas: 1\nname: shop\n").Expect(http.StatusOK) // unguarded path
	put(clear, "replicas: 5\nname: shop\n").Expect(http.StatusOK)
	require.Contains(t, f.data(t, u), "replicas: 5")

	// Restore of Revision 1 (replicas: 1).
	e = f.c.Patch(f.path(u)+"?restore=1", map[string]any{}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Contains(t, e.Error.Message, "replicas")
	require.Contains(t, f.data(t, u), "replicas: 5")
	f.c.Patch(f.path(u)+"?restore=1&"+clear.Encode(), map[string]any{}).Expect(http.StatusOK)
	require.Contains(t, f.data(t, u), "replicas: 1")

	// Invoke: the change is withheld.
	res := f.invoke(t, url.Values{"where": {"Slug = 'app'"}}, http.StatusOK, invocation("set-value", "replicas", 7))
	require.Len(t, res[0].Conflicts, 1)
	require.Equal(t, api.Guarded, res[0].Conflicts[0].Reason)
	require.Contains(t, f.data(t, u), "replicas: 1")
}
