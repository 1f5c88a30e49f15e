-- ChangeSets: named groups of changes in a Space. Units join one by setting their ChangeSetID (unit.change_set_id,
-- a plain ID checked by the service, which share-locks the ChangeSet while it checks); the Revisions written
-- while a Unit is in one record its ID. State is Open, Closed or Abandoned; review_requests is a JSON array
-- of {UserID, Status}. start_tag_id, end_tag_id and change_workflow_id are reserved: always null for now.
CREATE TABLE change_set (
    change_set_id               uuid PRIMARY KEY,
    organization_id             uuid        NOT NULL REFERENCES organization,
    space_id                    uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    user_id                     uuid        NOT NULL,
    slug                        text        NOT NULL,
    display_name                text        NOT NULL DEFAULT '',
    description                 text        NOT NULL DEFAULT '',
    labels                      jsonb       NOT NULL DEFAULT '{}',
    annotations                 jsonb       NOT NULL DEFAULT '{}',
    delete_gates                jsonb       NOT NULL DEFAULT '{}',
    permissions                 jsonb       NOT NULL DEFAULT '{}',
    state                       text        NOT NULL DEFAULT 'Open',
    close_override              boolean     NOT NULL DEFAULT false,
    review_requests             jsonb       NOT NULL DEFAULT '[]',
    in_scope_space_ids          uuid[]      NOT NULL DEFAULT '{}',
    change_workflow_id          uuid,
    start_tag_id                uuid,
    end_tag_id                  uuid,
    start_tag_is_prior_revision boolean     NOT NULL DEFAULT false,
    hidden_reason               text        NOT NULL DEFAULT '',
    version                     bigint      NOT NULL DEFAULT 1,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    search_text                 text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || description || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT change_set_slug_key UNIQUE (space_id, slug)
);
-- Every order field of the list (and the filters on them) has its index; nullable IDs order as the nil UUID.
CREATE INDEX change_set_organization_idx ON change_set (organization_id, change_set_id);
CREATE INDEX change_set_space_idx ON change_set (space_id, change_set_id);
CREATE INDEX change_set_slug_idx ON change_set (organization_id, slug, change_set_id);
CREATE INDEX change_set_display_name_idx ON change_set (organization_id, display_name, change_set_id);
CREATE INDEX change_set_description_idx ON change_set (organization_id, description, change_set_id);
CREATE INDEX change_set_state_idx ON change_set (organization_id, state, change_set_id);
CREATE INDEX change_set_user_idx ON change_set (organization_id, user_id, change_set_id);
CREATE INDEX change_set_change_workflow_idx ON change_set (organization_id, (COALESCE(change_workflow_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_set_id);
CREATE INDEX change_set_start_tag_idx ON change_set (organization_id, (COALESCE(start_tag_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_set_id);
CREATE INDEX change_set_end_tag_idx ON change_set (organization_id, (COALESCE(end_tag_id, '00000000-0000-0000-0000-000000000000'::uuid)), change_set_id);
CREATE INDEX change_set_start_tag_is_prior_revision_idx ON change_set (organization_id, start_tag_is_prior_revision, change_set_id);
CREATE INDEX change_set_hidden_reason_idx ON change_set (organization_id, hidden_reason, change_set_id);
CREATE INDEX change_set_created_at_idx ON change_set (organization_id, created_at, change_set_id);
CREATE INDEX change_set_updated_at_idx ON change_set (organization_id, updated_at, change_set_id);
CREATE INDEX change_set_permissions_idx ON change_set USING gin (permissions jsonb_path_ops);
CREATE INDEX change_set_labels_idx ON change_set USING gin (labels);
CREATE INDEX change_set_annotations_idx ON change_set USING gin (annotations);
CREATE INDEX change_set_search_idx ON change_set USING gin (search_text gin_trgm_ops);
-- The ChangeSet: revision selector reads a Unit's newest Revision recorded with a ChangeSet.
CREATE INDEX revision_change_set_idx ON revision (organization_id, unit_id, change_set_id, revision_num) WHERE change_set_id IS NOT NULL;
