-- name: EventLogInsert :exec
INSERT INTO event_log (organization_id, event_type, space_id, target_id, subject_entity_type, subject_entity_id, payload)
VALUES (@organization_id, @event_type, @space_id, @target_id, @subject_entity_type, @subject_entity_id, @payload);

-- name: EventLogHasPending :one
-- Whether any committed event waits for its cursor; read without locking, so an idle check writes nothing.
SELECT EXISTS (SELECT 1 FROM event_log WHERE cursor_id IS NULL)::boolean;

-- name: EventLogLockSequencer :exec
-- Serializes sequencer passes across replicas until the pass's transaction ends. The pass numbers events
-- in its next statement, whose snapshot is taken once the lock is held, so it never renumbers what the
-- previous pass numbered. (An advisory lock, not a row lock: a pass that finds nothing writes nothing.)
SELECT pg_advisory_xact_lock(hashtext('hubd.event_sequencer'));

-- name: EventLogAssignCursors :one
-- Numbers up to batch committed pending events, in the order they were written, after the last cursor
-- assigned; records the new last cursor; and signals the numbered events on commit with the payload
-- "<last cursor> <organization>,<organization>..." (the cursor alone, waking everyone, when more than
-- max_orgs organizations are concerned). Returns how many it numbered, the last cursor and the
-- organizations (comma-separated).
WITH pending AS (
    SELECT event_id, row_number() OVER (ORDER BY event_id) AS n
    FROM event_log WHERE cursor_id IS NULL
    ORDER BY event_id
    LIMIT sqlc.arg(batch)::int
), assigned AS (
    UPDATE event_log e SET cursor_id = s.last_cursor + p.n
    FROM pending p, event_sequencer s
    WHERE e.event_id = p.event_id AND e.cursor_id IS NULL
    RETURNING e.cursor_id, e.organization_id
), summary AS (
    SELECT count(*)::int AS numbered, max(cursor_id) AS last_cursor, count(DISTINCT organization_id) AS orgs,
           string_agg(DISTINCT organization_id::text, ',') AS org_list
    FROM assigned
), advanced AS (
    UPDATE event_sequencer SET last_cursor = summary.last_cursor FROM summary WHERE summary.numbered > 0
)
SELECT summary.numbered, COALESCE(summary.last_cursor, 0)::bigint AS last_cursor, COALESCE(summary.org_list, '')::text AS org_list
FROM summary
LEFT JOIN LATERAL (
    SELECT pg_notify('hubd_events', CASE WHEN summary.orgs > sqlc.arg(max_orgs)::int THEN summary.last_cursor::text
                                         ELSE summary.last_cursor::text || ' ' || summary.org_list END)
    WHERE summary.numbered > 0
) notified ON true;

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
