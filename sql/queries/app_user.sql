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

-- name: UserListByExternalID :many
-- The Users an identity provider's subject names (token exchange); more than one is ambiguous, so two are
-- enough to tell.
SELECT * FROM app_user WHERE external_id = @external_id AND external_id <> '' ORDER BY user_id LIMIT 2;

-- name: UserLockExternalID :exec
-- Serializes first sign-ins of one identity-provider subject, so two at once create one User.
SELECT pg_advisory_xact_lock(hashtextextended('app_user.external_id:' || @external_id::text, 0));
