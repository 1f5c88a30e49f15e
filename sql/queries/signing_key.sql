-- name: SigningKeyListUsable :many
-- Keys that may still verify tokens: unretired, or retired less than grace_seconds ago.
SELECT * FROM signing_key
WHERE retired_at IS NULL OR retired_at > now() - make_interval(secs => @grace_seconds::bigint)
ORDER BY created_at DESC, kid;

-- name: SigningKeyInsert :exec
INSERT INTO signing_key (kid, private_jwk) VALUES (@kid, @private_jwk);

-- name: SigningKeyRetireAllBut :exec
UPDATE signing_key SET retired_at = now() WHERE retired_at IS NULL AND kid <> @kid;

-- name: SigningKeyLock :exec
-- Serializes first-key creation among replicas starting at once.
SELECT pg_advisory_xact_lock(hashtext('hubd.signing_key'));

-- name: SigningKeyGetUsable :one
SELECT * FROM signing_key
WHERE kid = @kid AND (retired_at IS NULL OR retired_at > now() - make_interval(secs => @grace_seconds::bigint));
