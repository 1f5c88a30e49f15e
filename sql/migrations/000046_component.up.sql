-- Components: organization-wide sets of Variants (Spaces naming the Component in space.component_id). A
-- Component decides which ChangeWorkflows the promotions and releases of its Variants may use
-- (allowed_change_workflow_ids, plain IDs checked by the service) and whether one is required.
-- upstream_component_id names another Component of the organization (no cycles; checked by the service).
-- backing_unit_id is the Unit holding the Component's document when it was created with_backing_units: a
-- Unit deleted later leaves the Component without one (SET NULL); deleting the Component leaves the Unit.
CREATE TABLE component (
    component_id                uuid PRIMARY KEY,
    organization_id             uuid        NOT NULL REFERENCES organization ON DELETE RESTRICT,
    slug                        text        NOT NULL,
    display_name                text        NOT NULL DEFAULT '',
    labels                      jsonb       NOT NULL DEFAULT '{}',
    annotations                 jsonb       NOT NULL DEFAULT '{}',
    delete_gates                jsonb       NOT NULL DEFAULT '{}',
    permissions                 jsonb       NOT NULL DEFAULT '{}',
    allowed_change_workflow_ids uuid[]      NOT NULL DEFAULT '{}',
    change_workflow_required    boolean     NOT NULL DEFAULT false,
    upstream_component_id       uuid        REFERENCES component ON DELETE RESTRICT,
    backing_unit_id             uuid        REFERENCES unit ON DELETE SET NULL,
    hidden_reason               text        NOT NULL DEFAULT '',
    version                     bigint      NOT NULL DEFAULT 1,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    search_text                 text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT component_slug_key UNIQUE (organization_id, slug)
);
-- Every order field of the list (and the filters on them) has its index; nullable IDs order as the nil UUID.
CREATE INDEX component_organization_idx ON component (organization_id, component_id);
CREATE INDEX component_slug_idx ON component (organization_id, slug, component_id);
CREATE INDEX component_display_name_idx ON component (organization_id, display_name, component_id);
CREATE INDEX component_change_workflow_required_idx ON component (organization_id, change_workflow_required, component_id);
CREATE INDEX component_upstream_idx ON component (organization_id, (COALESCE(upstream_component_id, '00000000-0000-0000-0000-000000000000'::uuid)), component_id);
CREATE INDEX component_backing_unit_idx ON component (organization_id, (COALESCE(backing_unit_id, '00000000-0000-0000-0000-000000000000'::uuid)), component_id);
CREATE INDEX component_hidden_reason_idx ON component (organization_id, hidden_reason, component_id);
CREATE INDEX component_created_at_idx ON component (organization_id, created_at, component_id);
CREATE INDEX component_updated_at_idx ON component (organization_id, updated_at, component_id);
CREATE INDEX component_allowed_change_workflow_ids_idx ON component USING gin (allowed_change_workflow_ids);
CREATE INDEX component_permissions_idx ON component USING gin (permissions jsonb_path_ops);
CREATE INDEX component_labels_idx ON component USING gin (labels);
CREATE INDEX component_annotations_idx ON component USING gin (annotations);
CREATE INDEX component_search_idx ON component USING gin (search_text gin_trgm_ops);
-- The foreign keys' other ends: a Unit's delete finds the Component it backs, an upstream's the ones below it.
CREATE INDEX component_backing_unit_fk_idx ON component (backing_unit_id) WHERE backing_unit_id IS NOT NULL;
CREATE INDEX component_upstream_fk_idx ON component (upstream_component_id) WHERE upstream_component_id IS NOT NULL;

-- A Variant names its Component; the Component cannot go while Spaces name it (the service answers 409
-- naming them first; the key holds against a racing Space write).
ALTER TABLE space ADD CONSTRAINT space_component_fk FOREIGN KEY (component_id) REFERENCES component ON DELETE RESTRICT;
CREATE INDEX space_component_fk_idx ON space (component_id) WHERE component_id IS NOT NULL;
