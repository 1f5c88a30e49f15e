-- Triggers: function calls that run on every change of the matching Units of their Space. Validating
-- ones record their findings on the Unit and the Revision; mutating ones change the data as a Mutation.
CREATE TABLE trigger (
    trigger_id         uuid PRIMARY KEY,
    organization_id    uuid        NOT NULL REFERENCES organization,
    space_id           uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug               text        NOT NULL,
    display_name       text        NOT NULL DEFAULT '',
    description        text        NOT NULL DEFAULT '',
    labels             jsonb       NOT NULL DEFAULT '{}',
    annotations        jsonb       NOT NULL DEFAULT '{}',
    delete_gates       jsonb       NOT NULL DEFAULT '{}',
    event              text        NOT NULL,
    toolchain_type     text        NOT NULL,
    function_name      text        NOT NULL,
    -- The call as the API writes it: Arguments [{ParameterName, Value}], Clearance [{Key, Operator, Values}].
    arguments          jsonb       NOT NULL DEFAULT '[]',
    where_resource     text        NOT NULL DEFAULT '',
    guards             jsonb       NOT NULL DEFAULT '{}',
    clearance          jsonb       NOT NULL DEFAULT '[]',
    protect            boolean     NOT NULL DEFAULT false,
    params             jsonb       NOT NULL DEFAULT '{}',
    other_data_source  text        NOT NULL DEFAULT '',
    fail_open_after    integer,
    where_unit         text        NOT NULL DEFAULT '',
    -- A Trigger's Filter narrows the Units it runs on; the Filter cannot be deleted while a Trigger uses it.
    unit_filter_id     uuid        REFERENCES filter ON DELETE RESTRICT,
    validating         boolean     NOT NULL,
    warn               boolean     NOT NULL DEFAULT false,
    disabled           boolean     NOT NULL DEFAULT false,
    hidden_reason      text        NOT NULL DEFAULT '',
    version            bigint      NOT NULL DEFAULT 1,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    hash               text        NOT NULL,
    search_text        text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || description || ' ' || function_name || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT trigger_slug_key UNIQUE (space_id, slug)
);
-- Every order field of the list (and the filters on them) has its index; nullable IDs order as the nil UUID.
CREATE INDEX trigger_organization_idx ON trigger (organization_id, trigger_id);
CREATE INDEX trigger_space_idx ON trigger (space_id, trigger_id);
CREATE INDEX trigger_slug_idx ON trigger (organization_id, slug, trigger_id);
CREATE INDEX trigger_display_name_idx ON trigger (organization_id, display_name, trigger_id);
CREATE INDEX trigger_event_idx ON trigger (organization_id, event, trigger_id);
CREATE INDEX trigger_toolchain_idx ON trigger (organization_id, toolchain_type, trigger_id);
CREATE INDEX trigger_function_idx ON trigger (organization_id, function_name, trigger_id);
CREATE INDEX trigger_hash_idx ON trigger (organization_id, hash, trigger_id);
CREATE INDEX trigger_hidden_reason_idx ON trigger (organization_id, hidden_reason, trigger_id);
CREATE INDEX trigger_created_at_idx ON trigger (organization_id, created_at, trigger_id);
CREATE INDEX trigger_updated_at_idx ON trigger (organization_id, updated_at, trigger_id);
CREATE INDEX trigger_unit_filter_idx ON trigger (organization_id, (COALESCE(unit_filter_id, '00000000-0000-0000-0000-000000000000'::uuid)), trigger_id);
CREATE INDEX trigger_unit_filter_fk_idx ON trigger (unit_filter_id) WHERE unit_filter_id IS NOT NULL;
CREATE INDEX trigger_labels_idx ON trigger USING gin (labels);
CREATE INDEX trigger_search_idx ON trigger USING gin (search_text gin_trgm_ops);
-- A data write reads the Triggers in force for its Unit by this index.
CREATE INDEX trigger_in_force_idx ON trigger (space_id, toolchain_type) WHERE NOT disabled;

-- What the Triggers found on a Unit's head and on each Revision, by TriggerID: ValidationErrors (failed,
-- not Warn) are the Unit's ApplyGates, ValidationWarnings (failed, Warn) its ApplyWarnings.
ALTER TABLE unit
    ADD COLUMN apply_gates            jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN apply_warnings         jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN validation_errors      jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN validation_warnings    jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN validation_trigger_ids jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN value_trigger_ids      jsonb NOT NULL DEFAULT '[]';
ALTER TABLE revision
    ADD COLUMN validation_errors      jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN validation_warnings    jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN validation_passed      jsonb NOT NULL DEFAULT '{}',
    ADD COLUMN validation_trigger_ids jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN value_trigger_ids      jsonb NOT NULL DEFAULT '[]';
