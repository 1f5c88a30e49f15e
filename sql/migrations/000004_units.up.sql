-- Units and their history. Configuration data is stored once per distinct content, addressed by its
-- hash; Units and Revisions refer to it. unit.head_doc is the parsed projection of the head data (JSON),
-- indexed for where_data, so a query never re-parses documents.

CREATE TABLE config_data (
    data_hash  text PRIMARY KEY,
    data       bytea       NOT NULL,
    data_size  bigint      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE target (
    target_id        uuid PRIMARY KEY,
    organization_id  uuid        NOT NULL REFERENCES organization,
    space_id         uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug             text        NOT NULL,
    display_name     text        NOT NULL DEFAULT '',
    labels           jsonb       NOT NULL DEFAULT '{}',
    annotations      jsonb       NOT NULL DEFAULT '{}',
    delete_gates     jsonb       NOT NULL DEFAULT '{}',
    permissions      jsonb       NOT NULL DEFAULT '{}',
    toolchain_type   text        NOT NULL,
    provider_type    text        NOT NULL,
    bridge_worker_id uuid,
    bridge_handle    text        NOT NULL DEFAULT '',
    options          jsonb       NOT NULL DEFAULT '{}',
    facts            jsonb       NOT NULL DEFAULT '{}',
    live_state_type  text        NOT NULL DEFAULT '',
    hidden_reason    text        NOT NULL DEFAULT '',
    version          bigint      NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT target_slug_key UNIQUE (space_id, slug)
);
CREATE INDEX target_organization_idx ON target (organization_id, target_id);
CREATE INDEX target_space_idx ON target (space_id, target_id);

CREATE TABLE unit (
    unit_id                    uuid PRIMARY KEY,
    organization_id            uuid        NOT NULL REFERENCES organization,
    space_id                   uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug                       text        NOT NULL,
    display_name               text        NOT NULL DEFAULT '',
    labels                     jsonb       NOT NULL DEFAULT '{}',
    annotations                jsonb       NOT NULL DEFAULT '{}',
    delete_gates               jsonb       NOT NULL DEFAULT '{}',
    destroy_gates              jsonb       NOT NULL DEFAULT '{}',
    permissions                jsonb       NOT NULL DEFAULT '{}',
    toolchain_type             text        NOT NULL,
    provider_type              text        NOT NULL DEFAULT '',
    target_id                  uuid REFERENCES target ON DELETE RESTRICT,
    change_set_id              uuid,
    last_change_description    text        NOT NULL DEFAULT '',
    data_hash                  text        NOT NULL REFERENCES config_data,
    data_size                  bigint      NOT NULL DEFAULT 0,
    head_doc                   jsonb       NOT NULL DEFAULT '[]',
    head_revision_id           uuid,
    head_revision_num          bigint      NOT NULL DEFAULT 0,
    head_mutation_num          bigint      NOT NULL DEFAULT 0,
    head_unit_action_num       bigint      NOT NULL DEFAULT 0,
    head_unit_event_num        bigint      NOT NULL DEFAULT 0,
    last_released_revision_num bigint      NOT NULL DEFAULT 0,
    upstream_unit_id           uuid,
    upstream_space_id          uuid,
    upstream_revision_num      bigint      NOT NULL DEFAULT 0,
    hidden_reason              text        NOT NULL DEFAULT '',
    version                    bigint      NOT NULL DEFAULT 1,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    updated_at                 timestamptz NOT NULL DEFAULT now(),
    search_text                text GENERATED ALWAYS AS (
        slug || ' ' || display_name || ' ' || toolchain_type || ' ' || last_change_description || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)
    ) STORED,
    CONSTRAINT unit_slug_key UNIQUE (space_id, slug)
);
-- Keyset pages and filters (organization-wide lists, and lists of one Space).
CREATE INDEX unit_organization_idx ON unit (organization_id, unit_id);
CREATE INDEX unit_space_idx ON unit (space_id, unit_id);
CREATE INDEX unit_slug_idx ON unit (organization_id, slug, unit_id);
CREATE INDEX unit_display_name_idx ON unit (organization_id, display_name, unit_id);
CREATE INDEX unit_created_at_idx ON unit (organization_id, created_at, unit_id);
CREATE INDEX unit_updated_at_idx ON unit (organization_id, updated_at, unit_id);
CREATE INDEX unit_toolchain_idx ON unit (organization_id, toolchain_type, unit_id);
CREATE INDEX unit_provider_idx ON unit (organization_id, provider_type, unit_id);
CREATE INDEX unit_head_revision_num_idx ON unit (organization_id, head_revision_num, unit_id);
CREATE INDEX unit_last_released_idx ON unit (organization_id, last_released_revision_num, unit_id);
CREATE INDEX unit_upstream_revision_num_idx ON unit (organization_id, upstream_revision_num, unit_id);
CREATE INDEX unit_data_hash_idx ON unit (organization_id, data_hash, unit_id);
CREATE INDEX unit_target_idx ON unit (organization_id, (COALESCE(target_id, '00000000-0000-0000-0000-000000000000'::uuid)), unit_id);
CREATE INDEX unit_upstream_unit_idx ON unit (organization_id, (COALESCE(upstream_unit_id, '00000000-0000-0000-0000-000000000000'::uuid)), unit_id);
CREATE INDEX unit_change_set_idx ON unit (organization_id, (COALESCE(change_set_id, '00000000-0000-0000-0000-000000000000'::uuid)), unit_id);
CREATE INDEX unit_hidden_reason_idx ON unit (organization_id, hidden_reason, unit_id);
CREATE INDEX unit_last_change_idx ON unit (organization_id, last_change_description, unit_id);
CREATE INDEX unit_labels_idx ON unit USING gin (labels);
CREATE INDEX unit_annotations_idx ON unit USING gin (annotations);
CREATE INDEX unit_search_idx ON unit USING gin (search_text gin_trgm_ops);
CREATE INDEX unit_head_doc_idx ON unit USING gin (head_doc jsonb_path_ops);

CREATE TABLE revision (
    revision_id      uuid PRIMARY KEY,
    organization_id  uuid        NOT NULL REFERENCES organization,
    space_id         uuid        NOT NULL,
    unit_id          uuid        NOT NULL REFERENCES unit ON DELETE CASCADE,
    revision_num     bigint      NOT NULL,
    description      text        NOT NULL DEFAULT '',
    source           text        NOT NULL,
    user_id          uuid        NOT NULL,
    user_agent       text        NOT NULL DEFAULT '',
    change_set_id    uuid,
    data_hash        text        NOT NULL REFERENCES config_data,
    data_size        bigint      NOT NULL,
    -- resource key -> path -> MutationNum that last set the value
    mutation_sources jsonb       NOT NULL DEFAULT '{}',
    hidden_reason    text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT revision_num_key UNIQUE (unit_id, revision_num)
);
CREATE INDEX revision_organization_idx ON revision (organization_id, revision_id);
CREATE INDEX revision_unit_latest_idx ON revision (organization_id, unit_id, revision_num DESC);
CREATE INDEX revision_created_at_idx ON revision (organization_id, created_at, revision_id);

CREATE TABLE mutation (
    mutation_id             uuid PRIMARY KEY,
    organization_id         uuid        NOT NULL REFERENCES organization,
    space_id                uuid        NOT NULL,
    unit_id                 uuid        NOT NULL REFERENCES unit ON DELETE CASCADE,
    revision_id             uuid        NOT NULL REFERENCES revision ON DELETE CASCADE,
    revision_num            bigint      NOT NULL,
    mutation_num            bigint      NOT NULL,
    function_invocation     jsonb,
    invocation_params       jsonb       NOT NULL DEFAULT '{}',
    restored_revision_num   bigint      NOT NULL DEFAULT 0,
    merge_base_revision_num bigint      NOT NULL DEFAULT 0,
    merge_end_revision_num  bigint      NOT NULL DEFAULT 0,
    merge_source_id         uuid,
    link_id                 uuid,
    trigger_id              uuid,
    invocation_id           uuid,
    bridge_worker_id        uuid,
    subgroup                text        NOT NULL DEFAULT '',
    replay_outcome          text        NOT NULL DEFAULT '',
    replay_reason           text        NOT NULL DEFAULT '',
    hidden_reason           text        NOT NULL DEFAULT '',
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT mutation_num_key UNIQUE (unit_id, mutation_num)
);
CREATE INDEX mutation_unit_idx ON mutation (unit_id, mutation_id);
