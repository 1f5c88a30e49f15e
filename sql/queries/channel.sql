-- name: ChannelGetByID :one
SELECT * FROM channel WHERE organization_id = @organization_id AND space_id = @space_id AND channel_id = @channel_id;

-- name: ChannelGetBySlug :one
SELECT * FROM channel WHERE organization_id = @organization_id AND space_id = @space_id AND slug = @slug;

-- name: ChannelGetByIDForUpdate :one
SELECT * FROM channel WHERE organization_id = @organization_id AND space_id = @space_id AND channel_id = @channel_id FOR UPDATE;

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

-- name: ChannelDelete :execrows
DELETE FROM channel WHERE organization_id = @organization_id AND space_id = @space_id AND channel_id = @channel_id;

-- name: ChannelLeaseGet :one
SELECT * FROM channel_lease WHERE channel_id = @channel_id AND expires_at > now();

-- name: ChannelLeasesFor :many
SELECT * FROM channel_lease WHERE channel_id = ANY(@channel_ids::uuid[]) AND expires_at > now();
