package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/configdata"
)

// releaseTarget gives Space s a Target of YAML configuration (and assigns the Units to it); it returns the
// Space's publish path.
func (f promoteFixture) releaseTarget(t *testing.T, s api.Space, units ...api.Unit) (string, api.Target) {
	t.Helper()
	var tg api.Target
	f.admin.Post(spacePath(s)+"/target", map[string]any{"Slug": "deploy", "ToolchainType": configdata.AppConfigYAML, "ProviderType": "FluxOCI"}).
		Expect(http.StatusOK).JSON(&tg)
	for _, u := range units {
		f.admin.Patch(spacePath(s)+"/unit/"+u.UnitID.String(), map[string]any{"TargetID": tg.TargetID}).Expect(http.StatusOK)
	}
	return spacePath(s) + "/release", tg
}

// changeOrderEvents counts the changeorder.updated events of ChangeOrder id at Version version.
func (f promoteFixture) changeOrderEvents(t *testing.T, id uuid.UUID, version int64) int {
	t.Helper()
	var n int
	require.NoError(t, f.env.App.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM event_log
		WHERE subject_entity_id = $1 AND event_type = 'changeorder.updated' AND (payload->>'Version')::bigint = $2`, id, version).Scan(&n))
	return n
}

// TestReleaseChangeOrder: a Release of staging naming a ChangeOrder promoted into staging records it
// (Release.ChangeOrderID), adds staging to the ChangeOrder's ReleasedSpaceIDs and, the ChangeOrder being
// Resolved with every Space it resolved released, makes it Released (changeorder.updated). A ChangeOrder not
// promoted into the Space, another organization's, a random ID and an Aborted one are 400 naming
// ChangeOrderID.
func TestReleaseChangeOrder(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	publish, tg := f.releaseTarget(t, f.staging, f.stagingApp)
	prodPublish, prodTarget := f.releaseTarget(t, f.prod)

	co := f.changeOrder(t, map[string]any{"Slug": "v2", "WhereSpace": "Labels.env = 'staging'", "WhereUnit": "Slug = 'app'"})
	aborted := f.changeOrder(t, map[string]any{"Slug": "dropped", "WhereSpace": "Labels.env = 'staging'"})
	f.putData(t, f.devApp, "image: web:2\nreplicas: 2\n")
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": co.ChangeOrderID}, http.StatusOK)
	got := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("Resolved"), got.State)
	require.Equal(t, []uuid.UUID{f.staging.SpaceID}, got.ResolvedSpaceIDs)
	require.Empty(t, got.ReleasedSpaceIDs)

	// Refusals, each 400 naming ChangeOrderID, nothing stored.
	for _, tc := range []struct {
		name     string
		path     string
		body     map[string]any
		contains string
	}{
		{"not promoted into prod", prodPublish, map[string]any{"TargetID": prodTarget.TargetID, "ChangeOrderID": co.ChangeOrderID}, "has not been promoted into this Space"},
		{"a random ID", publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": uuid.New()}, "ChangeOrderID"},
		{"New (never promoted)", publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": aborted.ChangeOrderID}, "New"},
	} {
		e := f.admin.Post(tc.path, tc.body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message, tc.contains, tc.name)
		require.Equal(t, "ChangeOrderID", e.Error.ErrorMetadata.Items[0].Item, tc.name)
	}
	f.admin.Patch(spacePath(f.dev)+"/change_order/"+aborted.ChangeOrderID.String(), map[string]any{"AbortedReason": "superseded"}).Expect(http.StatusOK)
	e := f.admin.Post(publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": aborted.ChangeOrderID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "Aborted")
	require.Equal(t, "ChangeOrderID", e.Error.ErrorMetadata.Items[0].Item)

	// Another organization's ChangeOrder is as a random ID.
	otherSpace := createSpace(t, f.other, map[string]any{"Slug": "elsewhere"})
	var otherTarget api.Target
	f.other.Post(spacePath(otherSpace)+"/target", map[string]any{"Slug": "t", "ToolchainType": configdata.AppConfigYAML, "ProviderType": "FluxOCI"}).
		Expect(http.StatusOK).JSON(&otherTarget)
	e = f.other.Post(spacePath(otherSpace)+"/release", map[string]any{"TargetID": otherTarget.TargetID, "ChangeOrderID": co.ChangeOrderID}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ChangeOrderID", e.Error.ErrorMetadata.Items[0].Item)
	var none []api.ExtendedRelease
	f.admin.Get(publish).Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none, "a refused publish stores nothing")
	require.Equal(t, got.Version, f.readChangeOrder(t, co).Version, "a refused publish leaves the ChangeOrder")

	// The publish: the Release names the ChangeOrder, which is Released in staging.
	var rel api.Release
	f.admin.Post(publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": co.ChangeOrderID}).Expect(http.StatusOK).JSON(&rel)
	require.NotNil(t, rel.ChangeOrderID)
	require.Equal(t, co.ChangeOrderID, *rel.ChangeOrderID)
	require.Equal(t, int64(1), rel.UnitCount)
	var read api.ExtendedRelease
	f.admin.Get(publish + "/" + rel.ReleaseID.String()).Expect(http.StatusOK).JSON(&read)
	require.Equal(t, co.ChangeOrderID, *read.Release.ChangeOrderID)
	released := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("Released"), released.State)
	require.Equal(t, []uuid.UUID{f.staging.SpaceID}, released.ReleasedSpaceIDs)
	require.Equal(t, got.ResolvedSpaceIDs, released.ResolvedSpaceIDs)
	require.Greater(t, released.Version, got.Version)
	require.Eventually(t, func() bool { return f.changeOrderEvents(t, co.ChangeOrderID, released.Version) == 1 }, 10*time.Second, 50*time.Millisecond,
		"the publish emits changeorder.updated")

	// Listing Releases by ChangeOrderID finds it.
	var listed []api.ExtendedRelease
	f.admin.Get(publish + "?" + where("ChangeOrderID = '"+co.ChangeOrderID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)

	// Releasing it again in staging changes nothing on the ChangeOrder.
	f.admin.Post(publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": co.ChangeOrderID}).Expect(http.StatusOK)
	again := f.readChangeOrder(t, co)
	require.Equal(t, released.Version, again.Version)
	require.Equal(t, []uuid.UUID{f.staging.SpaceID}, again.ReleasedSpaceIDs)

	// A Restored ChangeOrder (no operation restores yet: set as a restore would) released in the Space it was
	// restored in becomes RestoreReleased; a Space it was not restored in is refused.
	_, err := f.env.App.Store.Pool.Exec(context.Background(), `UPDATE change_order SET state = 'Restored', restored_space_ids = $2
		WHERE change_order_id = $1`, co.ChangeOrderID, []uuid.UUID{f.staging.SpaceID})
	require.NoError(t, err)
	e = f.admin.Post(prodPublish, map[string]any{"TargetID": prodTarget.TargetID, "ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "restored in")
	f.admin.Post(publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": co.ChangeOrderID}).Expect(http.StatusOK)
	restored := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("RestoreReleased"), restored.State)
	require.Equal(t, []uuid.UUID{f.staging.SpaceID}, restored.ReleasedRestoredSpaceIDs)
	require.Equal(t, []uuid.UUID{f.staging.SpaceID}, restored.ReleasedSpaceIDs, "ReleasedSpaceIDs stay")

	// Releases keep the ChangeOrder they publish: deleting it is 409.
	f.admin.Delete(spacePath(f.dev)+"/change_order/"+co.ChangeOrderID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
}

// TestReleaseComponentPolicy: a Release of a Variant of a Component requiring a ChangeWorkflow is refused
// (422, the error's Items naming ChangeOrderID) without a ChangeOrder, with a ChangeOrder whose workflow the
// Component does not allow, and accepted with one it allows; the ChangeOrder, InProgress, keeps its State
// and gains the Space in ReleasedSpaceIDs.
func TestReleaseComponentPolicy(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	publish, tg := f.releaseTarget(t, f.staging, f.stagingApp)

	// Promoted into staging with a workflow the Component will not allow, before staging is its Variant.
	var other api.ChangeWorkflow
	f.admin.Post(spacePath(f.dev)+"/change_workflow", map[string]any{"Slug": "other", "Stages": []any{
		map[string]any{"Name": "staging", "WhereSpace": "Labels.env = 'staging'"}, map[string]any{"Name": "prod", "WhereSpace": "Labels.env = 'prod'"}}}).
		Expect(http.StatusOK).JSON(&other)
	otherCO := f.changeOrder(t, map[string]any{"Slug": "other", "ChangeWorkflowID": other.ChangeWorkflowID, "WhereUnit": "Slug = 'app'"})
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": otherCO.ChangeOrderID}, http.StatusOK)
	require.Contains(t, f.readChangeOrder(t, otherCO).ResolvedSpaceIDs, f.staging.SpaceID)
	plain := f.changeOrder(t, map[string]any{"Slug": "plain", "WhereSpace": "Labels.env = 'staging'", "WhereUnit": "Slug = 'app'"})
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": plain.ChangeOrderID}, http.StatusOK)

	var comp api.Component
	f.admin.Post("/api/component", map[string]any{"Slug": "web", "ChangeWorkflowRequired": true,
		"AllowedChangeWorkflowIDs": []uuid.UUID{f.workflow.ChangeWorkflowID}}).Expect(http.StatusOK).JSON(&comp)
	f.admin.Patch(spacePath(f.staging), map[string]any{"ComponentID": comp.ComponentID}).Expect(http.StatusOK)

	refusedBy := func(body map[string]any, contains string) {
		t.Helper()
		var r api.ReleasePublishResponse
		f.admin.Post(publish, body).Expect(http.StatusUnprocessableEntity).JSON(&r)
		require.NotNil(t, r.Error)
		require.Equal(t, api.ErrorTypeUnprocessable, r.Error.Type)
		require.Empty(t, r.Gates)
		require.Contains(t, r.Error.Message, "web")
		require.Len(t, r.Error.ErrorMetadata.Items, 1)
		require.Equal(t, "ChangeOrderID", r.Error.ErrorMetadata.Items[0].Item)
		require.Contains(t, r.Error.ErrorMetadata.Items[0].Description, contains)
	}
	refusedBy(map[string]any{"TargetID": tg.TargetID}, "requires a ChangeWorkflow")
	refusedBy(map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": plain.ChangeOrderID}, "requires a ChangeWorkflow")
	refusedBy(map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": otherCO.ChangeOrderID}, "does not allow")
	var none []api.ExtendedRelease
	f.admin.Get(publish).Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none, "a refused publish stores nothing")

	// A ChangeOrder of the allowed workflow, promoted dev → staging: the publish passes.
	co := f.changeOrder(t, map[string]any{"Slug": "ship", "ChangeWorkflowID": f.workflow.ChangeWorkflowID, "WhereUnit": "Slug = 'app'"})
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": co.ChangeOrderID}, http.StatusOK)
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": co.ChangeOrderID}, http.StatusOK)
	before := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("InProgress"), before.State)
	var rel api.Release
	f.admin.Post(publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": co.ChangeOrderID}).Expect(http.StatusOK).JSON(&rel)
	require.Equal(t, co.ChangeOrderID, *rel.ChangeOrderID)
	after := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("InProgress"), after.State, "an InProgress ChangeOrder stays InProgress")
	require.Equal(t, []uuid.UUID{f.staging.SpaceID}, after.ReleasedSpaceIDs)

	// A viewer may not publish; staging stops being a Variant and a publish without a ChangeOrder passes.
	f.viewer.Post(publish, map[string]any{"TargetID": tg.TargetID, "ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	f.admin.Patch(spacePath(f.staging), map[string]any{"ComponentID": nil}).Expect(http.StatusOK)
	f.admin.Post(publish, map[string]any{"TargetID": tg.TargetID}).Expect(http.StatusOK)
}
