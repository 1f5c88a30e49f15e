-- Filters: stored selections of one entity type (From), used by filter= on its lists.
CREATE TABLE filter (
    filter_id          uuid PRIMARY KEY,
    organization_id    uuid        NOT NULL REFERENCES organization,
    space_id           uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug               text        NOT NULL,
    display_name       text        NOT NULL DEFAULT '',
    labels             jsonb       NOT NULL DEFAULT '{}',
    annotations        jsonb       NOT NULL DEFAULT '{}',
    delete_gates       jsonb       NOT NULL DEFAULT '{}',
    permissions        jsonb       NOT NULL DEFAULT '{}',
    from_type          text        NOT NULL,
    where_expr         text        NOT NULL DEFAULT '',
    where_data         text        NOT NULL DEFAULT '',
    resource_type      text        NOT NULL DEFAULT '',
    -- The Space whose entities a Filter of Space-resident entities selects; null: the list's own Space.
    from_space_id      uuid        REFERENCES space ON DELETE RESTRICT,
    include_hidden     text        NOT NULL DEFAULT '',
    upstream_filter_id uuid        REFERENCES filter ON DELETE SET NULL,
    backing_unit_id    uuid        REFERENCES unit ON DELETE SET NULL,
    hidden_reason      text        NOT NULL DEFAULT '',
    version            bigint      NOT NULL DEFAULT 1,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    -- The definition's hash (computed by the service): continue tokens of lists that used the Filter bind it.
    hash               text        NOT NULL,
    search_text        text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || from_type || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT filter_slug_key UNIQUE (space_id, slug)
);
-- Every order field of the list (and the filters on them) has its index; nullable IDs order as the nil UUID.
CREATE INDEX filter_organization_idx ON filter (organization_id, filter_id);
CREATE INDEX filter_space_idx ON filter (space_id, filter_id);
CREATE INDEX filter_slug_idx ON filter (organization_id, slug, filter_id);
CREATE INDEX filter_display_name_idx ON filter (organization_id, display_name, filter_id);
CREATE INDEX filter_from_idx ON filter (organization_id, from_type, filter_id);
CREATE INDEX filter_where_idx ON filter (organization_id, where_expr, filter_id);
CREATE INDEX filter_where_data_idx ON filter (organization_id, where_data, filter_id);
CREATE INDEX filter_resource_type_idx ON filter (organization_id, resource_type, filter_id);
CREATE INDEX filter_include_hidden_idx ON filter (organization_id, include_hidden, filter_id);
CREATE INDEX filter_hash_idx ON filter (organization_id, hash, filter_id);
CREATE INDEX filter_hidden_reason_idx ON filter (organization_id, hidden_reason, filter_id);
CREATE INDEX filter_created_at_idx ON filter (organization_id, created_at, filter_id);
CREATE INDEX filter_updated_at_idx ON filter (organization_id, updated_at, filter_id);
CREATE INDEX filter_from_space_idx ON filter (organization_id, (COALESCE(from_space_id, '00000000-0000-0000-0000-000000000000'::uuid)), filter_id);
CREATE INDEX filter_upstream_idx ON filter (organization_id, (COALESCE(upstream_filter_id, '00000000-0000-0000-0000-000000000000'::uuid)), filter_id);
CREATE INDEX filter_backing_unit_idx ON filter (organization_id, (COALESCE(backing_unit_id, '00000000-0000-0000-0000-000000000000'::uuid)), filter_id);
CREATE INDEX filter_labels_idx ON filter USING gin (labels);
CREATE INDEX filter_search_idx ON filter USING gin (search_text gin_trgm_ops);
