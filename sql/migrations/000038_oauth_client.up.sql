-- OAuth clients: public PKCE clients that browser apps sign in with, registered by an organization. The
-- client_id is server-generated, public and not secret; there is no update (delete and create again).
-- redirect_uris are exact (normalized: a bare origin gains its root path); the origins of all registered
-- redirect URIs are the CORS origins the API allows besides the configured ones.
CREATE TABLE oauth_client (
    client_id       text PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organization ON DELETE CASCADE,
    name            text        NOT NULL,
    redirect_uris   text[]      NOT NULL,
    allow_all_orgs  boolean     NOT NULL DEFAULT false,
    user_id         uuid,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT oauth_client_name_key UNIQUE (organization_id, name)
);
CREATE INDEX oauth_client_organization_idx ON oauth_client (organization_id, client_id);

-- Local users of the embedded OpenID provider: a password hash (argon2id, PHC string) per User that may
-- sign in on its login page. Users of an external identity provider have none.
CREATE TABLE user_password (
    user_id       uuid PRIMARY KEY REFERENCES app_user ON DELETE CASCADE,
    password_hash text        NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- First sign-in provisioning by token exchange: the OrgRole a person who is not yet a member gets when
-- the organization allows it; empty (the default) refuses non-members.
ALTER TABLE organization ADD COLUMN sign_in_provision_role text NOT NULL DEFAULT '';
