-- name: EventLogLock :exec
-- Held from the insert to the commit: cursors are handed out in commit order.
SELECT pg_advisory_xact_lock(hashtext('hubd.event_log'));

-- name: EventLogInsert :one
INSERT INTO event_log (organization_id, event_type, space_id, target_id, subject_entity_type, subject_entity_id, payload)
VALUES (@organization_id, @event_type, @space_id, @target_id, @subject_entity_type, @subject_entity_id, @payload)
RETURNING cursor_id;

-- name: EventLogNotify :exec
SELECT pg_notify('hubd_events', @cursor::text);

-- name: EventLogRead :many
-- Events of an organization after a cursor, in cursor (= commit) order.
SELECT * FROM event_log
WHERE organization_id = @organization_id AND cursor_id > @after
ORDER BY cursor_id
LIMIT @max_events;

-- name: EventLogTail :one
-- The newest cursor: new consumers start after it.
SELECT COALESCE(max(cursor_id), 0)::bigint FROM event_log;

-- name: EventLogPrune :execrows
-- Deletes up to @batch events older than the retention; run repeatedly, from any replica.
DELETE FROM event_log WHERE cursor_id IN (
    SELECT cursor_id FROM event_log WHERE created_at < now() - make_interval(secs => @retention_seconds::bigint)
    ORDER BY cursor_id LIMIT @batch
);
