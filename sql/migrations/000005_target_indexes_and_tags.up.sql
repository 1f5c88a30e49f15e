-- Target list filters and orders, and Tags: named markers put on Revisions.
ALTER TABLE target ADD COLUMN search_text text GENERATED ALWAYS AS (
    slug || ' ' || display_name || ' ' || toolchain_type || ' ' || provider_type || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)
) STORED;
CREATE INDEX target_search_idx ON target USING gin (search_text gin_trgm_ops);
CREATE INDEX target_slug_idx ON target (organization_id, slug, target_id);
CREATE INDEX target_display_name_idx ON target (organization_id, display_name, target_id);
CREATE INDEX target_toolchain_idx ON target (organization_id, toolchain_type, target_id);
CREATE INDEX target_provider_idx ON target (organization_id, provider_type, target_id);
CREATE INDEX target_created_at_idx ON target (organization_id, created_at, target_id);
CREATE INDEX target_updated_at_idx ON target (organization_id, updated_at, target_id);
CREATE INDEX target_labels_idx ON target USING gin (labels);

CREATE TABLE tag (
    tag_id          uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organization,
    space_id        uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug            text        NOT NULL,
    display_name    text        NOT NULL DEFAULT '',
    labels          jsonb       NOT NULL DEFAULT '{}',
    annotations     jsonb       NOT NULL DEFAULT '{}',
    delete_gates    jsonb       NOT NULL DEFAULT '{}',
    hidden_reason   text        NOT NULL DEFAULT '',
    version         bigint      NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    search_text     text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT tag_slug_key UNIQUE (space_id, slug)
);
CREATE INDEX tag_organization_idx ON tag (organization_id, tag_id);
CREATE INDEX tag_space_idx ON tag (space_id, tag_id);
CREATE INDEX tag_slug_idx ON tag (organization_id, slug, tag_id);
CREATE INDEX tag_created_at_idx ON tag (organization_id, created_at, tag_id);
CREATE INDEX tag_search_idx ON tag USING gin (search_text gin_trgm_ops);

-- A Revision's tags, by TagID (Revision.Tags; `Tags ? '<tag_id>'` is a GIN lookup).
ALTER TABLE revision ADD COLUMN tags jsonb NOT NULL DEFAULT '{}';
CREATE INDEX revision_tags_idx ON revision USING gin (tags);
