package unit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// UnitActionEntityType names UnitActions in lists (the QueuedOperations of a Unit).
const UnitActionEntityType = "UnitAction"

// actionRow is a listed QueuedOperation with its Unit's and Space's Slugs.
type actionRow struct {
	QueuedOperationID uuid.UUID       `db:"queued_operation_id"`
	Seq               int64           `db:"seq"`
	OrganizationID    uuid.UUID       `db:"organization_id"`
	SpaceID           uuid.UUID       `db:"space_id"`
	UnitID            uuid.UUID       `db:"unit_id"`
	TargetID          uuid.UUID       `db:"target_id"`
	BridgeWorkerID    uuid.UUID       `db:"bridge_worker_id"`
	UserID            *uuid.UUID      `db:"user_id"`
	Action            string          `db:"action"`
	Status            string          `db:"status"`
	UnitActionNum     int64           `db:"unit_action_num"`
	RevisionNum       int64           `db:"revision_num"`
	DryRun            bool            `db:"dry_run"`
	Data              []byte          `db:"data"`
	ErrorDetails      json.RawMessage `db:"error_details"`
	ClaimExpiresAt    *time.Time      `db:"claim_expires_at"`
	Version           int64           `db:"version"`
	CreatedAt         time.Time       `db:"created_at"`
	UpdatedAt         time.Time       `db:"updated_at"`
	UnitSlug          string          `db:"unit_slug"`
	SpaceSlug         string          `db:"space_slug"`
	ToolchainType     string          `db:"toolchain_type"`
}

func actionFromListRow(r *actionRow) (QueuedOperation, error) {
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
		UnitSlug: r.UnitSlug, SpaceSlug: r.SpaceSlug, ToolchainType: r.ToolchainType, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Version: r.Version}, nil
}

// UnitActionList is how UnitActions are listed (per Unit, and the latest of each Unit); they are visible
// with their Unit (indexes: migration 000033).
var UnitActionList = listquery.Define(&listquery.Entity{
	Name:    UnitActionEntityType,
	From:    "queued_operation JOIN unit hubd_u ON hubd_u.unit_id = queued_operation.unit_id JOIN space hubd_s ON hubd_s.space_id = queued_operation.space_id",
	Columns: "queued_operation.*, hubd_u.slug AS unit_slug, hubd_s.slug AS space_slug, hubd_u.toolchain_type",
	ID:      "QueuedOperationID", Org: "queued_operation.organization_id",
	Contains: "queued_operation.action || ' ' || queued_operation.status", ContainsAttrs: []string{"Action", "Status"},
	Visibility: visibleWithUnit("queued_operation"),
	Attributes: append([]listquery.Attribute{
		attr("QueuedOperationID", listquery.UUID, "queued_operation.queued_operation_id", orderable, always),
		attr("UnitActionNum", listquery.Int, "queued_operation.unit_action_num", orderable),
		attr("UnitID", listquery.UUID, "queued_operation.unit_id", orderable, always),
		attr("SpaceID", listquery.UUID, "queued_operation.space_id", orderable, always),
		attr("OrganizationID", listquery.UUID, "queued_operation.organization_id", orderable, always),
		attr("TargetID", listquery.UUID, "queued_operation.target_id", orderable),
		attr("BridgeWorkerID", listquery.UUID, "queued_operation.bridge_worker_id", orderable),
		attr("UserID", listquery.UUID, "queued_operation.user_id", nullableUUID("queued_operation.user_id")),
		attr("Action", listquery.String, "queued_operation.action", orderable),
		attr("Status", listquery.String, "queued_operation.status", orderable),
		attr("RevisionNum", listquery.Int, "queued_operation.revision_num", orderable),
		attr("DryRun", listquery.Bool, "queued_operation.dry_run"),
		attr("CreatedAt", listquery.Time, "queued_operation.created_at", orderable),
		attr("UpdatedAt", listquery.Time, "queued_operation.updated_at", orderable),
	}, opaque("Data", "Dependencies", "ErrorDetails", "UnitSlug", "SpaceSlug", "ToolchainType", "EntityType", "Version")...),
})

// UnitEvent is one report on an action of a Unit (or its cancellation or abort).
type UnitEvent struct {
	ID, OrganizationID, SpaceID, UnitID, QueuedOperationID, BridgeWorkerID uuid.UUID
	UnitEventNum, RevisionNum                                              int64
	Action, Status, Result, Message, UnitSlug, SpaceSlug, HiddenReason     string
	ResourceStatuses                                                       json.RawMessage
	StartedAt, TerminatedAt                                                *time.Time
	CreatedAt, UpdatedAt                                                   time.Time
	Version                                                                int64
}

// eventRow is a UnitEvent with its Unit's and Space's Slugs (lists scan it by column name).
type eventRow = db.UnitEventsByIDsRow

func eventFromRow(r *eventRow) (UnitEvent, error) {
	return UnitEvent{ID: r.UnitEventID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, UnitID: r.UnitID,
		QueuedOperationID: r.QueuedOperationID, BridgeWorkerID: r.BridgeWorkerID, UnitEventNum: r.UnitEventNum,
		RevisionNum: r.RevisionNum, Action: r.Action, Status: r.Status, Result: r.Result, Message: r.Message,
		UnitSlug: r.UnitSlug, SpaceSlug: r.SpaceSlug, ResourceStatuses: r.ResourceStatuses, StartedAt: r.StartedAt,
		TerminatedAt: r.TerminatedAt, HiddenReason: r.HiddenReason, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Version: r.Version}, nil
}

// UnitEventList is how UnitEvents are listed (per Unit, and the latest of each Unit); they are visible
// with their Unit.
var UnitEventList = listquery.Define(&listquery.Entity{
	Name:    UnitEventEntityType,
	From:    "unit_event JOIN unit hubd_u ON hubd_u.unit_id = unit_event.unit_id JOIN space hubd_s ON hubd_s.space_id = unit_event.space_id",
	Columns: "unit_event.*, hubd_u.slug AS unit_slug, hubd_s.slug AS space_slug",
	ID:      "UnitEventID", Org: "unit_event.organization_id",
	Contains: "unit_event.result || ' ' || unit_event.message", ContainsAttrs: []string{"Result", "Message"},
	HiddenReason: "unit_event.hidden_reason",
	Visibility:   visibleWithUnit("unit_event"),
	Attributes: append([]listquery.Attribute{
		attr("UnitEventID", listquery.UUID, "unit_event.unit_event_id", orderable, always),
		attr("UnitEventNum", listquery.Int, "unit_event.unit_event_num", orderable),
		attr("UnitID", listquery.UUID, "unit_event.unit_id", orderable, always),
		attr("SpaceID", listquery.UUID, "unit_event.space_id", orderable, always),
		attr("OrganizationID", listquery.UUID, "unit_event.organization_id", orderable, always),
		attr("QueuedOperationID", listquery.UUID, "unit_event.queued_operation_id", orderable),
		attr("BridgeWorkerID", listquery.UUID, "unit_event.bridge_worker_id", orderable),
		attr("Action", listquery.String, "unit_event.action", orderable),
		attr("Status", listquery.String, "unit_event.status", orderable),
		attr("Result", listquery.String, "unit_event.result", orderable),
		attr("Message", listquery.String, "unit_event.message"),
		attr("RevisionNum", listquery.Int, "unit_event.revision_num", orderable),
		attr("StartedAt", listquery.Time, "unit_event.started_at", nullable),
		attr("TerminatedAt", listquery.Time, "unit_event.terminated_at", nullable),
		attr("CreatedAt", listquery.Time, "unit_event.created_at", orderable),
		attr("UpdatedAt", listquery.Time, "unit_event.updated_at", orderable),
		attr("HiddenReason", listquery.String, "unit_event.hidden_reason", orderable),
	}, opaque("ResourceStatuses", "UnitSlug", "SpaceSlug", "EntityType", "Version")...),
})

// ListUnitActions returns a page of one Unit's UnitActions.
func (s *Service) ListUnitActions(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, path string, params listquery.Params) (listquery.Page[QueuedOperation], error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return listquery.Page[QueuedOperation]{}, err
	}
	if params.OrderBy == "" {
		params.OrderBy = "UnitActionNum"
	}
	page, err := listquery.Run[actionRow](ctx, s.Store.Pool, s.Tokens, listquery.Query{Entity: UnitActionList, Caller: sc, Path: path, Params: params,
		Scope: []listquery.Condition{{Column: "queued_operation.unit_id", Value: unitID}}})
	if err != nil {
		return listquery.Page[QueuedOperation]{}, err
	}
	return listquery.MapPage(page, actionFromListRow)
}

// ListAllUnitActions lists the latest matching UnitAction of each Unit the caller may view.
func (s *Service) ListAllUnitActions(ctx context.Context, sc authz.Scope, path string, params listquery.Params) (listquery.Page[QueuedOperation], error) {
	q := listquery.Query{Entity: UnitActionList, Caller: sc, Path: path + "?distinct_on=Unit", Params: params,
		Distinct: &listquery.Distinct{Partition: "queued_operation.unit_id", Latest: "queued_operation.unit_action_num"}}
	page, err := listquery.Run[actionRow](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[QueuedOperation]{}, err
	}
	return listquery.MapPage(page, actionFromListRow)
}

// GetUnitAction returns one UnitAction of a Unit the caller may view.
func (s *Service) GetUnitAction(ctx context.Context, sc authz.Scope, spaceID, unitID, id uuid.UUID) (QueuedOperation, error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return QueuedOperation{}, err
	}
	op, err := s.operationIn(ctx, s.Store.Q(), sc.OrganizationID, id)
	if err == nil && op.UnitID != unitID {
		err = apierr.NotFound(UnitActionEntityType, id.String())
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		err = apierr.NotFound(UnitActionEntityType, id.String())
	}
	return op, err
}

// ListUnitEvents returns a page of one Unit's UnitEvents.
func (s *Service) ListUnitEvents(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, path string, params listquery.Params) (listquery.Page[UnitEvent], error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return listquery.Page[UnitEvent]{}, err
	}
	if params.OrderBy == "" {
		params.OrderBy = "UnitEventNum"
	}
	return s.listEvents(ctx, listquery.Query{Entity: UnitEventList, Caller: sc, Path: path, Params: params,
		Scope: []listquery.Condition{{Column: "unit_event.unit_id", Value: unitID}}})
}

func (s *Service) listEvents(ctx context.Context, q listquery.Query) (listquery.Page[UnitEvent], error) {
	page, err := listquery.Run[eventRow](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[UnitEvent]{}, err
	}
	return listquery.MapPage(page, eventFromRow)
}

// ListAllUnitEvents lists UnitEvents across the organization: the latest matching one of each Unit, or
// with all (distinct_on=Off) every match, which needs an explicit limit and a where or filter (the whole
// history of every Unit is not one read).
func (s *Service) ListAllUnitEvents(ctx context.Context, sc authz.Scope, path string, params listquery.Params, all bool) (listquery.Page[UnitEvent], error) {
	if all && params.Limit == nil {
		return listquery.Page[UnitEvent]{}, apierr.UserInput("distinct_on=Off returns every UnitEvent and needs an explicit limit",
			apierr.Item{Item: "distinct_on", Description: "Off requires limit"})
	}
	if all && params.Where == "" && params.Filter == "" {
		return listquery.Page[UnitEvent]{}, apierr.UserInput("distinct_on=Off needs a where or a filter to narrow the UnitEvents",
			apierr.Item{Item: "distinct_on", Description: "Off requires where or filter"})
	}
	q := listquery.Query{Entity: UnitEventList, Caller: sc, Path: path, Params: params}
	if !all {
		q.Distinct = &listquery.Distinct{Partition: "unit_event.unit_id", Latest: "unit_event.unit_event_num"}
		q.Path += "?distinct_on=Unit"
	}
	return s.listEvents(ctx, q)
}

// GetUnitEvent returns one UnitEvent of a Unit the caller may view.
func (s *Service) GetUnitEvent(ctx context.Context, sc authz.Scope, spaceID, unitID, id uuid.UUID) (UnitEvent, error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return UnitEvent{}, err
	}
	page, err := s.listEvents(ctx, listquery.Query{Entity: UnitEventList, Caller: sc, Path: "unit_event/get",
		Scope: []listquery.Condition{{Column: "unit_event.unit_id", Value: unitID}, {Column: "unit_event.unit_event_id", Value: id}}})
	if err != nil {
		return UnitEvent{}, err
	}
	if len(page.Items) == 0 {
		return UnitEvent{}, apierr.NotFound(UnitEventEntityType, id.String())
	}
	return page.Items[0], nil
}

// UnitEventsByID loads UnitEvents of Units the caller may view, by ID (include=UnitEventID of Units).
func (s *Service) UnitEventsByID(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]UnitEvent, error) {
	out := map[uuid.UUID]UnitEvent{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.Store.Q().UnitEventsByIDs(ctx, db.UnitEventsByIDsParams{OrganizationID: sc.OrganizationID, UnitEventIds: ids})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		e, _ := eventFromRow(r)
		out[e.ID] = e
	}
	return out, nil
}
