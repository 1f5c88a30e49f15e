-- name: UserGetByID :one
SELECT * FROM app_user WHERE user_id = @user_id;

-- name: UserGetByUsername :one
SELECT * FROM app_user WHERE username = @username;

-- name: UserInsert :one
INSERT INTO app_user (user_id, username, slug, display_name, external_id)
VALUES (@user_id, @username, @slug, @display_name, @external_id)
RETURNING *;

-- name: UserSlugTaken :one
SELECT EXISTS (SELECT 1 FROM app_user WHERE slug = @slug);

-- name: UsersInOrganization :many
-- Users of the organization among @user_ids, for include=UserID on a page (one query, not one per item).
SELECT u.* FROM app_user u JOIN organization_member m ON m.user_id = u.user_id
WHERE m.organization_id = @organization_id AND u.user_id = ANY(@user_ids::uuid[]);
