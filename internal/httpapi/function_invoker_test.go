package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// TestInvokeNeedsEdit: invoking needs Edit, as the document says, by role or by a grant on the Space or
// one of its Units; a viewer granted nothing is refused before it takes one of the organization's invoke
// slots, even for a read-only function. A caller who may invoke still needs View on each Unit a reading
// function runs on and Edit on each a mutating one does.
func TestInvokeNeedsEdit(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	a := f.unitWithData(t, "a", configdata.AppConfigEnv, "A=1\n")
	b := f.unitWithData(t, "b", configdata.AppConfigEnv, "A=2\n")
	viewerID := f.env.Principal("acme", "vic", auth.RoleViewer).UserID
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	all := url.Values{"where": {"Slug IN ('a', 'b')"}}
	get := map[string]any{"FunctionInvocations": []any{invocation("get-value", "A")}}
	set := map[string]any{"FunctionInvocations": []any{invocation("set-value", "A", "9")}}

	// A viewer granted nothing: refused, read-only or not, on the Space's path and the organization's.
	viewer.Post(f.invokePath(all), get).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Post("/api/function/invoke?"+all.Encode(), get).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Post(f.invokePath(all), set).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Granted Edit on Unit a: the viewer may invoke; reading runs on both Units it views, writing only
	// on a (b fails alone, 207).
	grant := map[string]any{"Edit": map[string]any{"UserIDs": map[string]bool{viewerID.String(): true}}}
	f.c.Patch(f.path(a), map[string]any{"Permissions": grant}).Expect(http.StatusOK)
	var got []api.FunctionInvocationsResponse
	viewer.Post(f.invokePath(all), get).Expect(http.StatusOK).JSON(&got)
	require.Len(t, got, 2)
	viewer.Post(f.invokePath(all), set).Expect(http.StatusMultiStatus).JSON(&got)
	require.Len(t, got, 2)
	for _, r := range got {
		if r.UnitID == a.UnitID {
			require.Nil(t, r.Error)
		} else {
			require.Equal(t, b.UnitID, r.UnitID)
			require.NotNil(t, r.Error)
			require.Equal(t, api.ErrorTypePermission, r.Error.Type)
		}
	}
}
