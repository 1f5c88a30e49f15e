-- name: UserKeyList :many
-- The keys of a User registered in one organization (keys never cross organizations).
SELECT * FROM user_key WHERE organization_id = @organization_id AND user_id = @user_id ORDER BY created_at, kid;

-- name: UserKeyInsert :one
INSERT INTO user_key (user_key_id, organization_id, user_id, kid, public_jwk, description, expires_at, max_org_role)
VALUES (@user_key_id, @organization_id, @user_id, @kid, @public_jwk, @description, @expires_at, @max_org_role)
RETURNING *;

-- name: UserKeyDelete :execrows
DELETE FROM user_key WHERE organization_id = @organization_id AND user_id = @user_id AND kid = @kid;

-- name: UserKeyGetForAssertion :many
-- The registrations of one public key (its kid) for the identity an assertion names: a User by its ID, or
-- a ServiceAccount by its ID. One per organization the key was registered in.
SELECT k.* FROM user_key k
LEFT JOIN service_account sa ON sa.user_id = k.user_id
WHERE k.kid = @kid AND (k.user_id = @subject OR sa.service_account_id = @subject)
ORDER BY k.created_at;

-- name: UserKeyPublicByKid :one
-- Any registration's public key: every registration of a kid holds the same key (kid is its thumbprint).
SELECT public_jwk FROM user_key WHERE kid = @kid LIMIT 1;

-- name: UserKeyTouch :exec
UPDATE user_key SET last_used_at = now() WHERE user_key_id = @user_key_id;

-- name: UsedAssertionRecord :execrows
-- 0 rows: the assertion ID was used before (a replay).
INSERT INTO used_assertion (jti, expires_at) VALUES (@jti, @expires_at) ON CONFLICT (jti) DO NOTHING;

-- name: UsedAssertionPrune :execrows
DELETE FROM used_assertion WHERE expires_at < now() - interval '5 minutes';
