-- name: GroupInsert :one
INSERT INTO user_group (group_id, organization_id, slug, display_name, user_ids, labels, annotations, delete_gates)
VALUES (@group_id, @organization_id, @slug, @display_name, @user_ids::uuid[], @labels, @annotations, @delete_gates)
RETURNING *;

-- name: GroupUpdate :one
UPDATE user_group
SET slug = @slug, display_name = @display_name, user_ids = @user_ids::uuid[], labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND group_id = @group_id AND version = @version
RETURNING *;

-- name: GroupIDsOfMember :many
-- The Groups of the organization a User is in: asked on every authenticated request (GIN on user_ids).
SELECT group_id FROM user_group WHERE organization_id = @organization_id AND user_ids @> ARRAY[@user_id::uuid]
ORDER BY group_id;

-- name: GroupIDsOfMembers :many
-- The Groups of the organization each of the given Users is in (User.GroupIDs of a page, in one query).
SELECT u.user_id::uuid AS user_id, g.group_id
FROM user_group g, unnest(g.user_ids) AS u(user_id)
WHERE g.organization_id = @organization_id AND g.user_ids && @user_ids::uuid[] AND u.user_id = ANY(@user_ids::uuid[])
ORDER BY u.user_id, g.group_id;

-- name: GroupsAmong :many
-- Which of the given Groups exist in the organization (Permissions may grant only to its Groups).
SELECT group_id FROM user_group WHERE organization_id = @organization_id AND group_id = ANY(@group_ids::uuid[]);
