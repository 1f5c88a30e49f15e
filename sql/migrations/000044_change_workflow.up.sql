-- ChangeWorkflows: promotion recipes in a Space. stages is a JSON array of {Name, WhereSpace, Prerequisites},
-- final null or {Prerequisites}, custom_prerequisites a JSON array of {Name, Expression, Description}
-- (Expression is "cel:" then CEL), all as the API writes them and checked by the service on every write.
-- A ChangeOrder copies them when it is made.
CREATE TABLE change_workflow (
    change_workflow_id   uuid PRIMARY KEY,
    organization_id      uuid        NOT NULL REFERENCES organization,
    space_id             uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug                 text        NOT NULL,
    display_name         text        NOT NULL DEFAULT '',
    labels               jsonb       NOT NULL DEFAULT '{}',
    annotations          jsonb       NOT NULL DEFAULT '{}',
    delete_gates         jsonb       NOT NULL DEFAULT '{}',
    stages               jsonb       NOT NULL,
    final                jsonb,
    custom_prerequisites jsonb       NOT NULL DEFAULT '[]',
    hidden_reason        text        NOT NULL DEFAULT '',
    version              bigint      NOT NULL DEFAULT 1,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    search_text          text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT change_workflow_slug_key UNIQUE (space_id, slug)
);
-- Every order field of the list (and the filters on them) has its index.
CREATE INDEX change_workflow_organization_idx ON change_workflow (organization_id, change_workflow_id);
CREATE INDEX change_workflow_space_idx ON change_workflow (space_id, change_workflow_id);
CREATE INDEX change_workflow_slug_idx ON change_workflow (organization_id, slug, change_workflow_id);
CREATE INDEX change_workflow_display_name_idx ON change_workflow (organization_id, display_name, change_workflow_id);
CREATE INDEX change_workflow_hidden_reason_idx ON change_workflow (organization_id, hidden_reason, change_workflow_id);
CREATE INDEX change_workflow_created_at_idx ON change_workflow (organization_id, created_at, change_workflow_id);
CREATE INDEX change_workflow_updated_at_idx ON change_workflow (organization_id, updated_at, change_workflow_id);
CREATE INDEX change_workflow_labels_idx ON change_workflow USING gin (labels);
CREATE INDEX change_workflow_annotations_idx ON change_workflow USING gin (annotations);
CREATE INDEX change_workflow_search_idx ON change_workflow USING gin (search_text gin_trgm_ops);
