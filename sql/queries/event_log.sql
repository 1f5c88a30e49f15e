-- name: EventLogAppend :one
-- Inserts a transaction's events (a JSON array, hubd_append_events) and, when asked to, numbers them with
-- every other pending event if the sequencer's lock is free; numbered is -1 when not (they stay pending).
SELECT numbered::int AS numbered, payload::text AS payload
FROM hubd_append_events(sqlc.arg(events)::jsonb, sqlc.arg(number)::boolean, sqlc.arg(batch)::int, sqlc.arg(quiet_families)::text[], sqlc.arg(max_orgs)::int);

-- name: EventLogHasPending :one
-- Whether any committed event waits for its cursor; read without locking, so an idle check writes nothing.
SELECT EXISTS (SELECT 1 FROM event_log WHERE cursor_id IS NULL)::boolean;

-- name: EventLogSequencePass :one
-- One sequencer pass (hubd_sequence_pass, a function so the pass is one statement and one round trip):
-- takes the sequencer's lock, numbers up to batch committed pending events after the last cursor, and
-- signals them on commit. Returns how many it numbered and the NOTIFY payload.
SELECT numbered::int AS numbered, payload::text AS payload
FROM hubd_sequence_pass(sqlc.arg(batch)::int, sqlc.arg(quiet_families)::text[], sqlc.arg(max_orgs)::int);

-- name: EventLogRead :many
-- Events of an organization after a cursor, in cursor (= commit) order (pending events have no cursor
-- yet and are not read).
SELECT * FROM event_log
WHERE organization_id = @organization_id AND cursor_id > @after
ORDER BY cursor_id
LIMIT @max_events;

-- name: EventLogReadGranted :many
-- EventLogRead with the Permissions of each event's Space and Target (null when it has none, or it is
-- gone), which the visibility rule needs: a replica's shared read of the log in one statement.
--
-- When claim_worker is given, the same statement also claims what it reads for that worker's event
-- cursor claim_name, as BridgeWorkerCursorsAdvance does (moves the cursor from after to the last entry
-- read, only if it is still at after), and claimed tells whether it moved: a worker poll reading on its
-- own reads and claims in one round trip. Both parts see one snapshot, so the claim covers exactly the
-- entries returned.
WITH last_read AS (
    -- Read only for a claim (a one-time filter when there is none).
    SELECT max(r.cursor_id) AS last_cursor FROM (
        SELECT cursor_id FROM event_log
        WHERE sqlc.narg(claim_worker)::uuid IS NOT NULL AND organization_id = @organization_id AND cursor_id > @after
        ORDER BY cursor_id
        LIMIT @max_events
    ) r
), claimed AS (
    UPDATE bridge_worker_cursor c SET cursor = last_read.last_cursor, updated_at = now()
    FROM last_read
    WHERE c.bridge_worker_id = sqlc.narg(claim_worker) AND c.name = @claim_name AND c.cursor = @after
      AND last_read.last_cursor IS NOT NULL
    RETURNING c.cursor
)
SELECT sqlc.embed(event_log), s.permissions AS space_permissions, t.space_id AS target_space_id, t.permissions AS target_permissions,
       EXISTS (SELECT FROM claimed)::boolean AS claimed
FROM event_log
LEFT JOIN space s ON s.organization_id = event_log.organization_id AND s.space_id = event_log.space_id
LEFT JOIN target t ON t.organization_id = event_log.organization_id AND t.target_id = event_log.target_id
WHERE event_log.organization_id = @organization_id AND event_log.cursor_id > @after
ORDER BY event_log.cursor_id
LIMIT @max_events;

-- name: EventLogTail :one
-- The newest cursor: new consumers start after it.
SELECT last_cursor FROM event_sequencer;

-- name: EventLogPrune :execrows
-- Deletes up to batch events older than the retention; run repeatedly, from any replica.
DELETE FROM event_log WHERE event_id IN (
    SELECT event_id FROM event_log WHERE created_at < now() - make_interval(secs => @retention_seconds::bigint)
    ORDER BY created_at LIMIT @batch
);
