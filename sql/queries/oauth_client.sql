-- name: OAuthClientCreate :one
INSERT INTO oauth_client (client_id, organization_id, name, redirect_uris, allow_all_orgs, user_id)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: OAuthClientGet :one
SELECT * FROM oauth_client WHERE client_id = $1;

-- name: OAuthClientCountInOrg :one
SELECT count(*) FROM oauth_client WHERE organization_id = $1;

-- name: OAuthClientDelete :execrows
DELETE FROM oauth_client WHERE organization_id = $1 AND client_id = $2;

-- name: OAuthClientRedirectURIs :many
-- Every registered redirect URI, for the CORS origins the API allows.
SELECT DISTINCT unnest(redirect_uris)::text AS redirect_uri FROM oauth_client;

-- name: OAuthClientListByOrg :many
SELECT * FROM oauth_client WHERE organization_id = @organization_id ORDER BY name, client_id;

-- name: OAuthClientGetInOrg :one
-- A client of the organization by ClientID or Name; a ClientID match wins over a Name that happens to equal it.
SELECT * FROM oauth_client
WHERE organization_id = @organization_id AND (client_id = @ref OR name = @ref)
ORDER BY client_id = @ref DESC
LIMIT 1;

-- name: OAuthClientLockOrganization :exec
-- Registrations of one organization serialize on this lock (held to commit), so the quota's count and the
-- insert that follows it cannot interleave with another registration's.
SELECT pg_advisory_xact_lock(hashtext('hubd.oauth_client'), hashtext(sqlc.arg(organization_id)::uuid::text));

-- name: OAuthClientNotify :exec
-- Tells every replica (on commit) that registered redirect URIs changed, so each reloads its CORS origins.
SELECT pg_notify('hubd_oauth_client', '');
