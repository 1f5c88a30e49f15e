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
-- assigned; records the new last cursor; and signals the numbered events on commit. The payload is
-- "<last cursor> <organizations> <organizations where access may have changed>", each list
-- comma-separated and the last "-" when empty; an organization's access may have changed when any of its
-- events is of a family not in quiet_families. When more than max_orgs organizations are concerned the
-- payload is the cursor alone, which wakes everyone. Returns how many it numbered and the payload.
WITH pending AS (
    SELECT event_id, row_number() OVER (ORDER BY event_id) AS n
    FROM event_log WHERE cursor_id IS NULL
    ORDER BY event_id
    LIMIT sqlc.arg(batch)::int
), assigned AS (
    UPDATE event_log e SET cursor_id = s.last_cursor + p.n
    FROM pending p, event_sequencer s
    WHERE e.event_id = p.event_id AND e.cursor_id IS NULL
    RETURNING e.cursor_id, e.organization_id, split_part(e.event_type, '.', 1) <> ALL (COALESCE(sqlc.arg(quiet_families)::text[], '{}')) AS access
), summary AS (
    SELECT count(*)::int AS numbered, max(cursor_id) AS last_cursor, count(DISTINCT organization_id) AS orgs,
           string_agg(DISTINCT organization_id::text, ',') AS org_list,
           string_agg(DISTINCT organization_id::text, ',') FILTER (WHERE access) AS access_org_list
    FROM assigned
), advanced AS (
    UPDATE event_sequencer SET last_cursor = summary.last_cursor FROM summary WHERE summary.numbered > 0
), signal AS (
    SELECT summary.numbered,
           CASE WHEN summary.numbered = 0 THEN ''
                WHEN summary.orgs > sqlc.arg(max_orgs)::int THEN summary.last_cursor::text
                ELSE summary.last_cursor::text || ' ' || summary.org_list || ' ' || COALESCE(summary.access_org_list, '-')
           END AS payload
    FROM summary
)
SELECT signal.numbered, signal.payload::text AS payload
FROM signal
LEFT JOIN LATERAL (SELECT pg_notify('hubd_events', signal.payload) WHERE signal.numbered > 0) notified ON true;

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
