-- Links: a producer/consumer relation between two Units. A Link lives in the Space of its From Unit (the
-- downstream consumer, which it writes into) and reads its To Unit (the upstream producer). It goes with its
-- From Unit (and moves with it); a Unit that Links read from cannot be deleted while they do.
-- to_space_id follows the To Unit. stale says the To Unit has Revisions the Link has not merged:
-- propagation (in the upstream write's transaction) keeps it and the *_last_merged_revision_num columns.
CREATE TABLE link (
    link_id                             uuid PRIMARY KEY,
    organization_id                     uuid        NOT NULL REFERENCES organization,
    space_id                            uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug                                text        NOT NULL,
    display_name                        text        NOT NULL DEFAULT '',
    labels                              jsonb       NOT NULL DEFAULT '{}',
    annotations                         jsonb       NOT NULL DEFAULT '{}',
    delete_gates                        jsonb       NOT NULL DEFAULT '{}',
    permissions                         jsonb       NOT NULL DEFAULT '{}',
    from_unit_id                        uuid        NOT NULL REFERENCES unit ON DELETE CASCADE,
    to_unit_id                          uuid        NOT NULL REFERENCES unit ON DELETE RESTRICT,
    to_space_id                         uuid        NOT NULL,
    auto_update                         boolean     NOT NULL DEFAULT false,
    update_type                         text        NOT NULL DEFAULT 'NeedsProvides',
    upstream_paths                      jsonb       NOT NULL DEFAULT '[]',
    downstream_paths                    jsonb       NOT NULL DEFAULT '[]',
    bindings                            jsonb       NOT NULL DEFAULT '[]',
    downstream_setters                  jsonb       NOT NULL DEFAULT '[]',
    upstream_getters                    jsonb       NOT NULL DEFAULT '[]',
    clearance                           jsonb       NOT NULL DEFAULT '[]',
    guards                              jsonb       NOT NULL DEFAULT '{}',
    protect                             boolean     NOT NULL DEFAULT false,
    squash                              boolean     NOT NULL DEFAULT false,
    merge_enable_subtraction            boolean     NOT NULL DEFAULT false,
    where_mutation                      text        NOT NULL DEFAULT '',
    where_resource                      text        NOT NULL DEFAULT '',
    transform_invocation_id             uuid,
    upstream_link_id                    uuid        REFERENCES link ON DELETE SET NULL,
    backing_unit_id                     uuid        REFERENCES unit ON DELETE SET NULL,
    hash                                text        NOT NULL DEFAULT '',
    upstream_last_merged_revision_num   bigint      NOT NULL DEFAULT 0,
    downstream_last_merged_revision_num bigint      NOT NULL DEFAULT 0,
    stale                               boolean     NOT NULL DEFAULT false,
    hidden_reason                       text        NOT NULL DEFAULT '',
    version                             bigint      NOT NULL DEFAULT 1,
    created_at                          timestamptz NOT NULL DEFAULT now(),
    updated_at                          timestamptz NOT NULL DEFAULT now(),
    search_text                         text GENERATED ALWAYS AS (
        slug || ' ' || display_name || ' ' || update_type || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)
    ) STORED,
    CONSTRAINT link_slug_key UNIQUE (space_id, slug),
    CONSTRAINT link_not_self CHECK (from_unit_id <> to_unit_id)
);
-- Every order field of the list (and the filters on them) has its index; maps GIN.
CREATE INDEX link_organization_idx ON link (organization_id, link_id);
CREATE INDEX link_space_idx ON link (space_id, link_id);
CREATE INDEX link_slug_idx ON link (organization_id, slug, link_id);
CREATE INDEX link_display_name_idx ON link (organization_id, display_name, link_id);
CREATE INDEX link_created_at_idx ON link (organization_id, created_at, link_id);
CREATE INDEX link_updated_at_idx ON link (organization_id, updated_at, link_id);
CREATE INDEX link_hidden_reason_idx ON link (organization_id, hidden_reason, link_id);
CREATE INDEX link_from_unit_idx ON link (organization_id, from_unit_id, link_id);
CREATE INDEX link_to_unit_idx ON link (organization_id, to_unit_id, link_id);
CREATE INDEX link_to_space_idx ON link (organization_id, to_space_id, link_id);
CREATE INDEX link_auto_update_idx ON link (organization_id, auto_update, link_id);
CREATE INDEX link_update_type_idx ON link (organization_id, update_type, link_id);
CREATE INDEX link_protect_idx ON link (organization_id, protect, link_id);
CREATE INDEX link_squash_idx ON link (organization_id, squash, link_id);
CREATE INDEX link_subtraction_idx ON link (organization_id, merge_enable_subtraction, link_id);
CREATE INDEX link_stale_idx ON link (organization_id, stale, link_id);
CREATE INDEX link_hash_idx ON link (organization_id, hash, link_id);
CREATE INDEX link_upstream_merged_idx ON link (organization_id, upstream_last_merged_revision_num, link_id);
CREATE INDEX link_downstream_merged_idx ON link (organization_id, downstream_last_merged_revision_num, link_id);
CREATE INDEX link_transform_invocation_idx ON link (organization_id, (COALESCE(transform_invocation_id, '00000000-0000-0000-0000-000000000000'::uuid)), link_id);
CREATE INDEX link_upstream_link_idx ON link (organization_id, (COALESCE(upstream_link_id, '00000000-0000-0000-0000-000000000000'::uuid)), link_id);
CREATE INDEX link_backing_unit_idx ON link (organization_id, (COALESCE(backing_unit_id, '00000000-0000-0000-0000-000000000000'::uuid)), link_id);
-- Foreign keys: deletes of the Units and Links named look these up.
CREATE INDEX link_from_unit_fk_idx ON link (from_unit_id);
CREATE INDEX link_to_unit_fk_idx ON link (to_unit_id);
CREATE INDEX link_upstream_link_fk_idx ON link (upstream_link_id) WHERE upstream_link_id IS NOT NULL;
CREATE INDEX link_backing_unit_fk_idx ON link (backing_unit_id) WHERE backing_unit_id IS NOT NULL;
CREATE INDEX link_labels_idx ON link USING gin (labels);
CREATE INDEX link_annotations_idx ON link USING gin (annotations);
CREATE INDEX link_permissions_idx ON link USING gin (permissions jsonb_path_ops);
CREATE INDEX link_search_idx ON link USING gin (search_text gin_trgm_ops);
