-- name: UserPasswordSet :exec
INSERT INTO user_password (user_id, password_hash) VALUES ($1, $2)
ON CONFLICT (user_id) DO UPDATE SET password_hash = EXCLUDED.password_hash, updated_at = now();

-- name: UserPasswordGet :one
SELECT password_hash FROM user_password WHERE user_id = $1;
