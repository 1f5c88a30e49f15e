package httpapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/unit"
)

// The operations of openapi/unit_action.yaml: starting actions on Units, the worker's queue and its
// results (internal/unit/action.go has the rules).

func operationToAPI(op unit.QueuedOperation) api.QueuedOperation {
	details := make([]api.ErrorItem, len(op.ErrorDetails))
	for i, it := range op.ErrorDetails {
		details[i] = api.ErrorItem{Item: it.Item, Description: it.Description}
	}
	data := op.Data
	if data == nil {
		data = []byte{}
	}
	return api.QueuedOperation{QueuedOperationID: op.ID, UnitID: op.UnitID, SpaceID: op.SpaceID, TargetID: op.TargetID,
		BridgeWorkerID: op.BridgeWorkerID, OrganizationID: op.OrganizationID, UserID: op.UserID,
		Action: api.QueueActionType(op.Action), Status: api.QueuedOperationStatus(op.Status), RevisionNum: op.RevisionNum,
		DryRun: op.DryRun, Data: data, UnitActionNum: op.UnitActionNum, ToolchainType: op.ToolchainType, UnitSlug: op.UnitSlug,
		SpaceSlug: op.SpaceSlug, Dependencies: []uuid.UUID{}, ErrorDetails: details, EntityType: unit.QueuedOperationEntityType,
		CreatedAt: op.CreatedAt.UTC(), UpdatedAt: op.UpdatedAt.UTC(), Version: op.Version}
}

func operationsToAPI(ops []unit.QueuedOperation) []api.QueuedOperation {
	out := make([]api.QueuedOperation, len(ops))
	for i := range ops {
		out[i] = operationToAPI(ops[i])
	}
	return out
}

func actionRequest(b *api.UnitActionRequest, action string) (unit.ActionRequest, error) {
	if b == nil {
		return unit.ActionRequest{}, nil
	}
	req := unit.ActionRequest{DryRun: b.DryRun, RevisionNum: b.RevisionNum}
	if req.RevisionNum != 0 && action != unit.ActionApply {
		return req, apierr.Validation("RevisionNum is for apply only: a "+action+" acts on what the target holds",
			apierr.Item{Item: "RevisionNum", Description: "apply only"})
	}
	return req, nil
}

func (h unitAPI) startAction(ctx context.Context, spaceID, unitID uuid.UUID, action string, b *api.UnitActionRequest) (api.QueuedOperation, error) {
	req, err := actionRequest(b, action)
	if err != nil {
		return api.QueuedOperation{}, err
	}
	op, err := h.s.deps.Units.StartAction(ctx, scopeOf(ctx), spaceID, unitID, action, req)
	if err != nil {
		return api.QueuedOperation{}, err
	}
	return operationToAPI(op), nil
}

func (h unitAPI) ApplyUnit(ctx context.Context, r api.ApplyUnitRequestObject) (api.ApplyUnitResponseObject, error) {
	op, err := h.startAction(ctx, r.SpaceId, r.UnitId, unit.ActionApply, r.Body)
	if err != nil {
		return nil, err
	}
	return api.ApplyUnit200JSONResponse{Body: op}, nil
}

func (h unitAPI) DestroyUnit(ctx context.Context, r api.DestroyUnitRequestObject) (api.DestroyUnitResponseObject, error) {
	op, err := h.startAction(ctx, r.SpaceId, r.UnitId, unit.ActionDestroy, r.Body)
	if err != nil {
		return nil, err
	}
	return api.DestroyUnit200JSONResponse{Body: op}, nil
}

func (h unitAPI) RefreshUnit(ctx context.Context, r api.RefreshUnitRequestObject) (api.RefreshUnitResponseObject, error) {
	op, err := h.startAction(ctx, r.SpaceId, r.UnitId, unit.ActionRefresh, r.Body)
	if err != nil {
		return nil, err
	}
	return api.RefreshUnit200JSONResponse{Body: op}, nil
}

func (h unitAPI) ImportUnit(ctx context.Context, r api.ImportUnitRequestObject) (api.ImportUnitResponseObject, error) {
	op, err := h.startAction(ctx, r.SpaceId, r.UnitId, unit.ActionImport, r.Body)
	if err != nil {
		return nil, err
	}
	return api.ImportUnit200JSONResponse{Body: op}, nil
}

func actionItem(it entity.BulkItem[unit.QueuedOperation], e *api.ResponseError) api.UnitActionResponse {
	if e != nil {
		return api.UnitActionResponse{Error: e}
	}
	op := operationToAPI(it.Value)
	return api.UnitActionResponse{Action: &op}
}

func bulkAction[P listParamsStruct](ctx context.Context, s *Server, params P, dryRun *bool, action string, b *api.UnitActionRequest) (bulkResponse, error) {
	sel, err := selectionParams(ctx, s, params)
	if err != nil {
		return bulkResponse{}, err
	}
	req, err := actionRequest(b, action)
	if err != nil {
		return bulkResponse{}, err
	}
	items, err := s.deps.Units.BulkAction(ctx, scopeOf(ctx), requestPath(ctx), sel, action, req, flag(dryRun))
	if err != nil {
		return bulkResponse{}, err
	}
	return answeredInBulk(bulkItems(items, actionItem))
}

func (h unitAPI) BulkApplyUnits(ctx context.Context, r api.BulkApplyUnitsRequestObject) (api.BulkApplyUnitsResponseObject, error) {
	return bulkAction(ctx, h.s, r.Params, r.Params.DryRun, unit.ActionApply, r.Body)
}

func (h unitAPI) BulkDestroyUnits(ctx context.Context, r api.BulkDestroyUnitsRequestObject) (api.BulkDestroyUnitsResponseObject, error) {
	return bulkAction(ctx, h.s, r.Params, r.Params.DryRun, unit.ActionDestroy, r.Body)
}

func (h unitAPI) BulkRefreshUnits(ctx context.Context, r api.BulkRefreshUnitsRequestObject) (api.BulkRefreshUnitsResponseObject, error) {
	return bulkAction(ctx, h.s, r.Params, r.Params.DryRun, unit.ActionRefresh, r.Body)
}

func (h unitAPI) BulkCancelUnitActions(ctx context.Context, r api.BulkCancelUnitActionsRequestObject) (api.BulkCancelUnitActionsResponseObject, error) {
	sel, err := selectionParams(ctx, h.s, r.Params)
	if err != nil {
		return nil, err
	}
	items, err := h.s.deps.Units.BulkCancel(ctx, scopeOf(ctx), requestPath(ctx), sel, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return answeredInBulk(bulkItems(items, actionItem))
}

func (h unitAPI) ListQueuedOperations(ctx context.Context, r api.ListQueuedOperationsRequestObject) (api.ListQueuedOperationsResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	ops, err := h.s.deps.Units.Queue(ctx, scopeOf(ctx), r.BridgeWorkerId, params)
	if err != nil {
		return nil, err
	}
	return api.ListQueuedOperations200JSONResponse{Body: operationsToAPI(ops)}, nil
}

func (h unitAPI) GetQueuedOperation(ctx context.Context, r api.GetQueuedOperationRequestObject) (api.GetQueuedOperationResponseObject, error) {
	op, err := h.s.deps.Units.QueuedOperationOf(ctx, scopeOf(ctx), r.BridgeWorkerId, r.QueuedOperationId)
	if err != nil {
		return nil, err
	}
	return api.GetQueuedOperation200JSONResponse{Body: operationToAPI(op)}, nil
}

func (h unitAPI) PollQueuedOperations(ctx context.Context, r api.PollQueuedOperationsRequestObject) (api.PollQueuedOperationsResponseObject, error) {
	return longPoll(ctx, h.s, func() (*event.Poll[unit.QueuedOperation], error) {
		timeout := bridgeworker.DefaultPollSeconds
		if r.Body != nil && r.Body.TimeoutSeconds != nil {
			timeout = *r.Body.TimeoutSeconds
		}
		if timeout < 0 || timeout > bridgeworker.MaxPollSeconds {
			return nil, apierr.Validation("TimeoutSeconds is 0 to 60", apierr.Item{Item: "TimeoutSeconds", Description: "out of range"})
		}
		return h.s.deps.Units.PollQueue(ctx, scopeOf(ctx), h.s.deps.Notifier, r.BridgeWorkerId, time.Duration(timeout)*time.Second)
	}, func(ops []unit.QueuedOperation) (api.PollQueuedOperationsResponseObject, error) {
		return api.PollQueuedOperations200JSONResponse{Body: operationsToAPI(ops)}, nil
	}, api.PollQueuedOperationsResponseObject.VisitPollQueuedOperationsResponse, api.PollQueuedOperationsResponseObject(parkedResponse{}))
}

func actionReport(b *api.ActionResult) unit.ActionReport {
	r := unit.ActionReport{QueuedOperationID: b.QueuedOperationID, UnitID: b.UnitID, SpaceID: b.SpaceID, Action: b.Action,
		Status: b.Status, Result: b.Result, Message: b.Message, ErrorMessages: deref(b.ErrorMessages), StartedAt: b.StartedAt,
		TerminatedAt: b.TerminatedAt, RevisionNum: b.RevisionNum}
	if b.Data != nil {
		r.Data = *b.Data
		if r.Data == nil {
			r.Data = []byte{}
		}
	}
	if b.ResourceStatuses != nil {
		r.ResourceStatuses, _ = json.Marshal(*b.ResourceStatuses)
	}
	return r
}

func (h unitAPI) report(ctx context.Context, worker uuid.UUID, b *api.ActionResult) (api.QueuedOperation, error) {
	op, err := h.s.deps.Units.Report(ctx, scopeOf(ctx), worker, actionReport(b))
	if err != nil {
		return api.QueuedOperation{}, err
	}
	return operationToAPI(op), nil
}

func (h unitAPI) ReportUserActionResult(ctx context.Context, r api.ReportUserActionResultRequestObject) (api.ReportUserActionResultResponseObject, error) {
	op, err := h.report(ctx, r.BridgeWorkerId, r.Body)
	if err != nil {
		return nil, err
	}
	return api.ReportUserActionResult200JSONResponse{Body: op}, nil
}

func (h unitAPI) ReportActionResult(ctx context.Context, r api.ReportActionResultRequestObject) (api.ReportActionResultResponseObject, error) {
	op, err := h.report(ctx, r.BridgeWorkerId, r.Body)
	if err != nil {
		return nil, err
	}
	return api.ReportActionResult200JSONResponse{Body: op}, nil
}

func unitEventToAPI(e unit.UnitEvent) api.UnitEvent {
	resources := map[string]api.ResourceStatus{}
	if len(e.ResourceStatuses) > 0 {
		_ = json.Unmarshal(e.ResourceStatuses, &resources)
	}
	return api.UnitEvent{UnitEventID: e.ID, UnitEventNum: e.UnitEventNum, UnitID: e.UnitID, UnitSlug: e.UnitSlug, SpaceID: e.SpaceID,
		SpaceSlug: e.SpaceSlug, OrganizationID: e.OrganizationID, QueuedOperationID: e.QueuedOperationID, BridgeWorkerID: e.BridgeWorkerID,
		Action: api.QueueActionType(e.Action), Status: api.UnitEventStatus(e.Status), Result: e.Result, Message: e.Message,
		RevisionNum: e.RevisionNum, ResourceStatuses: resources, StartedAt: utcPtr(e.StartedAt), TerminatedAt: utcPtr(e.TerminatedAt),
		HiddenReason: e.HiddenReason, EntityType: unit.UnitEventEntityType, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(), Version: e.Version}
}

// plainPage answers a list whose items are the entities themselves (no Extended form, no select).
func plainPage[E, A any](page listquery.Page[E], err error, toAPI func(E) A) (pageResponse, error) {
	if err != nil {
		return pageResponse{}, err
	}
	out := make([]A, len(page.Items))
	for i := range page.Items {
		out[i] = toAPI(page.Items[i])
	}
	return newPage(out, "", page.PageInfo), nil
}

func (h unitAPI) ListAllUnitActions(ctx context.Context, r api.ListAllUnitActionsRequestObject) (api.ListAllUnitActionsResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	page, err := h.s.deps.Units.ListAllUnitActions(ctx, scopeOf(ctx), requestPath(ctx), params)
	return plainPage(page, err, operationToAPI)
}

func (h unitAPI) ListUnitActions(ctx context.Context, r api.ListUnitActionsRequestObject) (api.ListUnitActionsResponseObject, error) {
	params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)
	if err != nil {
		return nil, err
	}
	page, err := h.s.deps.Units.ListUnitActions(ctx, scopeOf(ctx), r.SpaceId, r.UnitId, requestPath(ctx), params)
	return plainPage(page, err, operationToAPI)
}

func (h unitAPI) GetUnitAction(ctx context.Context, r api.GetUnitActionRequestObject) (api.GetUnitActionResponseObject, error) {
	op, err := h.s.deps.Units.GetUnitAction(ctx, scopeOf(ctx), r.SpaceId, r.UnitId, r.UnitActionId)
	if err != nil {
		return nil, err
	}
	return api.GetUnitAction200JSONResponse{Body: operationToAPI(op)}, nil
}

func (h unitAPI) ListAllUnitEvents(ctx context.Context, r api.ListAllUnitEventsRequestObject) (api.ListAllUnitEventsResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	all := r.Params.DistinctOn != nil && *r.Params.DistinctOn == api.ListAllUnitEventsParamsDistinctOnOff
	page, err := h.s.deps.Units.ListAllUnitEvents(ctx, scopeOf(ctx), requestPath(ctx), params, all)
	return plainPage(page, err, unitEventToAPI)
}

func (h unitAPI) ListUnitEvents(ctx context.Context, r api.ListUnitEventsRequestObject) (api.ListUnitEventsResponseObject, error) {
	params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)
	if err != nil {
		return nil, err
	}
	page, err := h.s.deps.Units.ListUnitEvents(ctx, scopeOf(ctx), r.SpaceId, r.UnitId, requestPath(ctx), params)
	return plainPage(page, err, unitEventToAPI)
}

func (h unitAPI) GetUnitEvent(ctx context.Context, r api.GetUnitEventRequestObject) (api.GetUnitEventResponseObject, error) {
	e, err := h.s.deps.Units.GetUnitEvent(ctx, scopeOf(ctx), r.SpaceId, r.UnitId, r.UnitEventId)
	if err != nil {
		return nil, err
	}
	return api.GetUnitEvent200JSONResponse{Body: unitEventToAPI(e)}, nil
}
