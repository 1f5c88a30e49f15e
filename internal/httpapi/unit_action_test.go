package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// actionFixture is a Space with a BridgeWorker, a Target naming it, a Unit on that Target with two
// Revisions, the worker's client, and an admin.
type actionFixture struct {
	env          *apitest.Env
	admin        *apitest.Client
	worker       *apitest.Client
	space        api.Space
	bw           api.BridgeWorker
	target       api.Target
	unitID       string
	unitPath     string // /api/space/{space}/unit/{unit}
	queue        string // /api/bridge_worker/{worker}
	otherWorker  *apitest.Client
	otherQueue   string
	otherTarget  api.Target
	workerUserID uuid.UUID
}

func newActionFixture(t *testing.T, env *apitest.Env) *actionFixture {
	t.Helper()
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	base := "/api/space/" + sp.SpaceID.String()
	var w, w2 api.BridgeWorker
	admin.Post(base+"/bridge_worker", map[string]any{"Slug": "files"}).Expect(http.StatusOK).JSON(&w)
	admin.Post(base+"/bridge_worker", map[string]any{"Slug": "other"}).Expect(http.StatusOK).JSON(&w2)
	var tg, tg2 api.Target
	admin.Post(base+"/target", map[string]any{"Slug": "dir", "ToolchainType": "AppConfig/Env", "ProviderType": "Kubernetes",
		"BridgeWorkerID": w.BridgeWorkerID}).Expect(http.StatusOK).JSON(&tg)
	admin.Post(base+"/target", map[string]any{"Slug": "dir2", "ToolchainType": "AppConfig/Env", "ProviderType": "Kubernetes",
		"BridgeWorkerID": w2.BridgeWorkerID}).Expect(http.StatusOK).JSON(&tg2)
	var u api.UnitCreateOrUpdateResponse
	admin.Post(base+"/unit", map[string]any{"Slug": "app", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&u)
	unitPath := base + "/unit/" + u.Unit.UnitID.String()
	admin.Put(unitPath+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)
	admin.Put(unitPath+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=2\n")}).Expect(http.StatusOK)
	return &actionFixture{env: env, admin: admin, worker: env.Client(workerToken(t, env, w.BridgeWorkerID, w.Secret)), space: sp, bw: w,
		target: tg, unitID: u.Unit.UnitID.String(), unitPath: unitPath, queue: "/api/bridge_worker/" + w.BridgeWorkerID.String(),
		otherWorker: env.Client(workerToken(t, env, w2.BridgeWorkerID, w2.Secret)), otherQueue: "/api/bridge_worker/" + w2.BridgeWorkerID.String(),
		otherTarget: tg2, workerUserID: w.UserID}
}

func (f *actionFixture) setTarget(t *testing.T, id any) {
	t.Helper()
	f.admin.Patch(f.unitPath, map[string]any{"TargetID": id}).Expect(http.StatusOK)
}

func (f *actionFixture) start(t *testing.T, action string, body any) api.QueuedOperation {
	t.Helper()
	var op api.QueuedOperation
	f.admin.Post(f.unitPath+"/"+action, body).Expect(http.StatusOK).JSON(&op)
	return op
}

func (f *actionFixture) readQueue(t *testing.T) []api.QueuedOperation {
	t.Helper()
	var ops []api.QueuedOperation
	f.worker.Get(f.queue + "/queued_operation").Expect(http.StatusOK).JSON(&ops)
	return ops
}

func (f *actionFixture) report(t *testing.T, op api.QueuedOperation, body map[string]any) api.QueuedOperation {
	t.Helper()
	body["QueuedOperationID"] = op.QueuedOperationID
	var out api.QueuedOperation
	f.worker.Post(f.queue+"/user_action_result", body).Expect(http.StatusOK).JSON(&out)
	return out
}

func (f *actionFixture) unit(t *testing.T) api.Unit {
	t.Helper()
	var u api.ExtendedUnit
	f.admin.Get(f.unitPath).Expect(http.StatusOK).JSON(&u)
	return u.Unit
}

func ids(ops []api.QueuedOperation) []uuid.UUID {
	out := make([]uuid.UUID, len(ops))
	for i, op := range ops {
		out[i] = op.QueuedOperationID
	}
	return out
}

// TestUnitActionQueue: a Unit without a worker to go to is 422 naming TargetID; operations started while
// the worker is away wait for it and are read in creation order (reading delivers them); results move
// their Status and append UnitEvents; another worker, a member who is not the worker and another
// organization see no such worker or operation.
func TestUnitActionQueue(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)

	e := f.admin.Post(f.unitPath+"/apply", nil).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Equal(t, "TargetID", e.Error.ErrorMetadata.Items[0].Item)
	var bare api.Target
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/target", map[string]any{"Slug": "bare", "ToolchainType": "AppConfig/Env",
		"ProviderType": "Kubernetes"}).Expect(http.StatusOK).JSON(&bare)
	f.setTarget(t, bare.TargetID)
	e = f.admin.Post(f.unitPath+"/refresh", nil).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Equal(t, "TargetID", e.Error.ErrorMetadata.Items[0].Item)
	f.setTarget(t, f.target.TargetID)

	// A viewer may not start actions: it needs Edit on the Unit.
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Post(f.unitPath+"/apply", nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Started while no worker reads: they wait, in order.
	first := f.start(t, "apply", map[string]any{"RevisionNum": 1})
	second := f.start(t, "apply", nil)
	third := f.start(t, "destroy", nil)
	require.Equal(t, api.QueuedOperationStatusPending, first.Status)
	require.Equal(t, []int64{1, 2, 3}, []int64{first.UnitActionNum, second.UnitActionNum, third.UnitActionNum})
	require.Equal(t, "A=1\n", string(first.Data), "an apply carries the data of its Revision")
	require.Equal(t, "A=2\n", string(second.Data), "the head by default")
	require.Equal(t, int64(2), second.RevisionNum)
	require.Equal(t, "app", first.UnitSlug)
	require.Equal(t, "ops", first.SpaceSlug)
	require.Equal(t, f.bw.BridgeWorkerID, first.BridgeWorkerID)
	require.Equal(t, int64(3), f.unit(t).HeadUnitActionNum)
	f.admin.Post(f.unitPath+"/apply", map[string]any{"RevisionNum": 9}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.admin.Post(f.unitPath+"/refresh", map[string]any{"RevisionNum": 1}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// Only the worker reads its queue.
	f.admin.Get(f.queue+"/queued_operation").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.otherWorker.Get(f.queue+"/queued_operation").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	stranger := env.Client(env.Token("globex", "gina", auth.RoleAdmin))
	stranger.Get(f.queue+"/queued_operation").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	stranger.Post(f.queue+"/user_action_result", map[string]any{"QueuedOperationID": first.QueuedOperationID, "Status": "Completed"}).
		ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var others []api.QueuedOperation
	f.otherWorker.Get(f.otherQueue + "/queued_operation").Expect(http.StatusOK).JSON(&others)
	require.Empty(t, others)

	ops := f.readQueue(t)
	require.Equal(t, ids([]api.QueuedOperation{first, second, third}), ids(ops))
	for _, op := range ops {
		require.Equal(t, api.QueuedOperationStatusDelivered, op.Status)
	}
	var one api.QueuedOperation
	f.worker.Get(f.queue + "/queued_operation/" + first.QueuedOperationID.String()).Expect(http.StatusOK).JSON(&one)
	require.Equal(t, api.QueuedOperationStatusDelivered, one.Status)
	f.otherWorker.Get(f.otherQueue+"/queued_operation/"+first.QueuedOperationID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Another worker of the organization cannot report on it.
	f.otherWorker.Post(f.otherQueue+"/user_action_result", map[string]any{"QueuedOperationID": first.QueuedOperationID, "Status": "Completed"}).
		ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.otherWorker.Post(f.queue+"/user_action_result", map[string]any{"QueuedOperationID": first.QueuedOperationID, "Status": "Completed"}).
		ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	now := time.Now().UTC()
	op := f.report(t, first, map[string]any{"Status": "Progressing", "Action": "Apply", "StartedAt": now, "Message": "writing"})
	require.Equal(t, api.QueuedOperationStatusProgressing, op.Status)
	op = f.report(t, first, map[string]any{"Status": "Completed", "StartedAt": now, "TerminatedAt": time.Now().UTC(),
		"ResourceStatuses": map[string]any{"app.env": map[string]any{"Readiness": "Ready", "SyncStatus": "Synced"}}})
	require.Equal(t, api.QueuedOperationStatusCompleted, op.Status)
	f.worker.Post(f.queue+"/user_action_result", map[string]any{"QueuedOperationID": first.QueuedOperationID, "Status": "Failed"}).
		ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.worker.Post(f.queue+"/user_action_result", map[string]any{"QueuedOperationID": second.QueuedOperationID, "Status": "Done"}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	u := f.unit(t)
	require.Equal(t, int64(2), u.HeadUnitEventNum)
	require.NotNil(t, u.UnitEventID)

	// The reference workers' path and Result values; a failure keeps its messages.
	var failed api.QueuedOperation
	f.worker.Post(f.queue+"/action_result", map[string]any{"QueuedOperationID": second.QueuedOperationID, "Result": "ApplyFailed",
		"Message": "disk full"}).Expect(http.StatusOK).JSON(&failed)
	require.Equal(t, api.QueuedOperationStatusFailed, failed.Status)
	require.Equal(t, "disk full", failed.ErrorDetails[0].Description)

	// What is left is the destroy; after it completes the queue is empty.
	require.Equal(t, []uuid.UUID{third.QueuedOperationID}, ids(f.readQueue(t)))
	f.report(t, third, map[string]any{"Status": "Completed"})
	require.Empty(t, f.readQueue(t))
	require.Equal(t, int64(4), f.unit(t).HeadUnitEventNum)

	// The Unit's UnitEvents and UnitActions; a client waits for one operation by where.
	var events []api.UnitEvent
	f.admin.Get(f.unitPath + "/unit_event").Expect(http.StatusOK).JSON(&events)
	require.Len(t, events, 4)
	for i, e := range events {
		require.Equal(t, int64(i+1), e.UnitEventNum)
	}
	require.Equal(t, api.UnitEventStatusProgressing, events[0].Status)
	require.Equal(t, "ApplyCompleted", events[1].Result)
	require.Equal(t, "Ready", events[1].ResourceStatuses["app.env"].Readiness)
	require.Equal(t, "ApplyFailed", events[2].Result)
	require.Equal(t, "app", events[0].UnitSlug)
	f.admin.Get(f.unitPath + "/unit_event?" + url.Values{"where": {"QueuedOperationID = '" + first.QueuedOperationID.String() + "'"}}.Encode()).
		Expect(http.StatusOK).JSON(&events)
	require.Len(t, events, 2)
	var ev api.UnitEvent
	f.admin.Get(f.unitPath + "/unit_event/" + events[1].UnitEventID.String()).Expect(http.StatusOK).JSON(&ev)
	require.Equal(t, events[1].UnitEventID, ev.UnitEventID)
	f.admin.Get(f.unitPath+"/unit_event/"+uuid.NewString()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var ext api.ExtendedUnit
	f.admin.Get(f.unitPath + "?include=UnitEventID").Expect(http.StatusOK).JSON(&ext)
	require.NotNil(t, ext.LatestUnitEvent)
	require.Equal(t, *ext.Unit.UnitEventID, ext.LatestUnitEvent.UnitEventID)
	require.Equal(t, int64(4), ext.LatestUnitEvent.UnitEventNum)
	var actions []api.QueuedOperation
	f.admin.Get(f.unitPath + "/unit_action").Expect(http.StatusOK).JSON(&actions)
	require.Equal(t, ids([]api.QueuedOperation{first, second, third}), ids(actions))
	f.admin.Get(f.unitPath + "/unit_action/" + second.QueuedOperationID.String()).Expect(http.StatusOK).JSON(&one)
	require.Equal(t, api.QueuedOperationStatusFailed, one.Status)
	f.admin.Get("/api/unit_action").Expect(http.StatusOK).JSON(&actions)
	require.Equal(t, []uuid.UUID{third.QueuedOperationID}, ids(actions), "the latest of each Unit")
	f.admin.Get("/api/unit_event").Expect(http.StatusOK).JSON(&events)
	require.Len(t, events, 1)
	require.Equal(t, int64(4), events[0].UnitEventNum)
	f.admin.Get("/api/unit_event?distinct_on=Off&limit=10").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.admin.Get("/api/unit_event?distinct_on=Off&where=Status+%3D+'Completed'").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.admin.Get("/api/unit_event?distinct_on=Off&limit=10&where=Status+%3D+'Completed'").Expect(http.StatusOK).JSON(&events)
	require.Len(t, events, 2)
	// Another organization sees none of it.
	stranger.Get(f.unitPath+"/unit_event").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	stranger.Get("/api/unit_event").Expect(http.StatusOK).JSON(&events)
	require.Empty(t, events)
	stranger.Get("/api/unit_action").Expect(http.StatusOK).JSON(&actions)
	require.Empty(t, actions)
}

// TestUnitActionPoll: a poll answers [] on timeout and wakes for an operation started while it waits.
func TestUnitActionPoll(t *testing.T) { inEachLongPollMode(t, testUnitActionPoll) }

func testUnitActionPoll(t *testing.T, opts apitest.Options) {
	env := apitest.New(t, opts)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	var ops []api.QueuedOperation
	f.worker.Post(f.queue+"/queued_operation/poll", map[string]any{"TimeoutSeconds": 0}).Expect(http.StatusOK).JSON(&ops)
	require.Empty(t, ops)
	f.worker.Post(f.queue+"/queued_operation/poll", map[string]any{"TimeoutSeconds": 61}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.admin.Post(f.queue+"/queued_operation/poll", map[string]any{"TimeoutSeconds": 0}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	got := make(chan []api.QueuedOperation, 1)
	start := time.Now()
	go func() {
		var out []api.QueuedOperation
		resp := f.worker.Post(f.queue+"/queued_operation/poll", map[string]any{"TimeoutSeconds": 20})
		if resp.Status == http.StatusOK {
			resp.JSON(&out)
		}
		got <- out
	}()
	time.Sleep(300 * time.Millisecond)
	op := f.start(t, "apply", nil)
	select {
	case ops = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("the poll did not wake for the new operation")
	}
	require.Less(t, time.Since(start), 15*time.Second)
	require.Equal(t, []uuid.UUID{op.QueuedOperationID}, ids(ops))
	require.Equal(t, api.QueuedOperationStatusDelivered, ops[0].Status)
}

// TestUnitActionCancelAndLocks: cancel turns Pending and Delivered operations Canceled and refuses a
// Progressing one with 423 (the whole answer when every item is); a Unit whose operation a worker holds is
// not deleted (423); a Progressing operation whose worker stops reporting is Aborted once its claim ends,
// and a Heartbeat renews the claim.
func TestUnitActionCancelAndLocks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	sel := "?" + url.Values{"where": {"Slug = 'app'"}}.Encode()

	pending := f.start(t, "apply", nil)
	var items []api.UnitActionResponse
	f.admin.Post("/api/unit/cancel"+sel, nil).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Equal(t, pending.QueuedOperationID, items[0].Action.QueuedOperationID)
	require.Equal(t, api.QueuedOperationStatusCanceled, items[0].Action.Status)
	require.Empty(t, f.readQueue(t))
	// Nothing left to cancel.
	f.admin.Post("/api/unit/cancel"+sel, nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	op := f.start(t, "apply", nil)
	f.readQueue(t)
	// Delivered: the worker holds it, so the Unit is not deleted.
	f.admin.Delete(f.unitPath).ExpectError(http.StatusLocked, api.ErrorTypeLocked)
	f.report(t, op, map[string]any{"Status": "Progressing"})
	f.admin.Post("/api/unit/cancel"+sel, nil).ExpectError(http.StatusLocked, api.ErrorTypeLocked)
	f.admin.Delete(f.unitPath).ExpectError(http.StatusLocked, api.ErrorTypeLocked)
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Post("/api/unit/cancel"+sel, nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// A Heartbeat renews the claim; past it, the sweep aborts the operation.
	var hb api.QueuedOperation
	f.worker.Post(f.queue+"/action_result", map[string]any{"QueuedOperationID": op.QueuedOperationID, "Action": "Heartbeat"}).
		Expect(http.StatusOK).JSON(&hb)
	require.Equal(t, api.QueuedOperationStatusProgressing, hb.Status)
	events := f.unit(t).HeadUnitEventNum
	n, err := env.App.Units.ExpireClaims(context.Background(), time.Now())
	require.NoError(t, err)
	require.Zero(t, n, "the claim has not ended")
	n, err = env.App.Units.ExpireClaims(context.Background(), time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	f.worker.Get(f.queue + "/queued_operation/" + op.QueuedOperationID.String()).Expect(http.StatusOK).JSON(&hb)
	require.Equal(t, api.QueuedOperationStatusAborted, hb.Status)
	require.Equal(t, events+1, f.unit(t).HeadUnitEventNum, "the abort is a UnitEvent")
	f.worker.Post(f.queue+"/user_action_result", map[string]any{"QueuedOperationID": op.QueuedOperationID, "Status": "Completed"}).
		ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.admin.Delete(f.unitPath).Expect(http.StatusOK)
}

// TestUnitActionDriftAndGates: a refresh whose live data differs from the Unit's is drift; with DryRun
// the operation carries it and the Unit is unchanged, else it is a new Revision (Source Refresh). An
// import fills an empty Unit. A completed apply emits apply.completed. ApplyGates refuse apply and
// DestroyGates destroy (422).
func TestUnitActionDriftAndGates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)

	// The worker's event cursor, placed at the tail before the apply completes.
	cursor := "/api/space/" + f.space.SpaceID.String() + "/bridge_worker/" + f.bw.BridgeWorkerID.String() + "/event_cursor/applies/poll"
	var entries []api.EventLogEntry
	f.worker.Post(cursor, map[string]any{"TimeoutSeconds": 0, "EventTypes": []string{"apply.completed"}}).Expect(http.StatusOK).JSON(&entries)
	apply := f.start(t, "apply", nil)
	f.readQueue(t)
	f.report(t, apply, map[string]any{"Status": "Completed"})
	f.worker.Post(cursor, map[string]any{"TimeoutSeconds": 5, "EventTypes": []string{"apply.completed"}}).Expect(http.StatusOK).JSON(&entries)
	require.Len(t, entries, 1)
	payload, ok := entries[0].Payload.(map[string]any)
	require.True(t, ok, "%#v", entries[0].Payload)
	require.Equal(t, f.unitID, payload["UnitID"])
	require.Equal(t, "app", payload["UnitSlug"])
	require.Equal(t, "ops", payload["SpaceSlug"])
	require.Equal(t, f.space.SpaceID.String(), payload["SpaceID"])
	require.EqualValues(t, 2, payload["RevisionNum"])
	require.Equal(t, apply.QueuedOperationID.String(), payload["QueuedOperationID"])

	// No drift: nothing changes.
	before := f.unit(t)
	same := f.start(t, "refresh", nil)
	op := f.report(t, same, map[string]any{"Status": "Completed", "Data": []byte("A=2\n")})
	require.Equal(t, api.QueuedOperationStatusCompleted, op.Status)
	require.Equal(t, before.HeadRevisionNum, f.unit(t).HeadRevisionNum)

	// Drift, DryRun: the operation carries the live data; the Unit is unchanged.
	dry := f.start(t, "refresh", map[string]any{"DryRun": true})
	require.True(t, dry.DryRun)
	op = f.report(t, dry, map[string]any{"Status": "Completed", "Data": []byte("A=9\n")})
	require.Equal(t, "A=9\n", string(op.Data))
	after := f.unit(t)
	require.Equal(t, before.HeadRevisionNum, after.HeadRevisionNum)
	require.Equal(t, before.DataHash, after.DataHash)

	resultOf := func(op api.QueuedOperation) string {
		var events []api.UnitEvent
		f.admin.Get(f.unitPath + "/unit_event?" + url.Values{"where": {"QueuedOperationID = '" + op.QueuedOperationID.String() + "'"}}.Encode()).
			Expect(http.StatusOK).JSON(&events)
		require.NotEmpty(t, events)
		return events[len(events)-1].Result
	}
	require.Equal(t, "RefreshAndNoDrift", resultOf(same))
	require.Equal(t, "RefreshAndDrifted", resultOf(dry), "the drift is recorded on the UnitEvent")

	// Drift: a new Revision with the live data, made by the refresh.
	wet := f.start(t, "refresh", nil)
	f.report(t, wet, map[string]any{"Status": "Completed", "Data": []byte("A=9\n")})
	require.Equal(t, "RefreshAndDrifted", resultOf(wet))
	after = f.unit(t)
	require.Equal(t, before.HeadRevisionNum+1, after.HeadRevisionNum)
	resp := f.admin.Get(f.unitPath + "/data").Expect(http.StatusOK)
	require.Equal(t, "A=9\n", string(resp.Body))
	var rev api.ExtendedRevision
	f.admin.Get(f.unitPath + "/revision/" + after.HeadRevisionID.String()).Expect(http.StatusOK).JSON(&rev)
	require.Equal(t, "Refresh", rev.Revision.Source)
	require.Equal(t, f.workerUserID, rev.Revision.UserID, "the worker wrote it")
	// Live data that does not parse is refused, and the operation stays open.
	bad := f.start(t, "refresh", nil)
	f.worker.Post(f.queue+"/user_action_result", map[string]any{"QueuedOperationID": bad.QueuedOperationID, "Status": "Completed",
		"Data": []byte("not env\x00")}).ExpectError(http.StatusBadRequest, api.ErrorTypeData)
	f.report(t, bad, map[string]any{"Status": "Failed", "Message": "cannot read"})

	// Import fills an empty Unit.
	var empty api.UnitCreateOrUpdateResponse
	base := "/api/space/" + f.space.SpaceID.String()
	f.admin.Post(base+"/unit", map[string]any{"Slug": "found", "ToolchainType": "AppConfig/Env", "TargetID": f.target.TargetID}).
		Expect(http.StatusOK).JSON(&empty)
	var imp api.QueuedOperation
	f.admin.Post(base+"/unit/"+empty.Unit.UnitID.String()+"/import", nil).Expect(http.StatusOK).JSON(&imp)
	require.Equal(t, api.QueueActionTypeImport, imp.Action)
	f.report(t, imp, map[string]any{"Status": "Completed", "Data": []byte("B=1\n")})
	resp = f.admin.Get(base + "/unit/" + empty.Unit.UnitID.String() + "/data").Expect(http.StatusOK)
	require.Equal(t, "B=1\n", string(resp.Body))

	// Gates.
	f.admin.Patch(f.unitPath, map[string]any{"DestroyGates": map[string]bool{"keep": true}}).Expect(http.StatusOK)
	e := f.admin.Post(f.unitPath+"/destroy", nil).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Contains(t, e.Error.Message, "keep")
	f.admin.Post(base+"/trigger", map[string]any{"Slug": "needs-b", "Event": "Mutation", "ToolchainType": "AppConfig/Env",
		"FunctionName": "path-exists", "Arguments": []any{map[string]any{"Value": "B"}}}).Expect(http.StatusOK)
	f.admin.Put(f.unitPath+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=3\n")}).Expect(http.StatusOK)
	require.NotEmpty(t, f.unit(t).ApplyGates)
	f.admin.Post(f.unitPath+"/apply", nil).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	// Bulk: every item refused alike is the shared answer; a dry run queues nothing.
	sel := "?" + url.Values{"where": {"Slug = 'app'"}}.Encode()
	f.admin.Post("/api/unit/apply"+sel, nil).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	var items []api.UnitActionResponse
	f.admin.Post("/api/unit/refresh"+sel+"&dry_run=true", nil).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	num := f.unit(t).HeadUnitActionNum
	f.admin.Post("/api/unit/refresh?"+url.Values{"where": {"Slug IN ('app', 'found')"}}.Encode(), map[string]any{}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	require.Equal(t, num+1, f.unit(t).HeadUnitActionNum)
	f.admin.Post("/api/unit/destroy?"+url.Values{"where": {"Slug IN ('app', 'found')"}}.Encode(), nil).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
	require.True(t, (items[0].Action == nil) != (items[1].Action == nil), "app is gated, found is not")
}

// TestUnitActionTenancy: a user of two organizations acts in each only with that organization's token;
// another organization's IDs are 404 wherever they appear.
func TestUnitActionTenancy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	op := f.start(t, "apply", nil)

	// alice of acme is also admin of globex: her globex token reaches nothing of acme.
	other := env.Client(env.Token("globex", "alice", auth.RoleAdmin))
	other.Post(f.unitPath+"/apply", nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get(f.unitPath+"/unit_action/"+op.QueuedOperationID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get(f.queue+"/queued_operation/"+op.QueuedOperationID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var items []api.UnitActionResponse
	other.Post("/api/unit/cancel?"+url.Values{"where": {"Slug = 'app'"}}.Encode(), nil).Expect(http.StatusOK).JSON(&items)
	require.Empty(t, items, "globex has no Unit app")
	var actions []api.QueuedOperation
	other.Get("/api/unit_action").Expect(http.StatusOK).JSON(&actions)
	require.Empty(t, actions)
	// globex's own worker cannot report on acme's operation either.
	gsp := createSpace(t, other, map[string]any{"Slug": "ops"})
	var gw api.BridgeWorker
	other.Post("/api/space/"+gsp.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "files"}).Expect(http.StatusOK).JSON(&gw)
	gworker := env.Client(workerToken(t, env, gw.BridgeWorkerID, gw.Secret))
	gqueue := "/api/bridge_worker/" + gw.BridgeWorkerID.String()
	gworker.Post(gqueue+"/user_action_result", map[string]any{"QueuedOperationID": op.QueuedOperationID, "Status": "Completed"}).
		ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	gworker.Get(f.queue+"/queued_operation").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var ops []api.QueuedOperation
	gworker.Get(gqueue + "/queued_operation").Expect(http.StatusOK).JSON(&ops)
	require.Empty(t, ops)
	// Her acme token still acts in acme.
	require.Equal(t, []uuid.UUID{op.QueuedOperationID}, ids(f.readQueue(t)))
}

// TestUnitActionSurvivesRestart: operations queued while no worker reads are rows: a server started
// afterwards on the same database hands them to the worker, in creation order.
func TestUnitActionSurvivesRestart(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	queued := []api.QueuedOperation{f.start(t, "apply", nil), f.start(t, "refresh", nil), f.start(t, "destroy", nil)}

	restarted := apitest.New(t, apitest.Options{DatabaseURL: env.DBURL})
	worker := restarted.Client(workerToken(t, restarted, f.bw.BridgeWorkerID, mustSecret(t, f)))
	var ops []api.QueuedOperation
	worker.Post(f.queue+"/queued_operation/poll", map[string]any{"TimeoutSeconds": 0}).Expect(http.StatusOK).JSON(&ops)
	require.Equal(t, ids(queued), ids(ops))
	require.Equal(t, "A=2\n", string(ops[0].Data))
}

func mustSecret(t *testing.T, f *actionFixture) string {
	t.Helper()
	require.NotEmpty(t, f.bw.Secret)
	return f.bw.Secret
}

// TestUnitActionMovedUnit: a moved Unit takes its UnitActions and UnitEvents along; its worker still
// reports on what it was given.
func TestUnitActionMovedUnit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	op := f.start(t, "apply", nil)
	f.readQueue(t)
	f.report(t, op, map[string]any{"Status": "Progressing"})
	prod := createSpace(t, f.admin, map[string]any{"Slug": "prod"})
	f.admin.Post("/api/unit/move?"+url.Values{"where": {"Slug = 'app'"}}.Encode(), map[string]any{"ToSpaceID": prod.SpaceID}).Expect(http.StatusOK)
	done := f.report(t, op, map[string]any{"Status": "Completed"})
	require.Equal(t, prod.SpaceID, done.SpaceID)
	var events []api.UnitEvent
	f.admin.Get("/api/space/" + prod.SpaceID.String() + "/unit/" + f.unitID + "/unit_event").Expect(http.StatusOK).JSON(&events)
	require.Len(t, events, 2)
	require.Equal(t, prod.SpaceID, events[0].SpaceID)
	require.Equal(t, "prod", events[1].SpaceSlug)
}

// TestUnitActionClaimTTL: a Progressing operation is Aborted once its worker's ClaimTTLSeconds pass
// without a report.
func TestUnitActionClaimTTL(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	f.admin.Patch("/api/space/"+f.space.SpaceID.String()+"/bridge_worker/"+f.bw.BridgeWorkerID.String(),
		map[string]any{"ClaimTTLSeconds": 30}).Expect(http.StatusOK)
	op := f.start(t, "apply", nil)
	f.report(t, op, map[string]any{"Status": "Progressing"})
	n, err := env.App.Units.ExpireClaims(context.Background(), time.Now().Add(20*time.Second))
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = env.App.Units.ExpireClaims(context.Background(), time.Now().Add(40*time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var got api.QueuedOperation
	f.worker.Get(f.queue + "/queued_operation/" + op.QueuedOperationID.String()).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.QueuedOperationStatusAborted, got.Status)
}

// TestUnitActionQueueNarrowed: where, contains and filter narrow a worker's queue read; only what it answers
// is marked Delivered, and a bad where is 400.
func TestUnitActionQueueNarrowed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	apply := f.start(t, "apply", nil)
	destroy := f.start(t, "destroy", nil)

	var ops []api.QueuedOperation
	f.worker.Get(f.queue + "/queued_operation?where=" + url.QueryEscape("Action = 'Destroy'")).Expect(http.StatusOK).JSON(&ops)
	require.Equal(t, []uuid.UUID{destroy.QueuedOperationID}, ids(ops))
	require.Equal(t, api.QueuedOperationStatusDelivered, ops[0].Status)
	f.worker.Get(f.queue + "/queued_operation?contains=Apply").Expect(http.StatusOK).JSON(&ops)
	require.Equal(t, []uuid.UUID{apply.QueuedOperationID}, ids(ops))

	// A Filter of UnitActions narrows it the same way.
	var filter api.Filter
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/filter", map[string]any{"Slug": "applies", "From": "UnitAction", "Where": "Action = 'Apply'"}).
		Expect(http.StatusOK).JSON(&filter)
	f.worker.Get(f.queue + "/queued_operation?filter=" + filter.FilterID.String()).Expect(http.StatusOK).JSON(&ops)
	require.Equal(t, []uuid.UUID{apply.QueuedOperationID}, ids(ops))

	f.worker.Get(f.queue+"/queued_operation?where="+url.QueryEscape("Nope = 1")).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// Unnarrowed, the whole queue in creation order.
	require.Equal(t, []uuid.UUID{apply.QueuedOperationID, destroy.QueuedOperationID}, ids(f.readQueue(t)))
}

// TestUnitEventHidden: a hidden UnitEvent is left out of its Unit's list unless include_hidden names it.
func TestUnitEventHidden(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	op := f.start(t, "apply", nil)
	f.report(t, op, map[string]any{"Status": "Completed"})
	_, err := env.App.Store.Pool.Exec(context.Background(), `UPDATE unit_event SET hidden_reason = 'Archived' WHERE queued_operation_id = $1`, op.QueuedOperationID)
	require.NoError(t, err)
	var events []api.UnitEvent
	f.admin.Get(f.unitPath + "/unit_event").Expect(http.StatusOK).JSON(&events)
	require.Empty(t, events)
	f.admin.Get(f.unitPath + "/unit_event?include_hidden=Archived").Expect(http.StatusOK).JSON(&events)
	require.Len(t, events, 1)
	require.Equal(t, "Archived", events[0].HiddenReason)
}
