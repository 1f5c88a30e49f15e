-- The first families: organizations, users and their memberships, Spaces, and the keys that sign
-- service tokens. Every tenant-owned row carries organization_id; maps are jsonb.

CREATE TABLE organization (
    organization_id uuid PRIMARY KEY,
    slug            text        NOT NULL,
    display_name    text        NOT NULL DEFAULT '',
    labels          jsonb       NOT NULL DEFAULT '{}',
    annotations     jsonb       NOT NULL DEFAULT '{}',
    delete_gates    jsonb       NOT NULL DEFAULT '{}',
    email_domain    text        NOT NULL DEFAULT '',
    external_id     text        NOT NULL DEFAULT '',
    hidden_reason   text        NOT NULL DEFAULT '',
    version         bigint      NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT organization_slug_key UNIQUE (slug)
);

-- "user" is reserved in SQL, hence app_user.
CREATE TABLE app_user (
    user_id             uuid PRIMARY KEY,
    username            text        NOT NULL,
    slug                text        NOT NULL,
    display_name        text        NOT NULL DEFAULT '',
    external_id         text        NOT NULL DEFAULT '',
    profile_picture_url text        NOT NULL DEFAULT '',
    hidden_reason       text        NOT NULL DEFAULT '',
    version             bigint      NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT app_user_username_key UNIQUE (username),
    CONSTRAINT app_user_slug_key UNIQUE (slug)
);

CREATE TABLE organization_member (
    organization_id          uuid        NOT NULL REFERENCES organization ON DELETE CASCADE,
    user_id                  uuid        NOT NULL REFERENCES app_user ON DELETE CASCADE,
    org_role                 text        NOT NULL CHECK (org_role IN ('admin', 'manager', 'member', 'viewer')),
    external_organization_id text        NOT NULL DEFAULT '',
    created_at               timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX organization_member_user_idx ON organization_member (user_id);

-- Deleting an organization that still holds Spaces is refused by the RESTRICT foreign key; every later
-- Space-resident table references space the same way, so a Space is not deleted while it holds entities.
CREATE TABLE space (
    space_id        uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organization ON DELETE RESTRICT,
    slug            text        NOT NULL,
    display_name    text        NOT NULL DEFAULT '',
    labels          jsonb       NOT NULL DEFAULT '{}',
    annotations     jsonb       NOT NULL DEFAULT '{}',
    delete_gates    jsonb       NOT NULL DEFAULT '{}',
    permissions     jsonb       NOT NULL DEFAULT '{}',
    component_id    uuid,
    hidden_reason   text        NOT NULL DEFAULT '',
    version         bigint      NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT space_slug_key UNIQUE (organization_id, slug)
);
-- Lists are scoped by organization and ordered by ID.
CREATE INDEX space_organization_idx ON space (organization_id, space_id);

-- ES256 keys that sign service tokens, shared by every replica. The newest unretired key signs; every
-- key not yet past retired_at (plus the token lifetime) still verifies, so rotation needs no downtime.
CREATE TABLE signing_key (
    kid         text PRIMARY KEY,
    private_jwk jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    retired_at  timestamptz
);
