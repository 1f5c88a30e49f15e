-- Authorization requests of the embedded OpenID provider ({base_url}/oidc), kept here so any replica
-- continues a sign-in another started. A request lives 10 minutes from its creation: the login page
-- completes it (user_id, organization_id, auth_time), the provider then stores the hash of the one
-- authorization code it issues for it, and redeeming that code deletes the row, so a code works once.
CREATE TABLE oidc_auth_request (
    auth_request_id text PRIMARY KEY,
    client_id       text        NOT NULL REFERENCES oauth_client ON DELETE CASCADE,
    -- The parsed authorization request (scopes, redirect URI, state, nonce, PKCE challenge).
    request         jsonb       NOT NULL,
    user_id         uuid        REFERENCES app_user ON DELETE CASCADE,
    organization_id uuid        REFERENCES organization ON DELETE CASCADE,
    auth_time       timestamptz,
    code_hash       bytea       UNIQUE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL
);
CREATE INDEX oidc_auth_request_expires_idx ON oidc_auth_request (expires_at);
