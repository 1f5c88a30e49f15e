-- Channels, their leases (one holder at a time, timed by the database clock) and command runs.
CREATE TABLE channel (
    channel_id      uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organization,
    space_id        uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug            text        NOT NULL,
    display_name    text        NOT NULL DEFAULT '',
    labels          jsonb       NOT NULL DEFAULT '{}',
    annotations     jsonb       NOT NULL DEFAULT '{}',
    delete_gates    jsonb       NOT NULL DEFAULT '{}',
    permissions     jsonb       NOT NULL DEFAULT '{}',
    commands        jsonb       NOT NULL DEFAULT '{}',
    subscriptions   jsonb       NOT NULL DEFAULT '[]',
    event_bookmark  bigint      NOT NULL DEFAULT 0,
    last_seen_at    timestamptz,
    hidden_reason   text        NOT NULL DEFAULT '',
    version         bigint      NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    search_text     text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT channel_slug_key UNIQUE (space_id, slug)
);
CREATE INDEX channel_organization_idx ON channel (organization_id, channel_id);
CREATE INDEX channel_space_idx ON channel (space_id, channel_id);
CREATE INDEX channel_slug_idx ON channel (organization_id, slug, channel_id);
CREATE INDEX channel_created_at_idx ON channel (organization_id, created_at, channel_id);
CREATE INDEX channel_search_idx ON channel USING gin (search_text gin_trgm_ops);
-- Command resolution: which Channels declare a command name.
CREATE INDEX channel_commands_idx ON channel USING gin (commands);

CREATE TABLE channel_lease (
    channel_id     uuid PRIMARY KEY REFERENCES channel ON DELETE CASCADE,
    claim_token    uuid        NOT NULL,
    holder_user_id uuid        NOT NULL,
    holder_address text        NOT NULL DEFAULT '',
    commands       jsonb       NOT NULL DEFAULT '[]',
    acquired_at    timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL
);

CREATE TABLE command_run (
    command_run_id  uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organization,
    space_id        uuid        NOT NULL,
    channel_id      uuid        NOT NULL REFERENCES channel ON DELETE CASCADE,
    command         text        NOT NULL,
    options         jsonb       NOT NULL DEFAULT '{}',
    parameters      jsonb       NOT NULL DEFAULT '{}',
    status          text        NOT NULL CHECK (status IN ('Waiting', 'Delivered', 'Completed', 'Failed', 'Rejected', 'Expired', 'Cancelled')),
    result          jsonb,
    error_message   text        NOT NULL DEFAULT '',
    user_id         uuid        NOT NULL,
    deadline        timestamptz NOT NULL,
    delivered_token uuid,
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    completed_at    timestamptz
);
CREATE INDEX command_run_organization_idx ON command_run (organization_id, command_run_id);
CREATE INDEX command_run_channel_idx ON command_run (channel_id, command_run_id);
-- Delivery in creation order of what is waiting (or delivered and not answered).
CREATE INDEX command_run_pending_idx ON command_run (channel_id, created_at) WHERE status IN ('Waiting', 'Delivered');
CREATE INDEX command_run_created_at_idx ON command_run (organization_id, created_at, command_run_id);
