-- name: ChannelInsert :one
INSERT INTO channel (channel_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                     permissions, commands, subscriptions, event_bookmark)
VALUES (@channel_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @permissions, @commands, @subscriptions, @event_bookmark)
RETURNING *;

-- name: ChannelUpdate :one
UPDATE channel
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, commands = @commands,
    subscriptions = @subscriptions, event_bookmark = @event_bookmark, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND channel_id = @channel_id AND version = @version
RETURNING *;

-- name: ChannelLeasesFor :many
SELECT * FROM channel_lease WHERE channel_id = ANY(@channel_ids::uuid[]) AND expires_at > now();

-- name: ChannelLeaseTake :one
-- Takes the lease when it is free or expired; no row when another holder has a live lease.
INSERT INTO channel_lease (channel_id, claim_token, holder_user_id, holder_address, commands, expires_at)
VALUES (@channel_id, @claim_token, @holder_user_id, @holder_address, @commands, now() + make_interval(secs => @lease_seconds::int))
ON CONFLICT (channel_id) DO UPDATE
SET claim_token = EXCLUDED.claim_token, holder_user_id = EXCLUDED.holder_user_id, holder_address = EXCLUDED.holder_address,
    commands = EXCLUDED.commands, acquired_at = now(), expires_at = EXCLUDED.expires_at
WHERE channel_lease.expires_at <= now()
RETURNING *;

-- name: ChannelLeaseRenew :one
-- Renews the lease the claim token holds and, when it does, marks the Channel seen (as ChannelSeen) in the
-- same statement: a poll's take renews and is seen in one round trip. Answers the commands the lease claims.
WITH renewed AS (
  UPDATE channel_lease SET expires_at = now() + make_interval(secs => @lease_seconds::int)
  WHERE channel_lease.channel_id = @channel_id AND claim_token = @claim_token AND expires_at > now()
  RETURNING *
), seen AS (
  UPDATE channel SET last_seen_at = now()
  WHERE channel.channel_id = @channel_id AND EXISTS (SELECT FROM renewed)
    AND (last_seen_at IS NULL OR last_seen_at < now() - interval '15 seconds')
)
SELECT commands FROM renewed;

-- name: ChannelLeaseRelease :execrows
DELETE FROM channel_lease WHERE channel_id = @channel_id AND claim_token = @claim_token AND expires_at > now();

-- name: ChannelSeen :exec
-- At most every 15 seconds (Last Seen needs no finer grain), so polls do not rewrite the row each pass.
UPDATE channel SET last_seen_at = now()
WHERE channel_id = @channel_id AND (last_seen_at IS NULL OR last_seen_at < now() - interval '15 seconds');

-- name: ChannelBookmarkForUpdate :one
-- The bookmark, locked so handing out events and moving the bookmark (PATCH) take turns.
-- NO KEY UPDATE: it does not block inserting runs (their foreign key takes KEY SHARE).
SELECT event_bookmark, subscriptions FROM channel WHERE channel_id = @channel_id FOR NO KEY UPDATE;

-- name: ChannelBookmarkAdvance :exec
UPDATE channel SET event_bookmark = @event_bookmark WHERE channel_id = @channel_id;

-- name: ChannelsDeclaring :many
-- Channels declaring a command, for resolving a run by command name (at most a few are needed).
SELECT * FROM channel
WHERE organization_id = @organization_id AND commands ? @command::text
  AND (sqlc.narg(space_id)::uuid IS NULL OR space_id = sqlc.narg(space_id)::uuid)
ORDER BY channel_id
LIMIT 2;

-- name: ChannelGetInOrg :one
SELECT * FROM channel WHERE organization_id = @organization_id AND channel_id = @channel_id;

-- name: ChannelBookmarksAdvance :many
-- Moves each Channel's bookmark from the position its poll read to past the events it read, only where
-- it is still there (compare and set; a PATCH may have moved it). One statement for every poll a commit
-- woke; it answers the Channels whose bookmark it moved.
UPDATE channel c SET event_bookmark = v.to_bookmark
FROM (SELECT unnest(@channel_ids::uuid[]) AS channel_id, unnest(@from_bookmarks::bigint[]) AS from_bookmark,
             unnest(@to_bookmarks::bigint[]) AS to_bookmark) v
WHERE c.channel_id = v.channel_id AND c.event_bookmark = v.from_bookmark
RETURNING c.channel_id, v.from_bookmark::bigint AS from_bookmark;
