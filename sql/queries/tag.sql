-- name: TagGetInOrganizationForShare :one
-- Held by a write putting the Tag on Revisions until it commits: a Tag delete (FOR UPDATE) waits for it.
SELECT * FROM tag WHERE organization_id = @organization_id AND tag_id = @tag_id FOR SHARE;

-- name: TagInsert :one
INSERT INTO tag (tag_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates, change_order_id, change_set_id)
VALUES (@tag_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates, sqlc.narg(change_order_id), sqlc.narg(change_set_id))
RETURNING *;

-- name: TagUpdate :one
UPDATE tag
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND tag_id = @tag_id AND version = @version
RETURNING *;

-- name: TagRemoveFromRevisions :exec
-- A deleted Tag leaves no trace on Revisions.
UPDATE revision SET tags = tags - @tag_id::text WHERE organization_id = @organization_id AND tags ? @tag_id::text;

-- name: TagPutOnRevisions :exec
UPDATE revision SET tags = tags || jsonb_build_object(@tag_id::text, @tagged_at::text)
WHERE organization_id = @organization_id AND revision_id = ANY(@revision_ids::uuid[]);
