-- ChangeOrders: a change's identity as it moves between Spaces. state is New, InProgress, Resolved, Released,
-- Aborted, Restored or RestoreReleased; a write moves it only to Aborted (with aborted_reason), the promotion
-- engine the rest. change_workflow is the ChangeWorkflow's content copied when change_workflow_id is set.
-- The progress columns (stage, the *_space_ids, skipped_units, promotion_overrides, promotion_failures,
-- restore_tag_id) are written by promotions only. The Tags marking where the change starts and ends are made
-- with it in its Space; they name it in tag.change_order_id.
CREATE TABLE change_order (
    change_order_id              uuid PRIMARY KEY,
    organization_id              uuid        NOT NULL REFERENCES organization,
    space_id                     uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug                         text        NOT NULL,
    display_name                 text        NOT NULL DEFAULT '',
    description                  text        NOT NULL DEFAULT '',
    labels                       jsonb       NOT NULL DEFAULT '{}',
    annotations                  jsonb       NOT NULL DEFAULT '{}',
    delete_gates                 jsonb       NOT NULL DEFAULT '{}',
    permissions                  jsonb       NOT NULL DEFAULT '{}',
    update_type                  text        NOT NULL DEFAULT 'UpgradeUnit',
    where_space                  text        NOT NULL DEFAULT '',
    where_unit                   text        NOT NULL DEFAULT '',
    space_filter_id              uuid,
    unit_filter_id               uuid,
    in_scope_space_ids           uuid[]      NOT NULL DEFAULT '{}',
    parameters                   jsonb       NOT NULL DEFAULT '{}',
    invocation_id                uuid,
    change_workflow_id           uuid,
    change_workflow              jsonb,
    aborted_reason               text        NOT NULL DEFAULT '',
    state                        text        NOT NULL DEFAULT 'New',
    stage                        text,
    start_tag_id                 uuid REFERENCES tag ON DELETE RESTRICT,
    end_tag_id                   uuid REFERENCES tag ON DELETE RESTRICT,
    restore_tag_id               uuid REFERENCES tag ON DELETE RESTRICT,
    adopted_end_tag_id           uuid REFERENCES tag ON DELETE RESTRICT,
    promotion_overrides          jsonb       NOT NULL DEFAULT '[]',
    promotion_failures           jsonb       NOT NULL DEFAULT '[]',
    resolved_space_ids           uuid[]      NOT NULL DEFAULT '{}',
    released_space_ids           uuid[]      NOT NULL DEFAULT '{}',
    restored_space_ids           uuid[]      NOT NULL DEFAULT '{}',
    released_restored_space_ids  uuid[]      NOT NULL DEFAULT '{}',
    skipped_units                jsonb       NOT NULL DEFAULT '{}',
    hidden_reason                text        NOT NULL DEFAULT '',
    version                      bigint      NOT NULL DEFAULT 1,
    created_at                   timestamptz NOT NULL DEFAULT now(),
    updated_at                   timestamptz NOT NULL DEFAULT now(),
    search_text                  text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || description || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT change_order_slug_key UNIQUE (space_id, slug)
);
-- Every order field of the list (and the filters on them) has its index; nullable IDs order as the nil UUID.
CREATE INDEX change_order_organization_idx ON change_order (organization_id, change_order_id);
CREATE INDEX change_order_space_idx ON change_order (space_id, change_order_id);
CREATE INDEX change_order_slug_idx ON change_order (organization_id, slug, change_order_id);
CREATE INDEX change_order_display_name_idx ON change_order (organization_id, display_name, change_order_id);
CREATE INDEX change_order_description_idx ON change_order (organization_id, description, change_order_id);
CREATE INDEX change_order_update_type_idx ON change_order (organization_id, update_type, change_order_id);
CREATE INDEX change_order_state_idx ON change_order (organization_id, state, change_order_id);
CREATE INDEX change_order_stage_idx ON change_order (organization_id, (COALESCE(stage, '')), change_order_id);
CREATE INDEX change_order_space_filter_idx ON change_order (organization_id, (COALESCE(space_filter_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_unit_filter_idx ON change_order (organization_id, (COALESCE(unit_filter_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_invocation_idx ON change_order (organization_id, (COALESCE(invocation_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_change_workflow_idx ON change_order (organization_id, (COALESCE(change_workflow_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_start_tag_idx ON change_order (organization_id, (COALESCE(start_tag_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_end_tag_idx ON change_order (organization_id, (COALESCE(end_tag_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_restore_tag_idx ON change_order (organization_id, (COALESCE(restore_tag_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_adopted_end_tag_idx ON change_order (organization_id, (COALESCE(adopted_end_tag_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_order_id);
CREATE INDEX change_order_hidden_reason_idx ON change_order (organization_id, hidden_reason, change_order_id);
CREATE INDEX change_order_created_at_idx ON change_order (organization_id, created_at, change_order_id);
CREATE INDEX change_order_updated_at_idx ON change_order (organization_id, updated_at, change_order_id);
CREATE INDEX change_order_permissions_idx ON change_order USING gin (permissions jsonb_path_ops);
CREATE INDEX change_order_labels_idx ON change_order USING gin (labels);
CREATE INDEX change_order_annotations_idx ON change_order USING gin (annotations);
CREATE INDEX change_order_search_idx ON change_order USING gin (search_text gin_trgm_ops);
-- Tags deleted while a ChangeOrder names them are refused by the foreign keys above (409); these find them.
CREATE INDEX change_order_start_tag_fk_idx ON change_order (start_tag_id) WHERE start_tag_id IS NOT NULL;
CREATE INDEX change_order_end_tag_fk_idx ON change_order (end_tag_id) WHERE end_tag_id IS NOT NULL;
CREATE INDEX change_order_restore_tag_fk_idx ON change_order (restore_tag_id) WHERE restore_tag_id IS NOT NULL;
CREATE INDEX change_order_adopted_end_tag_fk_idx ON change_order (adopted_end_tag_id) WHERE adopted_end_tag_id IS NOT NULL;

-- A Tag made for a ChangeOrder names it; deleting the ChangeOrder leaves the Tag, naming nothing.
ALTER TABLE tag ADD COLUMN change_order_id uuid REFERENCES change_order ON DELETE SET NULL;
CREATE INDEX tag_change_order_idx ON tag (change_order_id) WHERE change_order_id IS NOT NULL;

-- An Attestation about a ChangeOrder keeps it: deleting a ChangeOrder that Attestations name is refused (409).
ALTER TABLE attestation ADD CONSTRAINT attestation_change_order_fk FOREIGN KEY (change_order_id) REFERENCES change_order ON DELETE RESTRICT;
CREATE INDEX attestation_change_order_fk_idx ON attestation (change_order_id) WHERE change_order_id IS NOT NULL;
