-- name: BridgeWorkerGetWithRole :one
SELECT bw.*, m.org_role FROM bridge_worker bw
JOIN organization_member m ON m.user_id = bw.user_id AND m.organization_id = bw.organization_id
WHERE bw.organization_id = @organization_id AND bw.space_id = @space_id AND bw.bridge_worker_id = @bridge_worker_id;

-- name: BridgeWorkerKeyShare :one
-- A worker of the organization in any Space, for a Target naming it. The key-share lock lasts until the
-- Target's write commits, so a delete waits for it (and then meets the foreign key), while polls
-- updating last_seen_at do not.
SELECT bridge_worker_id FROM bridge_worker
WHERE organization_id = @organization_id AND bridge_worker_id = @bridge_worker_id FOR KEY SHARE;

-- name: BridgeWorkerGetForAuth :one
-- The worker and its bot User's role, by ID alone: /auth/worker has no organization yet.
SELECT bw.*, m.org_role FROM bridge_worker bw
JOIN organization_member m ON m.user_id = bw.user_id AND m.organization_id = bw.organization_id
WHERE bw.bridge_worker_id = @bridge_worker_id;

-- name: BridgeWorkerInsert :one
INSERT INTO bridge_worker (bridge_worker_id, organization_id, space_id, user_id, slug, display_name, labels, annotations,
                           delete_gates, permissions, secret_hash, secret_max_org_role, claim_ttl_seconds, provided_info)
VALUES (@bridge_worker_id, @organization_id, @space_id, @user_id, @slug, @display_name, @labels, @annotations,
        @delete_gates, @permissions, @secret_hash, @secret_max_org_role, @claim_ttl_seconds, @provided_info)
RETURNING bridge_worker_id;

-- name: BridgeWorkerUpdate :one
UPDATE bridge_worker
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, claim_ttl_seconds = @claim_ttl_seconds,
    provided_info = @provided_info, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND bridge_worker_id = @bridge_worker_id AND version = @version
RETURNING bridge_worker_id;

-- name: BridgeWorkerSetSecret :exec
-- A new Secret replaces the old one, which stops working at once.
UPDATE bridge_worker SET secret_hash = @secret_hash, secret_max_org_role = @secret_max_org_role
WHERE organization_id = @organization_id AND bridge_worker_id = @bridge_worker_id;

-- name: BridgeWorkerSeen :exec
-- At most every 15 seconds (Condition needs no finer grain), so polls do not rewrite the row each pass.
UPDATE bridge_worker SET last_seen_at = now()
WHERE bridge_worker_id = @bridge_worker_id AND (last_seen_at IS NULL OR last_seen_at < now() - interval '15 seconds');

-- name: BridgeWorkerCursorForUpdate :one
-- The named cursor, locked so pollers sharing a Name take turns: each event goes to one of them.
SELECT cursor FROM bridge_worker_cursor WHERE bridge_worker_id = @bridge_worker_id AND name = @name FOR UPDATE;

-- name: BridgeWorkerCursorAdvance :exec
UPDATE bridge_worker_cursor SET cursor = @cursor, updated_at = now()
WHERE bridge_worker_id = @bridge_worker_id AND name = @name;

-- name: BridgeWorkerCursorCreate :one
-- Creates the named cursor at @cursor unless another poller just did; answers the stored cursor, locked.
INSERT INTO bridge_worker_cursor (bridge_worker_id, name, cursor)
VALUES (@bridge_worker_id, @name, @cursor)
ON CONFLICT (bridge_worker_id, name) DO UPDATE SET cursor = bridge_worker_cursor.cursor
RETURNING cursor;

-- name: BridgeWorkerCursorGet :one
SELECT cursor FROM bridge_worker_cursor WHERE bridge_worker_id = @bridge_worker_id AND name = @name;

-- name: BridgeWorkerCursorsAdvance :many
-- Moves each named cursor from the position its poll read to past the events it read, only where it is
-- still at that position (compare and set): of the polls sharing a Name, one takes each range of events.
-- One statement for every poll a commit woke; it answers the cursors it moved.
UPDATE bridge_worker_cursor c SET cursor = v.to_cursor, updated_at = now()
FROM (SELECT unnest(@bridge_worker_ids::uuid[]) AS bridge_worker_id, unnest(@names::text[]) AS name,
             unnest(@from_cursors::bigint[]) AS from_cursor, unnest(@to_cursors::bigint[]) AS to_cursor) v
WHERE c.bridge_worker_id = v.bridge_worker_id AND c.name = v.name AND c.cursor = v.from_cursor
RETURNING c.bridge_worker_id, c.name, v.from_cursor::bigint AS from_cursor;
