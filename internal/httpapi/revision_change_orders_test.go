package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// revisionsWithChangeOrders are a Unit's Revisions with include=ChangeOrders, by RevisionNum.
func revisionsWithChangeOrders(t *testing.T, c *apitest.Client, u api.Unit) map[int64]api.ExtendedRevision {
	t.Helper()
	var revs []api.ExtendedRevision
	c.Get("/api/space/" + u.SpaceID.String() + "/unit/" + u.UnitID.String() + "/revision?include=ChangeOrders").Expect(http.StatusOK).JSON(&revs)
	out := map[int64]api.ExtendedRevision{}
	for _, r := range revs {
		require.NotNil(t, r.ChangeOrders, "included, the list is never null")
		out[r.Revision.RevisionNum] = r
	}
	return out
}

// TestRevisionChangeOrders: include=ChangeOrders on a Unit's Revisions (list, get, list-all) names the
// ChangeOrders whose start or end Tag is on each Revision: after a promotion into staging, the staging Unit's
// Revision before the change has the ChangeOrder as Start, its new head as End (both Tags on one Revision:
// "Start,End"); Revision.ChangeOrders says so by ChangeOrderID and ExtendedRevision.ChangeOrders lists them.
// Without the include, Revision.ChangeOrders is {} and the list null; a caller who may not view the
// ChangeOrder does not see it.
func TestRevisionChangeOrders(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	c := f.admin
	co := f.changeOrder(t, map[string]any{"Slug": "v2", "ChangeWorkflowID": f.workflow.ChangeWorkflowID, "WhereUnit": "Slug = 'app'"})
	body := map[string]any{"ChangeOrderID": co.ChangeOrderID}
	f.putData(t, f.devApp, "image: web:2\nreplicas: 2\n")
	promote(t, c, "", body, http.StatusOK) // dev: marked
	r := promote(t, c, "", body, http.StatusOK)
	require.Equal(t, "staging", r.Stage)
	u := r.Spaces[0].Units[0]
	require.Equal(t, api.UnitUpgrade, u.Action)
	id := co.ChangeOrderID.String()

	revs := revisionsWithChangeOrders(t, c, f.stagingApp)
	before, head := revs[u.PreviousHeadRevisionNum], revs[u.HeadRevisionNum]
	require.Equal(t, map[string]string{id: "Start"}, before.Revision.ChangeOrders)
	require.Equal(t, map[string]string{id: "End"}, head.Revision.ChangeOrders)
	for _, rev := range []api.ExtendedRevision{before, head} {
		require.Len(t, *rev.ChangeOrders, 1)
		require.Equal(t, co.ChangeOrderID, (*rev.ChangeOrders)[0].ChangeOrderID)
		require.Equal(t, "v2", (*rev.ChangeOrders)[0].Slug)
	}
	for num, rev := range revs {
		if num != u.PreviousHeadRevisionNum && num != u.HeadRevisionNum {
			require.Empty(t, rev.Revision.ChangeOrders, "Revision %d", num)
			require.Empty(t, *rev.ChangeOrders, "Revision %d", num)
		}
	}
	devHead := revisionsWithChangeOrders(t, c, f.devApp)[2]
	require.Contains(t, devHead.Revision.ChangeOrders[id], "End", "dev's head got the end Tag")

	// Without the include: {} and null.
	revPath := "/api/space/" + f.staging.SpaceID.String() + "/unit/" + f.stagingApp.UnitID.String() + "/revision/" + head.Revision.RevisionID.String()
	var plain api.ExtendedRevision
	c.Get(revPath).Expect(http.StatusOK).JSON(&plain)
	require.Empty(t, plain.Revision.ChangeOrders)
	require.Nil(t, plain.ChangeOrders)

	// Get and list-all say the same.
	var got api.ExtendedRevision
	c.Get(revPath + "?include=ChangeOrders").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, head.Revision.ChangeOrders, got.Revision.ChangeOrders)
	require.Equal(t, *head.ChangeOrders, *got.ChangeOrders)
	var all []api.ExtendedRevision
	c.Get("/api/revision?distinct_on=Off&limit=100&include=ChangeOrders&" + where("UnitID = '"+f.stagingApp.UnitID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&all)
	require.Len(t, all, len(revs))
	for _, rev := range all {
		require.Equal(t, revs[rev.Revision.RevisionNum].Revision.ChangeOrders, rev.Revision.ChangeOrders)
	}

	// Both Tags on one Revision: "Start,End".
	c.Post("/api/unit/tag?"+where("UnitID = '"+f.stagingApp.UnitID.String()+"'").Encode(), map[string]any{"TagID": co.StartTagID}).Expect(http.StatusOK)
	c.Get(revPath + "?include=ChangeOrders").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, map[string]string{id: "Start,End"}, got.Revision.ChangeOrders)
	require.Len(t, *got.ChangeOrders, 1)

	// A guest who may view staging but not the ChangeOrder (in dev) sees no ChangeOrder on the Revisions.
	guest := f.env.Principal("acme", "gil", auth.RoleGuest)
	grant := map[string]any{"UserIDs": map[string]bool{guest.UserID.String(): true}}
	c.Patch(spacePath(f.staging), map[string]any{"Permissions": map[string]any{"View": grant}}).Expect(http.StatusOK)
	gil := f.env.Client(f.env.Token("acme", "gil", auth.RoleGuest))
	for num, rev := range revisionsWithChangeOrders(t, gil, f.stagingApp) {
		require.Empty(t, rev.Revision.ChangeOrders, "Revision %d", num)
		require.Empty(t, *rev.ChangeOrders, "Revision %d", num)
	}
	// Granted the ChangeOrder's Space, it sees it.
	c.Patch(spacePath(f.dev), map[string]any{"Permissions": map[string]any{"View": grant}}).Expect(http.StatusOK)
	require.Equal(t, map[string]string{id: "Start,End"}, revisionsWithChangeOrders(t, gil, f.stagingApp)[u.HeadRevisionNum].Revision.ChangeOrders)
}
