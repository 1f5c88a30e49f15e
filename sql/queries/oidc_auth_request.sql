-- name: OIDCAuthRequestInsert :exec
INSERT INTO oidc_auth_request (auth_request_id, client_id, request, expires_at)
VALUES (@auth_request_id, @client_id, @request, now() + make_interval(secs => @ttl_seconds::bigint));

-- name: OIDCAuthRequestGet :one
SELECT * FROM oidc_auth_request WHERE auth_request_id = @auth_request_id AND expires_at > now();

-- name: OIDCAuthRequestGetByCode :one
SELECT * FROM oidc_auth_request WHERE code_hash = @code_hash AND expires_at > now();

-- name: OIDCAuthRequestComplete :execrows
-- The login page's success: once per request, before it expires.
UPDATE oidc_auth_request SET user_id = @user_id, organization_id = @organization_id, auth_time = now()
WHERE auth_request_id = @auth_request_id AND user_id IS NULL AND expires_at > now();

-- name: OIDCAuthRequestSetCode :execrows
-- A completed request gets one code.
UPDATE oidc_auth_request SET code_hash = @code_hash
WHERE auth_request_id = @auth_request_id AND user_id IS NOT NULL AND code_hash IS NULL AND expires_at > now();

-- name: OIDCAuthRequestRedeem :execrows
-- Redeeming a code deletes its request: of two concurrent redemptions one deletes the row, the other none.
DELETE FROM oidc_auth_request WHERE auth_request_id = @auth_request_id AND code_hash IS NOT NULL AND expires_at > now();

-- name: OIDCAuthRequestDelete :exec
DELETE FROM oidc_auth_request WHERE auth_request_id = @auth_request_id;

-- name: OIDCAuthRequestPrune :exec
DELETE FROM oidc_auth_request WHERE expires_at < now();
