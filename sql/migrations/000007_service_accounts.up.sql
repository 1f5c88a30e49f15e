-- ServiceAccounts (each backed by a User that Permissions and Groups name), the public keys Users and
-- ServiceAccounts sign in with (RFC 7523 assertions), and the assertion IDs already used (no replay).
CREATE TABLE service_account (
    service_account_id uuid PRIMARY KEY,
    organization_id    uuid        NOT NULL REFERENCES organization ON DELETE CASCADE,
    user_id            uuid        NOT NULL UNIQUE REFERENCES app_user ON DELETE CASCADE,
    slug               text        NOT NULL,
    display_name       text        NOT NULL DEFAULT '',
    labels             jsonb       NOT NULL DEFAULT '{}',
    annotations        jsonb       NOT NULL DEFAULT '{}',
    delete_gates       jsonb       NOT NULL DEFAULT '{}',
    permissions        jsonb       NOT NULL DEFAULT '{}',
    hidden_reason      text        NOT NULL DEFAULT '',
    version            bigint      NOT NULL DEFAULT 1,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    search_text        text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT service_account_slug_key UNIQUE (organization_id, slug)
);
CREATE INDEX service_account_organization_idx ON service_account (organization_id, service_account_id);
CREATE INDEX service_account_slug_idx ON service_account (organization_id, slug, service_account_id);
CREATE INDEX service_account_display_name_idx ON service_account (organization_id, display_name, service_account_id);
CREATE INDEX service_account_created_at_idx ON service_account (organization_id, created_at, service_account_id);
CREATE INDEX service_account_updated_at_idx ON service_account (organization_id, updated_at, service_account_id);
CREATE INDEX service_account_user_idx ON service_account (organization_id, user_id, service_account_id);
CREATE INDEX service_account_search_idx ON service_account USING gin (search_text gin_trgm_ops);

CREATE TABLE user_key (
    user_key_id  uuid PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES app_user ON DELETE CASCADE,
    kid          text        NOT NULL,
    public_jwk   jsonb       NOT NULL,
    description  text        NOT NULL DEFAULT '',
    expires_at   timestamptz,
    last_used_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    -- A key signs in as one identity only.
    CONSTRAINT user_key_kid_key UNIQUE (kid)
);
CREATE INDEX user_key_user_idx ON user_key (user_id, created_at);

CREATE TABLE used_assertion (
    jti        text PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX used_assertion_expires_idx ON used_assertion (expires_at);
