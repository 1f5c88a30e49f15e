-- Invocations: named, stored lists of function invocations of one ToolchainType, with the Parameters their
-- arguments refer to ({{.Name}}). They are invoked by reference and run by Triggers.
CREATE TABLE invocation (
    invocation_id        uuid PRIMARY KEY,
    organization_id      uuid        NOT NULL REFERENCES organization,
    space_id             uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    slug                 text        NOT NULL,
    display_name         text        NOT NULL DEFAULT '',
    labels               jsonb       NOT NULL DEFAULT '{}',
    annotations          jsonb       NOT NULL DEFAULT '{}',
    delete_gates         jsonb       NOT NULL DEFAULT '{}',
    toolchain_type       text        NOT NULL,
    -- As the API writes them: [{FunctionName, Arguments, WhereResource, Guards, Clearance}] and
    -- [{ParameterName, DataType, Required, ...}].
    function_invocations jsonb       NOT NULL,
    parameters           jsonb       NOT NULL DEFAULT '[]',
    -- Whether its functions change data (all of them) or validate it (all of them); neither when mixed or reading.
    mutating             boolean     NOT NULL,
    validating           boolean     NOT NULL,
    hidden_reason        text        NOT NULL DEFAULT '',
    version              bigint      NOT NULL DEFAULT 1,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    hash                 text        NOT NULL,
    search_text          text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' ||
        hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT invocation_slug_key UNIQUE (space_id, slug)
);
-- Every order field of the list (and the filters on them) has its index.
CREATE INDEX invocation_organization_idx ON invocation (organization_id, invocation_id);
CREATE INDEX invocation_space_idx ON invocation (space_id, invocation_id);
CREATE INDEX invocation_slug_idx ON invocation (organization_id, slug, invocation_id);
CREATE INDEX invocation_display_name_idx ON invocation (organization_id, display_name, invocation_id);
CREATE INDEX invocation_toolchain_idx ON invocation (organization_id, toolchain_type, invocation_id);
CREATE INDEX invocation_hash_idx ON invocation (organization_id, hash, invocation_id);
CREATE INDEX invocation_hidden_reason_idx ON invocation (organization_id, hidden_reason, invocation_id);
CREATE INDEX invocation_created_at_idx ON invocation (organization_id, created_at, invocation_id);
CREATE INDEX invocation_updated_at_idx ON invocation (organization_id, updated_at, invocation_id);
CREATE INDEX invocation_labels_idx ON invocation USING gin (labels);
CREATE INDEX invocation_search_idx ON invocation USING gin (search_text gin_trgm_ops);

-- A Trigger may run a stored Invocation (of its Space) instead of one function; the Invocation cannot be
-- deleted while a Trigger runs it.
ALTER TABLE trigger ADD COLUMN invocation_id uuid REFERENCES invocation ON DELETE RESTRICT;
CREATE INDEX trigger_invocation_idx ON trigger (organization_id, (COALESCE(invocation_id, '00000000-0000-0000-0000-000000000000'::uuid)), trigger_id);
CREATE INDEX trigger_invocation_fk_idx ON trigger (invocation_id) WHERE invocation_id IS NOT NULL;
