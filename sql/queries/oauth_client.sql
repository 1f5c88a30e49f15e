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
