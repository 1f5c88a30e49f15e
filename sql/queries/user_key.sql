-- name: UserKeyList :many
SELECT * FROM user_key WHERE user_id = @user_id ORDER BY created_at, kid;

-- name: UserKeyInsert :one
INSERT INTO user_key (user_key_id, user_id, kid, public_jwk, description, expires_at)
VALUES (@user_key_id, @user_id, @kid, @public_jwk, @description, @expires_at)
RETURNING *;

-- name: UserKeyDelete :execrows
DELETE FROM user_key WHERE user_id = @user_id AND kid = @kid;

-- name: UserKeyGetByKid :one
SELECT * FROM user_key WHERE kid = @kid;

-- name: UserKeyTouch :exec
UPDATE user_key SET last_used_at = now() WHERE kid = @kid;

-- name: UsedAssertionRecord :execrows
-- 0 rows: the assertion ID was used before (a replay).
INSERT INTO used_assertion (jti, expires_at) VALUES (@jti, @expires_at) ON CONFLICT (jti) DO NOTHING;

-- name: UsedAssertionPrune :execrows
DELETE FROM used_assertion WHERE expires_at < now() - interval '5 minutes';
