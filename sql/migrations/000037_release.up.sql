-- Releases: published bundles of the configuration of a Space's Units assigned to one Target. The bundle
-- (a gzip tarball) is stored once per distinct content, addressed by its digest, like config_data; a
-- Release names it and keeps the OCI image manifest that describes it, byte for byte, so that what is
-- served later is what was published. target_id and tag_id are plain IDs: a Release records the past and
-- outlives the Target and Tag it was made from.
CREATE TABLE release_bundle (
    digest     text PRIMARY KEY,
    data       bytea       NOT NULL,
    data_size  bigint      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE release (
    release_id       uuid PRIMARY KEY,
    organization_id  uuid        NOT NULL REFERENCES organization,
    space_id         uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    user_id          uuid        NOT NULL,
    release_num      bigint      NOT NULL,
    target_id        uuid        NOT NULL,
    tag_id           uuid,
    change_order_id  uuid,
    bundle_base_name text        NOT NULL,
    description      text        NOT NULL DEFAULT '',
    digest           text        NOT NULL REFERENCES release_bundle,
    manifest_digest  text        NOT NULL,
    manifest         bytea       NOT NULL,
    data_size        bigint      NOT NULL,
    unit_count       bigint      NOT NULL,
    -- The Revisions bundled, and the Units left out ([{UnitID, Slug, Reason}]).
    revision_ids     uuid[]      NOT NULL DEFAULT '{}',
    skipped_units    jsonb       NOT NULL DEFAULT '[]',
    published        boolean     NOT NULL DEFAULT true,
    live_status      text        NOT NULL DEFAULT '',
    labels           jsonb       NOT NULL DEFAULT '{}',
    annotations      jsonb       NOT NULL DEFAULT '{}',
    delete_gates     jsonb       NOT NULL DEFAULT '{}',
    permissions      jsonb       NOT NULL DEFAULT '{}',
    hidden_reason    text        NOT NULL DEFAULT '',
    version          bigint      NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    search_text      text GENERATED ALWAYS AS (
        bundle_base_name || ' ' || description || ' ' || live_status || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)
    ) STORED,
    CONSTRAINT release_num_key UNIQUE (space_id, release_num)
);
-- Every order field of the list (and the filters on them) has its index; maps GIN.
CREATE INDEX release_organization_idx ON release (organization_id, release_id);
CREATE INDEX release_space_idx ON release (space_id, release_id);
CREATE INDEX release_release_num_idx ON release (organization_id, release_num, release_id);
CREATE INDEX release_target_idx ON release (organization_id, target_id, release_id);
CREATE INDEX release_tag_idx ON release (organization_id, (COALESCE(tag_id, '00000000-0000-0000-0000-000000000000'::uuid)), release_id);
CREATE INDEX release_change_order_idx ON release (organization_id, (COALESCE(change_order_id, '00000000-0000-0000-0000-000000000000'::uuid)), release_id);
CREATE INDEX release_digest_idx ON release (organization_id, digest, release_id);
CREATE INDEX release_manifest_digest_idx ON release (organization_id, manifest_digest, release_id);
CREATE INDEX release_unit_count_idx ON release (organization_id, unit_count, release_id);
CREATE INDEX release_published_idx ON release (organization_id, published, release_id);
CREATE INDEX release_user_idx ON release (organization_id, user_id, release_id);
CREATE INDEX release_hidden_reason_idx ON release (organization_id, hidden_reason, release_id);
CREATE INDEX release_created_at_idx ON release (organization_id, created_at, release_id);
CREATE INDEX release_updated_at_idx ON release (organization_id, updated_at, release_id);
CREATE INDEX release_revision_ids_idx ON release USING gin (revision_ids);
CREATE INDEX release_permissions_idx ON release USING gin (permissions jsonb_path_ops);
CREATE INDEX release_labels_idx ON release USING gin (labels);
CREATE INDEX release_annotations_idx ON release USING gin (annotations);
CREATE INDEX release_search_idx ON release USING gin (search_text gin_trgm_ops);
