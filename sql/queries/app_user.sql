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
