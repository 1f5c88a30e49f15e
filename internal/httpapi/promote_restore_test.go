package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/configdata"
)

// promotedThroughStaging makes ChangeOrder v2 (the fixture's workflow, Unit app), changes dev's app to
// web:2 and promotes it into dev and staging: staging's app goes from web:1 to web:2.
func promotedThroughStaging(t *testing.T, f promoteFixture) api.ChangeOrder {
	t.Helper()
	co := f.changeOrder(t, map[string]any{"Slug": "v2", "ChangeWorkflowID": f.workflow.ChangeWorkflowID, "WhereUnit": "Slug = 'app'"})
	f.putData(t, f.devApp, "image: web:2\nreplicas: 2\n")
	body := map[string]any{"ChangeOrderID": co.ChangeOrderID}
	require.Equal(t, "dev", promote(t, f.admin, "", body, http.StatusOK).Stage)
	require.Equal(t, "staging", promote(t, f.admin, "", body, http.StatusOK).Stage)
	require.Equal(t, "image: web:2\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
	return co
}

func unitPath(u api.Unit) string {
	return "/api/space/" + u.SpaceID.String() + "/unit/" + u.UnitID.String()
}

func restoreBy(co api.ChangeOrder) string { return "restore=ChangeOrder:" + co.ChangeOrderID.String() }

// TestRestoreChangeOrder: PATCH ?restore=ChangeOrder:<ID> takes staging's Unit back to its data before the
// ChangeOrder reached it; the new head carries the RestoreTag, the ChangeOrder is Restored with staging in
// RestoredSpaceIDs and cannot be promoted again. Refused: a viewer (403), a Unit the ChangeOrder never
// reached, a New ChangeOrder, another organization's or a random ChangeOrder ID, a malformed restore (400
// naming restore), restore with upgrade. A dry run writes nothing.
func TestRestoreChangeOrder(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	co := promotedThroughStaging(t, f)
	path := unitPath(f.stagingApp)

	// Refusals first: nothing is written.
	f.viewer.Patch(path+"?"+restoreBy(co), map[string]any{}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var other api.UnitCreateOrUpdateResponse
	f.admin.Post(spacePath(f.staging)+"/unit", map[string]any{"Slug": "other", "ToolchainType": configdata.AppConfigYAML}).Expect(http.StatusOK).JSON(&other)
	f.putData(t, *other.Unit, "image: other:1\n")
	e := f.admin.Patch(unitPath(*other.Unit)+"?"+restoreBy(co), map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "restore", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "never reached")
	fresh := f.changeOrder(t, map[string]any{"Slug": "v3", "ChangeWorkflowID": f.workflow.ChangeWorkflowID})
	e = f.admin.Patch(path+"?"+restoreBy(fresh), map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "restore", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "New")
	var theirs api.ChangeOrder
	f.other.Post("/api/space/"+createSpace(t, f.other, map[string]any{"Slug": "x"}).SpaceID.String()+"/change_order", map[string]any{"Slug": "v2"}).
		Expect(http.StatusOK).JSON(&theirs)
	for _, id := range []uuid.UUID{theirs.ChangeOrderID, uuid.New()} {
		e = f.admin.Patch(path+"?restore=ChangeOrder:"+id.String(), map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, "restore", e.Error.ErrorMetadata.Items[0].Item)
	}
	for _, bad := range []string{"abc", "0", "ChangeOrder:", "ChangeOrder:nope"} {
		f.admin.Patch(path+"?"+url.Values{"restore": {bad}}.Encode(), map[string]any{}).Expect(http.StatusBadRequest)
	}
	e = f.admin.Patch(path+"?upgrade=true&"+restoreBy(co), map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "upgrade", e.Error.ErrorMetadata.Items[0].Item)
	f.admin.Patch(path+"?dry_run=true&"+restoreBy(co), map[string]any{}).Expect(http.StatusOK)
	require.Equal(t, "image: web:2\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID), "refusals and a dry run write nothing")
	got := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("InProgress"), got.State)
	require.Nil(t, got.RestoreTagID)
	require.Empty(t, got.RestoredSpaceIDs)

	// The restore, with a field change in the same write.
	var res api.UnitCreateOrUpdateResponse
	f.admin.Patch(path+"?"+restoreBy(co), map[string]any{"Labels": map[string]string{"restored": "yes"}}).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, "yes", res.Unit.Labels["restored"])
	require.Equal(t, "image: web:1\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID), "the data before the ChangeOrder reached staging")
	got = f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("Restored"), got.State)
	require.Equal(t, []uuid.UUID{f.staging.SpaceID}, got.RestoredSpaceIDs)
	require.NotNil(t, got.RestoreTagID)
	tags := tagsByRevision(t, f.admin, f.stagingApp)
	require.Contains(t, tags[res.Unit.HeadRevisionNum], got.RestoreTagID.String(), "the new head carries the RestoreTag")
	var tg api.ExtendedTag
	f.admin.Get(spacePath(f.dev) + "/tag/" + got.RestoreTagID.String()).Expect(http.StatusOK).JSON(&tg)
	require.Equal(t, "v2-restore", tg.Tag.Slug)
	require.Equal(t, &co.ChangeOrderID, tg.Tag.ChangeOrderID)
	var muts []api.ExtendedMutation
	f.admin.Get(path + "/mutation?" + where("RestoredRevisionNum = 1").Encode()).Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 1, "the Mutation records the Revision restored: staging's Revision before the promotion")
	require.Equal(t, res.Unit.HeadRevisionNum, muts[0].Mutation.RevisionNum)

	// Restored: it cannot be promoted again.
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// Restoring again is a new Revision with the same data, tagged too; the ChangeOrder keeps one RestoreTag.
	var again api.UnitCreateOrUpdateResponse
	f.admin.Patch(path+"?"+restoreBy(co), map[string]any{}).Expect(http.StatusOK).JSON(&again)
	require.Equal(t, res.Unit.HeadRevisionNum+1, again.Unit.HeadRevisionNum)
	require.Equal(t, "image: web:1\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
	require.Equal(t, got.RestoreTagID, f.readChangeOrder(t, co).RestoreTagID)

	// A RevisionNum still restores as before (as a string now): staging's app back to web:2.
	var byNum api.UnitCreateOrUpdateResponse
	f.admin.Patch(path+"?restore=2", map[string]any{}).Expect(http.StatusOK).JSON(&byNum)
	require.Equal(t, "image: web:2\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
	require.Equal(t, api.ChangeOrderState("Restored"), f.readChangeOrder(t, co).State)
}

// TestBulkRestoreChangeOrder: bulk PATCH /unit?restore=ChangeOrder:<ID> restores the Units the ChangeOrder
// reached in dev and staging (207: a Unit it never reached fails alone, 400 naming restore); the
// ChangeOrder is Restored with both Spaces. A viewer is 403; a RevisionNum restores in bulk too; a
// random ChangeOrder fails the whole request.
func TestBulkRestoreChangeOrder(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	co := promotedThroughStaging(t, f)
	var other api.UnitCreateOrUpdateResponse
	f.admin.Post(spacePath(f.staging)+"/unit", map[string]any{"Slug": "other", "ToolchainType": configdata.AppConfigYAML}).Expect(http.StatusOK).JSON(&other)
	f.putData(t, *other.Unit, "image: other:1\n")
	sel := where("Slug IN ('app', 'other')").Encode() + "&order_by=Slug"

	f.admin.Patch("/api/unit?"+sel+"&restore=ChangeOrder:"+uuid.New().String(), map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var items []api.UnitCreateOrUpdateResponse
	f.viewer.Patch("/api/unit?"+sel+"&"+restoreBy(co), map[string]any{}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Equal(t, api.ChangeOrderState("InProgress"), f.readChangeOrder(t, co).State)

	f.admin.Patch("/api/unit?"+sel+"&"+restoreBy(co), map[string]any{}).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 3)
	failed := 0
	for _, it := range items {
		if it.Error != nil {
			failed++
			require.Equal(t, api.ErrorTypeValidation, it.Error.Type)
			require.Equal(t, http.StatusBadRequest, it.Error.Status)
			require.Equal(t, "restore", it.Error.ErrorMetadata.Items[0].Item)
			continue
		}
		require.Equal(t, "app", it.Unit.Slug)
	}
	require.Equal(t, 1, failed, "the Unit the ChangeOrder never reached")
	require.Equal(t, "image: web:1\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
	// dev's Unit was marked (its head then carried both Tags): it keeps the data it had then.
	require.Equal(t, "image: web:2\nreplicas: 2\n", f.data(t, f.dev.SpaceID, f.devApp.UnitID))
	require.Equal(t, "image: other:1\n", f.data(t, f.staging.SpaceID, other.Unit.UnitID))
	got := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("Restored"), got.State)
	require.ElementsMatch(t, []uuid.UUID{f.dev.SpaceID, f.staging.SpaceID}, got.RestoredSpaceIDs)
	require.NotNil(t, got.RestoreTagID)
	for _, u := range []api.Unit{f.devApp, f.stagingApp} {
		var revs []api.ExtendedRevision
		f.admin.Get(unitPath(u) + "/revision?" + where("Source = 'Restore'").Encode()).Expect(http.StatusOK).JSON(&revs)
		require.Len(t, revs, 1, u.SpaceID)
		require.Contains(t, revs[0].Revision.Tags, got.RestoreTagID.String())
	}
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// A RevisionNum in bulk: every selected Unit's Revision 1.
	f.admin.Patch("/api/unit?"+sel+"&restore=1", map[string]any{}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 3)
	require.Equal(t, "image: web:1\nreplicas: 2\n", f.data(t, f.dev.SpaceID, f.devApp.UnitID))
}
