package unit

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/target"
)

// UnitActions (QueuedOperations): an action on a Unit is a row queued for the BridgeWorker of the Unit's
// Target from the moment it is started, so it waits for a worker that is away, across restarts. The
// worker reads its queue (Pending ones become Delivered) and reports results; each result appends a
// UnitEvent and moves the operation's Status:
//
//	Pending → Delivered → Progressing → Completed | Failed
//	Pending | Delivered → Canceled (POST /unit/cancel)
//	Progressing → Aborted (no report within the claim time)

// Actions a worker is asked for.
const (
	ActionApply   = "Apply"
	ActionDestroy = "Destroy"
	ActionRefresh = "Refresh"
	ActionImport  = "Import"
	// ActionHeartbeat is a report that renews the claim on a Progressing operation (no UnitEvent).
	ActionHeartbeat = "Heartbeat"
)

// Statuses of a QueuedOperation.
const (
	StatusPending     = "Pending"
	StatusDelivered   = "Delivered"
	StatusProgressing = "Progressing"
	StatusCompleted   = "Completed"
	StatusFailed      = "Failed"
	StatusCanceled    = "Canceled"
	StatusAborted     = "Aborted"
)

// SourceRefresh is the Revision source of data a refresh or import read back from the target.
const SourceRefresh = "Refresh"

// QueuedOperationEntityType and UnitEventEntityType name the records in errors and events.
const (
	QueuedOperationEntityType = "QueuedOperation"
	UnitEventEntityType       = "UnitEvent"
)

// claimTTL is how long a Progressing operation of the worker stays claimed without a report from it
// before it is Aborted: the worker's ClaimTTLSeconds.
func claimTTL(w *db.QueueWorkerGetRow) time.Duration {
	return time.Duration(w.ClaimTtlSeconds) * time.Second
}

// maxQueue bounds the operations one read of a queue answers; the rest stay outstanding for the next.
const maxQueue = 1000

func init() {
	// Operations and action outcomes never change memberships, roles, Groups or grants.
	entity.DeclareEvents("queued_operation", true)
	entity.DeclareEvents("apply", true)
}

// QueuedOperation is one action on a Unit for the worker of its Target (the API's QueuedOperation and
// UnitAction).
type QueuedOperation struct {
	ID, OrganizationID, SpaceID, UnitID, TargetID, BridgeWorkerID uuid.UUID
	UserID                                                        *uuid.UUID
	Action, Status                                                string
	RevisionNum, UnitActionNum                                    int64
	DryRun                                                        bool
	Data                                                          []byte
	ErrorDetails                                                  []apierr.Item
	UnitSlug, SpaceSlug, ToolchainType                            string
	CreatedAt, UpdatedAt                                          time.Time
	Version                                                       int64
}

func operationFromRow(r *db.QueuedOperation, unitSlug, spaceSlug, toolchain string) (QueuedOperation, error) {
	details, err := store.DecodeJSON[[]apierr.Item](r.ErrorDetails)
	if err != nil {
		return QueuedOperation{}, err
	}
	if details == nil {
		details = []apierr.Item{}
	}
	return QueuedOperation{ID: r.QueuedOperationID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, UnitID: r.UnitID,
		TargetID: r.TargetID, BridgeWorkerID: r.BridgeWorkerID, UserID: r.UserID, Action: r.Action, Status: r.Status,
		RevisionNum: r.RevisionNum, UnitActionNum: r.UnitActionNum, DryRun: r.DryRun, Data: r.Data, ErrorDetails: details,
		UnitSlug: unitSlug, SpaceSlug: spaceSlug, ToolchainType: toolchain, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Version: r.Version}, nil
}

// ActionRequest is the optional body of a start.
type ActionRequest struct {
	DryRun bool
	// RevisionNum is the Revision an apply applies (0: the head).
	RevisionNum int64
}

// ValidAction reports whether action is one a client starts.
func ValidAction(action string) bool {
	switch action {
	case ActionApply, ActionDestroy, ActionRefresh, ActionImport:
		return true
	}
	return false
}

// StartAction queues action on the Unit for the BridgeWorker of its Target. The caller needs Edit on the
// Unit.
func (s *Service) StartAction(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, action string, req ActionRequest) (QueuedOperation, error) {
	var out QueuedOperation
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		var err error
		out, err = s.startIn(ctx, sc, tx, spaceID, unitID, action, req)
		return err
	})
	return out, err
}

// BulkAction queues action on every selected Unit, each in its own savepoint (dryRun: then undoes it all).
func (s *Service) BulkAction(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, action string, req ActionRequest, dryRun bool) ([]entity.BulkItem[QueuedOperation], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (QueuedOperation, error) {
		return s.startIn(ctx, sc, tx, ref.SpaceID, ref.ID, action, req)
	})
}

// noWorker is the 422 of a Unit whose action has no worker to go to.
func noWorker(format string, args ...any) *apierr.Error {
	e := apierr.Unprocessable(format, args...)
	e.Items = []apierr.Item{{Item: "TargetID", Description: "no BridgeWorker to carry out the action"}}
	return e
}

func (s *Service) startIn(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID, action string, req ActionRequest) (QueuedOperation, error) {
	row, u, wc, err := lockForEdit(ctx, sc, tx, spaceID, unitID)
	if err != nil {
		return QueuedOperation{}, err
	}
	if u.TargetID == nil {
		return QueuedOperation{}, noWorker("the Unit has no Target: set its TargetID to a Target whose BridgeWorkerID names the worker to %s it", strings.ToLower(action)).
			WithEntity(EntityType, u.ID.String(), u.Slug)
	}
	t, err := target.LookupForShare(ctx, sc, tx.Q, u.SpaceID, *u.TargetID)
	if err != nil {
		return QueuedOperation{}, err
	}
	if t.BridgeWorkerID == nil {
		return QueuedOperation{}, noWorker("the Unit's Target %s has no BridgeWorkerID: set it to the worker that is to %s the Unit", t.Slug, strings.ToLower(action)).
			WithEntity(EntityType, u.ID.String(), u.Slug)
	}
	switch {
	case action == ActionApply && len(u.ApplyGates) > 0:
		return QueuedOperation{}, apierr.Unprocessable("the Unit cannot be applied while it has ApplyGates (%s): fix what its validating Triggers report first", gateNames(u.ApplyGates)).
			WithEntity(EntityType, u.ID.String(), u.Slug)
	case action == ActionDestroy && len(u.DestroyGates) > 0:
		return QueuedOperation{}, apierr.Unprocessable("the Unit cannot be destroyed while it has DestroyGates (%s): remove them first", gateNames(u.DestroyGates)).
			WithEntity(EntityType, u.ID.String(), u.Slug)
	}
	revNum, data := row.HeadRevisionNum, []byte{}
	if action == ActionApply {
		if req.RevisionNum > 0 {
			revNum = req.RevisionNum
		}
		if revNum == 0 {
			return QueuedOperation{}, apierr.Unprocessable("the Unit has no Revision to apply yet: put its data first").WithEntity(EntityType, u.ID.String(), u.Slug)
		}
		rev, err := tx.Q.RevisionGetByNum(ctx, db.RevisionGetByNumParams{OrganizationID: sc.OrganizationID, UnitID: u.ID, RevisionNum: revNum})
		if apierr.Is(err, apierr.TypeNotFound) {
			return QueuedOperation{}, apierr.Validation(fmt.Sprintf("RevisionNum %d is no Revision of the Unit (its head is %d)", revNum, row.HeadRevisionNum),
				apierr.Item{Item: "RevisionNum", Description: "no such Revision"})
		}
		if err != nil {
			return QueuedOperation{}, err
		}
		if data, err = s.contents.get(ctx, tx.Q, rev.DataHash); err != nil {
			return QueuedOperation{}, err
		}
	}
	num, err := tx.Q.UnitNextActionNum(ctx, db.UnitNextActionNumParams{OrganizationID: sc.OrganizationID, UnitID: u.ID})
	if err != nil {
		return QueuedOperation{}, err
	}
	var user *uuid.UUID
	if sc.UserID != uuid.Nil {
		id := sc.UserID
		user = &id
	}
	id := uuid.New()
	if err := tx.Q.QueuedOperationInsert(ctx, db.QueuedOperationInsertParams{QueuedOperationID: id, OrganizationID: sc.OrganizationID,
		SpaceID: u.SpaceID, UnitID: u.ID, TargetID: t.ID, BridgeWorkerID: *t.BridgeWorkerID, UserID: user, Action: action,
		UnitActionNum: num, RevisionNum: revNum, DryRun: req.DryRun, Data: data}); err != nil {
		return QueuedOperation{}, err
	}
	// The event wakes the worker's poll on every replica (and tells the event log's readers).
	tx.Emit(event.Event{OrganizationID: sc.OrganizationID, EventType: "queued_operation.created", SpaceID: &u.SpaceID, TargetID: &t.ID,
		SubjectEntityType: QueuedOperationEntityType, SubjectEntityID: id,
		Payload: operationPayload{EntityPayload: event.EntityPayload{EntityType: QueuedOperationEntityType, EntityID: id, Slug: u.Slug,
			SpaceSlug: wc.spaceSlug, Version: 1}, UnitID: u.ID, BridgeWorkerID: *t.BridgeWorkerID, Action: action, UnitActionNum: num}})
	return s.operationIn(ctx, tx.Q, sc.OrganizationID, id)
}

type operationPayload struct {
	event.EntityPayload
	UnitID         uuid.UUID
	BridgeWorkerID uuid.UUID
	Action         string
	UnitActionNum  int64
}

func gateNames(gates map[string]bool) string {
	names := make([]string, 0, len(gates))
	for k := range gates {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (s *Service) operationIn(ctx context.Context, q *db.Queries, org, id uuid.UUID) (QueuedOperation, error) {
	r, err := q.QueuedOperationGet(ctx, db.QueuedOperationGetParams{OrganizationID: org, QueuedOperationID: id})
	if err != nil {
		return QueuedOperation{}, apierr.NotFoundAs(err, QueuedOperationEntityType, id.String())
	}
	return operationFromRow(&r.QueuedOperation, r.UnitSlug, r.SpaceSlug, r.ToolchainType)
}

// checkQueueWorker answers the worker's queue only to the worker itself (its bot User): for everyone
// else, of this organization or another, the worker does not exist.
func checkQueueWorker(ctx context.Context, sc authz.Scope, q *db.Queries, workerID uuid.UUID) error {
	_, err := queueWorker(ctx, sc, q, workerID)
	return err
}

// queueWorker is checkQueueWorker answering the worker.
func queueWorker(ctx context.Context, sc authz.Scope, q *db.Queries, workerID uuid.UUID) (*db.QueueWorkerGetRow, error) {
	w, err := q.QueueWorkerGet(ctx, db.QueueWorkerGetParams{OrganizationID: sc.OrganizationID, BridgeWorkerID: workerID})
	if err == nil && w.UserID != sc.UserID {
		err = apierr.NotFound("BridgeWorker", workerID.String())
	}
	return w, apierr.NotFoundAs(err, "BridgeWorker", workerID.String())
}

// Queue answers the worker's outstanding operations (Pending and Delivered) in creation order, marking
// the Pending ones Delivered. The caller is the worker's bot User.
func (s *Service) Queue(ctx context.Context, sc authz.Scope, workerID uuid.UUID) ([]QueuedOperation, error) {
	if err := checkQueueWorker(ctx, sc, s.Store.Q(), workerID); err != nil {
		return nil, err
	}
	return s.takeQueue(ctx, workerID)
}

func (s *Service) takeQueue(ctx context.Context, workerID uuid.UUID) ([]QueuedOperation, error) {
	var out []QueuedOperation
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		out = out[:0]
		if err := tx.Q.BridgeWorkerSeen(ctx, workerID); err != nil {
			return err
		}
		if err := tx.Q.QueuedOperationDeliver(ctx, workerID); err != nil {
			return err
		}
		rows, err := tx.Q.QueuedOperationOutstanding(ctx, db.QueuedOperationOutstandingParams{BridgeWorkerID: workerID, MaxItems: maxQueue})
		if err != nil {
			return err
		}
		for _, r := range rows {
			op, err := operationFromRow(&r.QueuedOperation, r.UnitSlug, r.SpaceSlug, r.ToolchainType)
			if err != nil {
				return err
			}
			out = append(out, op)
		}
		return nil
	})
	if out == nil {
		out = []QueuedOperation{}
	}
	return out, err
}

// PollQueue prepares a long poll of the worker's queue: it answers as Queue as soon as there are
// outstanding operations, waiting up to timeout for new ones (a new operation's event wakes it).
func (s *Service) PollQueue(ctx context.Context, sc authz.Scope, n *event.Notifier, workerID uuid.UUID, timeout time.Duration) (*event.Poll[QueuedOperation], error) {
	if err := checkQueueWorker(ctx, sc, s.Store.Q(), workerID); err != nil {
		return nil, err
	}
	return event.NewPoll(n, sc.OrganizationID, timeout, func(ctx context.Context) ([]QueuedOperation, bool, error) {
		out, err := s.takeQueue(ctx, workerID)
		return out, false, err
	}), nil
}

// QueuedOperationOf answers one operation of the worker, whatever its Status. The caller is the worker's
// bot User.
func (s *Service) QueuedOperationOf(ctx context.Context, sc authz.Scope, workerID, id uuid.UUID) (QueuedOperation, error) {
	q := s.Store.Q()
	if err := checkQueueWorker(ctx, sc, q, workerID); err != nil {
		return QueuedOperation{}, err
	}
	op, err := s.operationIn(ctx, q, sc.OrganizationID, id)
	if err == nil && op.BridgeWorkerID != workerID {
		err = apierr.NotFound(QueuedOperationEntityType, id.String())
	}
	return op, err
}

// ActionReport is what a worker reports about one of its operations (the API's ActionResult).
type ActionReport struct {
	QueuedOperationID uuid.UUID
	UnitID, SpaceID   *uuid.UUID
	Action            string
	Status            string
	Result            string
	Message           string
	ErrorMessages     []string
	StartedAt         *time.Time
	TerminatedAt      *time.Time
	RevisionNum       *int64
	// Data is the live configuration (nil: none reported).
	Data             []byte
	ResourceStatuses json.RawMessage
}

// reportStatus is the Status a report moves its operation to: Status, else what the reference workers'
// Result says.
func reportStatus(r ActionReport) (string, error) {
	st := r.Status
	if st == "" {
		switch res := r.Result; {
		case strings.HasSuffix(res, "Completed"), res == "RefreshAndDrifted", res == "RefreshAndNoDrift":
			st = StatusCompleted
		case strings.HasSuffix(res, "Failed"):
			st = StatusFailed
		case strings.HasSuffix(res, "Progressing"), strings.HasSuffix(res, "InProgress"), strings.HasSuffix(res, "Started"):
			st = StatusProgressing
		}
	}
	switch st {
	case StatusProgressing, StatusCompleted, StatusFailed:
		return st, nil
	}
	return "", apierr.Validation(fmt.Sprintf("Status %q is not one a worker reports: send Progressing, Completed or Failed (or a Result such as ApplyCompleted)", st),
		apierr.Item{Item: "Status", Description: "not Progressing, Completed or Failed"})
}

func finished(status string) bool {
	switch status {
	case StatusCompleted, StatusFailed, StatusCanceled, StatusAborted:
		return true
	}
	return false
}

// ApplyCompletedPayload is the payload of apply.completed (its entity is the Unit).
type ApplyCompletedPayload struct {
	EntityType        string
	EntityID          uuid.UUID
	UnitID            uuid.UUID
	UnitSlug          string
	SpaceID           uuid.UUID
	SpaceSlug         string
	RevisionNum       int64
	QueuedOperationID uuid.UUID
}

// Report records a worker's report on one of its operations: it moves the operation's Status and
// appends a UnitEvent (a Heartbeat only renews the claim). A refresh or import that completes with data
// other than the Unit's records the drift and, unless DryRun, makes that data a new Revision through the
// Unit's write path (Source Refresh). The caller is the operation's worker.
func (s *Service) Report(ctx context.Context, sc authz.Scope, workerID uuid.UUID, r ActionReport) (QueuedOperation, error) {
	q := s.Store.Q()
	worker, err := queueWorker(ctx, sc, q, workerID)
	if err != nil {
		return QueuedOperation{}, err
	}
	cur, err := s.operationIn(ctx, q, sc.OrganizationID, r.QueuedOperationID)
	if err == nil && cur.BridgeWorkerID != workerID {
		err = apierr.NotFound(QueuedOperationEntityType, r.QueuedOperationID.String())
	}
	if err != nil {
		return QueuedOperation{}, err
	}
	if r.UnitID != nil && *r.UnitID != cur.UnitID {
		return QueuedOperation{}, apierr.Validation("UnitID is not the operation's Unit", apierr.Item{Item: "UnitID", Description: "not the operation's"})
	}
	if r.SpaceID != nil && *r.SpaceID != cur.SpaceID {
		return QueuedOperation{}, apierr.Validation("SpaceID is not the operation's Space", apierr.Item{Item: "SpaceID", Description: "not the operation's"})
	}
	heartbeat := r.Action == ActionHeartbeat
	if !heartbeat && r.Action != "" && r.Action != cur.Action {
		return QueuedOperation{}, apierr.Validation(fmt.Sprintf("Action %q is not the operation's (%s)", r.Action, cur.Action),
			apierr.Item{Item: "Action", Description: "not the operation's"})
	}
	status := StatusProgressing
	if !heartbeat {
		if status, err = reportStatus(r); err != nil {
			return QueuedOperation{}, err
		}
	}
	err = s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		// The Unit first, then the operation: the order every writer of both takes.
		wr, err := tx.Q.UnitGetForDataWrite(ctx, db.UnitGetForDataWriteParams{OrganizationID: sc.OrganizationID, SpaceID: cur.SpaceID, UnitID: cur.UnitID})
		if err != nil {
			return apierr.NotFoundAs(err, QueuedOperationEntityType, cur.ID.String())
		}
		row := &wr.Unit
		op, err := tx.Q.QueuedOperationLock(ctx, cur.ID)
		if err != nil {
			return err
		}
		if finished(op.Status) {
			return apierr.Conflict("the operation is already %s: nothing more is recorded for it", op.Status).
				WithEntity(QueuedOperationEntityType, op.QueuedOperationID.String(), "")
		}
		ttl := claimTTL(worker)
		if heartbeat {
			expires := time.Now().Add(ttl)
			return tx.Q.QueuedOperationSetStatus(ctx, db.QueuedOperationSetStatusParams{QueuedOperationID: op.QueuedOperationID,
				Status: StatusProgressing, ClaimExpiresAt: &expires, Data: op.Data, ErrorDetails: op.ErrorDetails})
		}
		result := r.Result
		data, details := op.Data, op.ErrorDetails
		var claim *time.Time
		switch status {
		case StatusProgressing:
			expires := time.Now().Add(ttl)
			claim = &expires
		case StatusCompleted:
			if op.Action == ActionRefresh || op.Action == ActionImport {
				if result, data, err = s.readBack(ctx, sc, tx, row, wc(wr), op, r.Data, r.Result); err != nil {
					return err
				}
			}
		case StatusFailed:
			items := make([]apierr.Item, 0, len(r.ErrorMessages)+1)
			if r.Message != "" {
				items = append(items, apierr.Item{Item: op.Action, Description: r.Message})
			}
			for _, m := range r.ErrorMessages {
				items = append(items, apierr.Item{Item: op.Action, Description: m})
			}
			details = store.EncodeJSON(items)
		}
		if result == "" && status != StatusProgressing {
			result = op.Action + status
		}
		if err := tx.Q.QueuedOperationSetStatus(ctx, db.QueuedOperationSetStatusParams{QueuedOperationID: op.QueuedOperationID,
			Status: status, ClaimExpiresAt: claim, Data: data, ErrorDetails: details}); err != nil {
			return err
		}
		revNum := op.RevisionNum
		if r.RevisionNum != nil {
			revNum = *r.RevisionNum
		}
		if err := s.appendEvent(ctx, tx, op, status, result, r.Message, revNum, r.ResourceStatuses, r.StartedAt, r.TerminatedAt); err != nil {
			return err
		}
		if op.Action == ActionApply && status == StatusCompleted {
			tx.Emit(event.Event{OrganizationID: op.OrganizationID, EventType: "apply.completed", SpaceID: &op.SpaceID, TargetID: &op.TargetID,
				SubjectEntityType: EntityType, SubjectEntityID: op.UnitID,
				Payload: ApplyCompletedPayload{EntityType: EntityType, EntityID: op.UnitID, UnitID: op.UnitID, UnitSlug: row.Slug, SpaceID: op.SpaceID, SpaceSlug: wr.SpaceSlug,
					RevisionNum: op.RevisionNum, QueuedOperationID: op.QueuedOperationID}})
		}
		return nil
	})
	if err != nil {
		return QueuedOperation{}, err
	}
	return s.operationIn(ctx, q, sc.OrganizationID, cur.ID)
}

func wc(r *db.UnitGetForDataWriteRow) writeContext {
	return writeContext{spaceSlug: r.SpaceSlug, headSources: r.HeadSources, triggers: r.Triggers}
}

// readBack settles a completed refresh or import with the live data its worker reported: data other than
// the Unit's head is drift, which becomes a new Revision (Source Refresh) unless the operation is a
// DryRun, whose Data then carries it. It answers the UnitEvent's Result and the operation's Data.
func (s *Service) readBack(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, w writeContext, op *db.QueuedOperation, live []byte, reported string) (string, []byte, error) {
	if live == nil { // nothing to compare: the worker's word stands
		if reported != "" {
			return reported, op.Data, nil
		}
		if op.Action == ActionImport {
			return "ImportCompleted", op.Data, nil
		}
		return "RefreshAndNoDrift", op.Data, nil
	}
	drifted := configdata.Hash(live) != row.DataHash || row.HeadRevisionNum == 0
	result := "RefreshAndNoDrift"
	if drifted {
		result = "RefreshAndDrifted"
	}
	if op.Action == ActionImport {
		result = "ImportCompleted"
	}
	if op.DryRun {
		return result, live, nil
	}
	if !drifted {
		return result, op.Data, nil
	}
	doc, err := configdata.Parse(row.ToolchainType, live)
	if err != nil {
		return "", nil, dataError(err)
	}
	desc := fmt.Sprintf("%s by %s #%d: the target's configuration", op.Action, QueuedOperationEntityType, op.UnitActionNum)
	if _, err := s.commitData(ctx, sc, tx, row, w, live, doc, dataChange{source: SourceRefresh, opts: WriteOptions{Description: &desc}}); err != nil {
		return "", nil, err
	}
	return result, op.Data, nil
}

// appendEvent appends the next UnitEvent of the operation's Unit, which becomes its latest.
func (s *Service) appendEvent(ctx context.Context, tx *store.Tx, op *db.QueuedOperation, status, result, message string, revNum int64,
	resources json.RawMessage, started, terminated *time.Time) error {
	id := uuid.New()
	num, err := tx.Q.UnitNextEventNum(ctx, db.UnitNextEventNumParams{OrganizationID: op.OrganizationID, UnitID: op.UnitID, UnitEventID: &id})
	if err != nil {
		return err
	}
	if len(resources) == 0 || string(resources) == "null" {
		resources = json.RawMessage(`{}`)
	}
	return tx.Q.UnitEventInsert(ctx, db.UnitEventInsertParams{UnitEventID: id, OrganizationID: op.OrganizationID, SpaceID: op.SpaceID,
		UnitID: op.UnitID, QueuedOperationID: op.QueuedOperationID, BridgeWorkerID: op.BridgeWorkerID, UnitEventNum: num,
		Action: op.Action, Status: status, Result: result, Message: message, RevisionNum: revNum, ResourceStatuses: resources,
		StartedAt: started, TerminatedAt: terminated})
}

// BulkCancel cancels the outstanding operations (Pending and Delivered) of every selected Unit; a Unit
// whose operation is Progressing is 423 Locked, one with nothing outstanding 404. Each item is the
// latest operation cancelled.
func (s *Service) BulkCancel(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, dryRun bool) ([]entity.BulkItem[QueuedOperation], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (QueuedOperation, error) {
		row, err := loadRow(ctx, sc, tx, ref.SpaceID, ref.ID, true)
		if err != nil {
			return QueuedOperation{}, err
		}
		u, err := fromRow(row)
		if err != nil {
			return QueuedOperation{}, err
		}
		if err := authz.Check(sc, authz.Edit, u.Target()); err != nil {
			return QueuedOperation{}, err
		}
		ops, err := tx.Q.QueuedOperationsOfUnit(ctx, db.QueuedOperationsOfUnitParams{OrganizationID: sc.OrganizationID, UnitID: u.ID})
		if err != nil {
			return QueuedOperation{}, err
		}
		var latest *db.QueuedOperation
		progressing := false
		for _, op := range ops {
			if op.Status == StatusProgressing {
				progressing = true
				continue
			}
			if err := tx.Q.QueuedOperationSetStatus(ctx, db.QueuedOperationSetStatusParams{QueuedOperationID: op.QueuedOperationID,
				Status: StatusCanceled, Data: op.Data, ErrorDetails: op.ErrorDetails}); err != nil {
				return QueuedOperation{}, err
			}
			if err := s.appendEvent(ctx, tx, op, StatusCanceled, op.Action+StatusCanceled, "canceled", op.RevisionNum, nil, nil, nil); err != nil {
				return QueuedOperation{}, err
			}
			if latest == nil {
				latest = op
			}
		}
		switch {
		case latest != nil:
			return s.operationIn(ctx, tx.Q, sc.OrganizationID, latest.QueuedOperationID)
		case progressing:
			return QueuedOperation{}, apierr.Locked("the Unit's operation is Progressing: its worker is carrying it out, and it cannot be cancelled").
				WithEntity(EntityType, u.ID.String(), u.Slug)
		}
		return QueuedOperation{}, apierr.NotFound(QueuedOperationEntityType, "outstanding for Unit "+u.Slug)
	})
}

// ExpireClaims aborts the Progressing operations whose claim ended before asOf (their worker stopped
// reporting), each with a UnitEvent saying so. It answers how many it aborted. Every replica runs it
// periodically; the rows it takes are locked, so replicas never abort one twice.
func (s *Service) ExpireClaims(ctx context.Context, asOf time.Time) (int, error) {
	n := 0
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		n = 0
		ops, err := tx.Q.QueuedOperationsExpire(ctx, asOf)
		if err != nil {
			return err
		}
		for _, op := range ops {
			if err := s.appendEvent(ctx, tx, op, StatusAborted, op.Action+StatusAborted, "the worker stopped reporting before its claim ended",
				op.RevisionNum, nil, nil, nil); err != nil {
				return err
			}
		}
		n = len(ops)
		return nil
	})
	return n, err
}

// checkNotBusy refuses to delete a Unit a worker holds an operation of (Delivered or Progressing): 423.
func checkNotBusy(ctx context.Context, q *db.Queries, u Unit) error {
	busy, err := q.QueuedOperationBusy(ctx, db.QueuedOperationBusyParams{OrganizationID: u.OrganizationID, UnitID: u.ID})
	if err != nil {
		return err
	}
	if busy {
		return apierr.Locked("the Unit has an operation its worker has read or is carrying out; wait for it to finish or cancel it before deleting the Unit").
			WithEntity(EntityType, u.ID.String(), u.Slug)
	}
	return nil
}
