-- Views: stored column layouts over the lists of one entity type (Of), used by view= on its lists.
CREATE TABLE view (
    view_id            uuid PRIMARY KEY,
    organization_id    uuid        NOT NULL REFERENCES organization,
    space_id           uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug               text        NOT NULL,
    display_name       text        NOT NULL DEFAULT '',
    labels             jsonb       NOT NULL DEFAULT '{}',
    annotations        jsonb       NOT NULL DEFAULT '{}',
    delete_gates       jsonb       NOT NULL DEFAULT '{}',
    permissions        jsonb       NOT NULL DEFAULT '{}',
    of_type            text        NOT NULL,
    -- The columns, as the API writes them: [{Name, ColumnSource: {MetadataAttribute | DataPath}}].
    columns            jsonb       NOT NULL DEFAULT '[]',
    -- A View's Filter selects what its lists return; it cannot be deleted while a View uses it.
    filter_id          uuid        REFERENCES filter ON DELETE RESTRICT,
    group_by           text        NOT NULL DEFAULT '',
    order_by           text        NOT NULL DEFAULT '',
    order_by_direction text        NOT NULL DEFAULT '',
    upstream_view_id   uuid        REFERENCES view ON DELETE SET NULL,
    backing_unit_id    uuid        REFERENCES unit ON DELETE SET NULL,
    hidden_reason      text        NOT NULL DEFAULT '',
    version            bigint      NOT NULL DEFAULT 1,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    -- The definition's hash (computed by the service): continue tokens of lists that used the View bind it.
    hash               text        NOT NULL,
    search_text        text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || of_type || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT view_slug_key UNIQUE (space_id, slug)
);
-- Every order field of the list (and the filters on them) has its index; nullable IDs order as the nil UUID.
CREATE INDEX view_organization_idx ON view (organization_id, view_id);
CREATE INDEX view_space_idx ON view (space_id, view_id);
CREATE INDEX view_slug_idx ON view (organization_id, slug, view_id);
CREATE INDEX view_display_name_idx ON view (organization_id, display_name, view_id);
CREATE INDEX view_of_idx ON view (organization_id, of_type, view_id);
CREATE INDEX view_group_by_idx ON view (organization_id, group_by, view_id);
CREATE INDEX view_order_by_idx ON view (organization_id, order_by, view_id);
CREATE INDEX view_order_by_direction_idx ON view (organization_id, order_by_direction, view_id);
CREATE INDEX view_hash_idx ON view (organization_id, hash, view_id);
CREATE INDEX view_hidden_reason_idx ON view (organization_id, hidden_reason, view_id);
CREATE INDEX view_created_at_idx ON view (organization_id, created_at, view_id);
CREATE INDEX view_updated_at_idx ON view (organization_id, updated_at, view_id);
CREATE INDEX view_filter_idx ON view (organization_id, (COALESCE(filter_id, '00000000-0000-0000-0000-000000000000'::uuid)), view_id);
CREATE INDEX view_filter_fk_idx ON view (filter_id) WHERE filter_id IS NOT NULL;
CREATE INDEX view_upstream_idx ON view (organization_id, (COALESCE(upstream_view_id, '00000000-0000-0000-0000-000000000000'::uuid)), view_id);
CREATE INDEX view_backing_unit_idx ON view (organization_id, (COALESCE(backing_unit_id, '00000000-0000-0000-0000-000000000000'::uuid)), view_id);
CREATE INDEX view_labels_idx ON view USING gin (labels);
CREATE INDEX view_search_idx ON view USING gin (search_text gin_trgm_ops);
-- Deleting a Unit or an upstream View sets these to null: the referencing rows are found by index.
CREATE INDEX view_backing_unit_fk_idx ON view (backing_unit_id) WHERE backing_unit_id IS NOT NULL;
CREATE INDEX view_upstream_fk_idx ON view (upstream_view_id) WHERE upstream_view_id IS NOT NULL;
