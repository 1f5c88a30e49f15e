-- name: QueueWorkerGet :one
-- A worker of the organization by ID, with its bot User (the one caller its queue answers) and how long
-- it may hold an operation without reporting.
SELECT bridge_worker_id, user_id, claim_ttl_seconds FROM bridge_worker
WHERE organization_id = @organization_id AND bridge_worker_id = @bridge_worker_id;

-- name: UnitNextActionNum :one
UPDATE unit SET head_unit_action_num = head_unit_action_num + 1
WHERE organization_id = @organization_id AND unit_id = @unit_id
RETURNING head_unit_action_num;

-- name: UnitNextEventNum :one
-- The next UnitEventNum, and the event becomes the Unit's latest (Unit.UnitEventID).
UPDATE unit SET head_unit_event_num = head_unit_event_num + 1, unit_event_id = @unit_event_id
WHERE organization_id = @organization_id AND unit_id = @unit_id
RETURNING head_unit_event_num;

-- name: QueuedOperationInsert :exec
INSERT INTO queued_operation (queued_operation_id, organization_id, space_id, unit_id, target_id, bridge_worker_id, user_id,
                              action, status, unit_action_num, revision_num, dry_run, data)
VALUES (@queued_operation_id, @organization_id, @space_id, @unit_id, @target_id, @bridge_worker_id, @user_id,
        @action, 'Pending', @unit_action_num, @revision_num, @dry_run, @data);

-- name: QueuedOperationDeliver :exec
-- Reading a worker's queue marks its Pending operations Delivered.
UPDATE queued_operation SET status = 'Delivered', version = version + 1, updated_at = now()
WHERE bridge_worker_id = @bridge_worker_id AND status = 'Pending';

-- name: QueuedOperationOutstanding :many
SELECT sqlc.embed(q), u.slug AS unit_slug, s.slug AS space_slug, u.toolchain_type
FROM queued_operation q
JOIN unit u ON u.unit_id = q.unit_id
JOIN space s ON s.space_id = q.space_id
WHERE q.bridge_worker_id = @bridge_worker_id AND q.status IN ('Pending', 'Delivered')
ORDER BY q.seq
LIMIT @max_items;

-- name: QueuedOperationGet :one
SELECT sqlc.embed(q), u.slug AS unit_slug, s.slug AS space_slug, u.toolchain_type
FROM queued_operation q
JOIN unit u ON u.unit_id = q.unit_id
JOIN space s ON s.space_id = q.space_id
WHERE q.organization_id = @organization_id AND q.queued_operation_id = @queued_operation_id;

-- name: QueuedOperationLock :one
SELECT * FROM queued_operation WHERE queued_operation_id = @queued_operation_id FOR UPDATE;

-- name: QueuedOperationSetStatus :exec
UPDATE queued_operation
SET status = @status, claim_expires_at = @claim_expires_at, data = @data, error_details = @error_details,
    version = version + 1, updated_at = now()
WHERE queued_operation_id = @queued_operation_id;

-- name: QueuedOperationRenewClaim :exec
UPDATE queued_operation SET claim_expires_at = @claim_expires_at
WHERE queued_operation_id = @queued_operation_id AND status = 'Progressing';

-- name: QueuedOperationsOfUnit :many
-- A Unit's operations still outstanding or in progress, locked, newest first (cancel).
SELECT * FROM queued_operation
WHERE organization_id = @organization_id AND unit_id = @unit_id AND status IN ('Pending', 'Delivered', 'Progressing')
ORDER BY unit_action_num DESC
FOR UPDATE;

-- name: QueuedOperationBusy :one
-- Whether a worker holds an operation of the Unit (it read it or is carrying it out): the Unit is not deleted then.
SELECT EXISTS (SELECT 1 FROM queued_operation
              WHERE organization_id = @organization_id AND unit_id = @unit_id AND status IN ('Delivered', 'Progressing'));

-- name: QueuedOperationsExpire :many
-- Progressing operations past their claim become Aborted (the periodic sweep).
UPDATE queued_operation SET status = 'Aborted', claim_expires_at = NULL, version = version + 1, updated_at = now()
WHERE queued_operation_id IN (
    SELECT queued_operation_id FROM queued_operation
    WHERE status = 'Progressing' AND claim_expires_at < @as_of::timestamptz
    ORDER BY claim_expires_at LIMIT 100 FOR UPDATE SKIP LOCKED)
RETURNING *;

-- name: UnitEventInsert :exec
INSERT INTO unit_event (unit_event_id, organization_id, space_id, unit_id, queued_operation_id, bridge_worker_id, unit_event_num,
                        action, status, result, message, revision_num, resource_statuses, started_at, terminated_at)
VALUES (@unit_event_id, @organization_id, @space_id, @unit_id, @queued_operation_id, @bridge_worker_id, @unit_event_num,
        @action, @status, @result, @message, @revision_num, @resource_statuses, @started_at, @terminated_at);

-- name: UnitEventsByIDs :many
-- UnitEvents by ID, of Units the caller was shown (include=UnitEventID of Units).
SELECT e.*, u.slug AS unit_slug, s.slug AS space_slug
FROM unit_event e
JOIN unit u ON u.unit_id = e.unit_id
JOIN space s ON s.space_id = e.space_id
WHERE e.organization_id = @organization_id AND e.unit_event_id = ANY(@unit_event_ids::uuid[]);

-- name: QueuedOperationMoveUnit :exec
-- A moved Unit takes its UnitActions and UnitEvents along (they are visible with it).
UPDATE queued_operation SET space_id = @to_space_id WHERE organization_id = @organization_id AND unit_id = @unit_id;

-- name: UnitEventMoveUnit :exec
UPDATE unit_event SET space_id = @to_space_id WHERE organization_id = @organization_id AND unit_id = @unit_id;
