-- name: EventLogInsert :exec
INSERT INTO event_log (organization_id, event_type, space_id, target_id, subject_entity_type, subject_entity_id, payload)
VALUES (@organization_id, @event_type, @space_id, @target_id, @subject_entity_type, @subject_entity_id, @payload);

-- name: EventLogHasPending :one
-- Whether any committed event waits for its cursor; read without locking, so an idle check writes nothing.
SELECT EXISTS (SELECT 1 FROM event_log WHERE cursor_id IS NULL)::boolean;

-- name: EventLogLockSequencer :one
-- Serializes sequencer passes across replicas: the row stays locked through the pass's commit. A pass
-- reads pending events only after it holds the lock (a later statement, so a later snapshot), so it
-- never renumbers what the previous pass assigned.
SELECT last_cursor FROM event_sequencer FOR UPDATE;

-- name: EventLogAssignCursors :many
-- Numbers up to batch committed pending events, in the order they were written, after the last cursor
-- assigned (the caller holds the sequencer's row lock).
WITH pending AS (
    SELECT event_id, row_number() OVER (ORDER BY event_id) AS n
    FROM event_log WHERE cursor_id IS NULL
    ORDER BY event_id
    LIMIT @batch
)
UPDATE event_log e SET cursor_id = s.last_cursor + p.n
FROM pending p, event_sequencer s
WHERE e.event_id = p.event_id AND e.cursor_id IS NULL
RETURNING e.cursor_id, e.organization_id;

-- name: EventLogSetLastCursor :exec
UPDATE event_sequencer SET last_cursor = @last_cursor;

-- name: EventLogNotify :exec
SELECT pg_notify('hubd_events', @cursor::text);

-- name: EventLogRead :many
-- Events of an organization after a cursor, in cursor (= commit) order (pending events have no cursor
-- yet and are not read).
SELECT * FROM event_log
WHERE organization_id = @organization_id AND cursor_id > @after
ORDER BY cursor_id
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
