-- The list query language: indexes for every filter and order the registries allow, trigram indexes
-- for contains, User.GroupIDs, and the secret continue tokens are signed with.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- contains matches this text case-insensitively (a trigram index serves ILIKE '%...%').
ALTER TABLE space ADD COLUMN search_text text GENERATED ALWAYS AS (
    slug || ' ' || display_name || ' ' || hidden_reason || ' ' || labels::text || ' ' || annotations::text
) STORED;
CREATE INDEX space_search_idx ON space USING gin (search_text gin_trgm_ops);

-- Keyset pages by each orderable attribute, scoped by organization, tie-broken by ID.
CREATE INDEX space_slug_order_idx ON space (organization_id, slug, space_id);
CREATE INDEX space_display_name_idx ON space (organization_id, display_name, space_id);
CREATE INDEX space_created_at_idx ON space (organization_id, created_at, space_id);
CREATE INDEX space_updated_at_idx ON space (organization_id, updated_at, space_id);
CREATE INDEX space_hidden_reason_idx ON space (organization_id, hidden_reason, space_id);
CREATE INDEX space_component_idx ON space (organization_id, (COALESCE(component_id, '00000000-0000-0000-0000-000000000000'::uuid)), space_id);
-- Map filters: key presence (?) and containment (@>).
CREATE INDEX space_labels_idx ON space USING gin (labels);
CREATE INDEX space_annotations_idx ON space USING gin (annotations);
CREATE INDEX space_delete_gates_idx ON space USING gin (delete_gates);

ALTER TABLE app_user ADD COLUMN group_ids uuid[] NOT NULL DEFAULT '{}';

CREATE TABLE instance_secret (
    name       text PRIMARY KEY,
    secret     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
