-- name: UnitInsert :one
INSERT INTO unit (unit_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                  destroy_gates, permissions, toolchain_type, provider_type, target_id, change_set_id,
                  last_change_description, data_hash, data_size, head_doc,
                  upstream_unit_id, upstream_space_id, upstream_revision_num)
VALUES (@unit_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @destroy_gates, @permissions, @toolchain_type, @provider_type, @target_id, @change_set_id,
        @last_change_description, @data_hash, @data_size, @head_doc,
        @upstream_unit_id, @upstream_space_id, @upstream_revision_num)
RETURNING *;

-- name: UnitUpdate :one
UPDATE unit
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, destroy_gates = @destroy_gates, permissions = @permissions,
    provider_type = @provider_type, target_id = @target_id, change_set_id = @change_set_id,
    last_change_description = @last_change_description,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND unit_id = @unit_id AND version = @version
RETURNING *;

-- name: UnitRecordRevision :one
-- Records new data of the locked Unit in one statement: the content (once per hash), the Revision, its
-- first Mutation (a function invocation may add more: MutationInsert), the Unit's head, and its path
-- annotations when the write changed them. A write that already bumped Version in its transaction (a PATCH with
-- restore) does not bump it again: one write, one Version. A merge (an upgrade) records its source and range on the
-- Mutation, its conflicts on the Revision, and sets the Unit's outstanding conflicts and UpstreamRevisionNum.
WITH stored AS (
    INSERT INTO config_data (data_hash, data, data_size) VALUES (@data_hash, @data, @data_size)
    ON CONFLICT (data_hash) DO NOTHING
), recorded AS (
    INSERT INTO revision (revision_id, organization_id, space_id, unit_id, revision_num, description, source,
                          user_id, user_agent, change_set_id, data_hash, data_size, mutation_sources,
                          validation_errors, validation_warnings, validation_passed, validation_trigger_ids, value_trigger_ids, conflicts)
    VALUES (@revision_id, @organization_id, @space_id, @unit_id, @revision_num, @description, @source,
            @user_id, @user_agent, @change_set_id, @data_hash, @data_size, @mutation_sources,
            @validation_errors, @validation_warnings, @validation_passed, @validation_trigger_ids, @value_trigger_ids,
            @revision_conflicts)
), mutated AS (
    INSERT INTO mutation (mutation_id, organization_id, space_id, unit_id, revision_id, revision_num, mutation_num,
                          restored_revision_num, function_invocation, subgroup, trigger_id, invocation_id, invocation_params,
                          merge_source_id, merge_base_revision_num, merge_end_revision_num, link_id)
    VALUES (@mutation_id, @organization_id, @space_id, @unit_id, @revision_id, @revision_num, @mutation_num,
            @restored_revision_num, sqlc.narg(function_invocation)::jsonb, @subgroup, sqlc.narg(trigger_id)::uuid,
            sqlc.narg(invocation_id)::uuid, @invocation_params,
            sqlc.narg(merge_source_id)::uuid, @merge_base_revision_num, @merge_end_revision_num, sqlc.narg(link_id)::uuid)
)
UPDATE unit
SET data_hash = @data_hash, data_size = @data_size, head_doc = @head_doc,
    head_revision_id = @revision_id, head_revision_num = @revision_num,
    head_mutation_num = @head_mutation_num, last_change_description = @description,
    path_annotations = COALESCE(sqlc.narg(path_annotations)::jsonb, unit.path_annotations),
    conflicts = COALESCE(sqlc.narg(unit_conflicts)::jsonb, unit.conflicts),
    upstream_revision_num = COALESCE(sqlc.narg(upstream_revision_num)::bigint, unit.upstream_revision_num),
    validation_errors = @validation_errors, validation_warnings = @validation_warnings,
    apply_gates = @validation_errors, apply_warnings = @validation_warnings,
    validation_trigger_ids = @validation_trigger_ids, value_trigger_ids = @value_trigger_ids,
    version = unit.version + CASE WHEN @bump_version::boolean THEN 1 ELSE 0 END, updated_at = now()
WHERE unit.unit_id = @unit_id
RETURNING *;

-- name: UnitGetForDataWrite :one
-- A data write's one read: the Unit locked as a write's read of it locks it (FOR UPDATE), its Space's Slug (for the
-- event), the head Revision's MutationSources (unchanged paths keep their sources) and the Triggers in
-- force for the Unit (enabled, of its Space and ToolchainType, by Slug), each with the Invocation it runs and
-- the Filter that narrows its Units.
SELECT sqlc.embed(u), s.slug AS space_slug, COALESCE(r.mutation_sources, '[]'::jsonb)::jsonb AS head_sources,
       COALESCE((SELECT jsonb_agg(to_jsonb(t) || jsonb_build_object('invocation', to_jsonb(i), 'unit_filter', to_jsonb(f)) ORDER BY t.slug)
                 FROM trigger t
                 LEFT JOIN invocation i ON i.invocation_id = t.invocation_id
                 LEFT JOIN filter f ON f.filter_id = t.unit_filter_id
                 WHERE t.space_id = u.space_id AND t.toolchain_type = u.toolchain_type AND NOT t.disabled),
                '[]'::jsonb)::jsonb AS triggers
FROM unit u
JOIN space s ON s.organization_id = u.organization_id AND s.space_id = u.space_id
LEFT JOIN revision r ON r.organization_id = u.organization_id AND r.revision_id = u.head_revision_id
WHERE u.organization_id = @organization_id AND u.space_id = @space_id AND u.unit_id = @unit_id
FOR UPDATE OF u;

-- name: UnitDataWriteContext :one
-- What a data write reads besides the locked Unit, in one round trip: as UnitGetForDataWrite.
SELECT s.slug AS space_slug,
       COALESCE((SELECT r.mutation_sources FROM revision r
                 WHERE r.organization_id = s.organization_id AND r.revision_id = sqlc.narg(head_revision_id)::uuid),
                '[]'::jsonb)::jsonb AS head_sources,
       COALESCE((SELECT jsonb_agg(to_jsonb(t) || jsonb_build_object('invocation', to_jsonb(i), 'unit_filter', to_jsonb(f)) ORDER BY t.slug)
                 FROM trigger t
                 LEFT JOIN invocation i ON i.invocation_id = t.invocation_id
                 LEFT JOIN filter f ON f.filter_id = t.unit_filter_id
                 WHERE t.space_id = s.space_id AND t.toolchain_type = @toolchain_type AND NOT t.disabled),
                '[]'::jsonb)::jsonb AS triggers
FROM space s
WHERE s.organization_id = @organization_id AND s.space_id = @space_id;

-- name: UnitMove :one
UPDATE unit SET space_id = @to_space_id, target_id = NULL, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND unit_id = @unit_id
RETURNING *;

-- name: RevisionMoveUnit :exec
UPDATE revision SET space_id = @to_space_id WHERE unit_id = @unit_id;

-- name: MutationMoveUnit :exec
UPDATE mutation SET space_id = @to_space_id WHERE unit_id = @unit_id;

-- name: UnitSetPathAnnotations :one
UPDATE unit SET path_annotations = @path_annotations, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND unit_id = @unit_id
RETURNING *;

-- name: UnitForgetTriggerFindings :many
-- Takes a Trigger's findings (gates, warnings, IDs) off the Units of its Space, each a new Version: a
-- Trigger deleted or disabled no longer holds a Unit back.
UPDATE unit
SET apply_gates = apply_gates - @trigger_id::text, apply_warnings = apply_warnings - @trigger_id::text,
    validation_errors = validation_errors - @trigger_id::text, validation_warnings = validation_warnings - @trigger_id::text,
    validation_trigger_ids = validation_trigger_ids - @trigger_id::text, value_trigger_ids = value_trigger_ids - @trigger_id::text,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND space_id = @space_id
  AND (validation_trigger_ids ? @trigger_id::text OR value_trigger_ids ? @trigger_id::text)
RETURNING *;

-- name: UnitSetConflicts :one
-- Sets a Unit's outstanding conflicts (and UpstreamRevisionNum, when given) without new data: an upgrade that
-- changed nothing, conflicts dismissed. A write that already bumped Version in its transaction does not bump it again.
UPDATE unit SET conflicts = @conflicts,
    upstream_revision_num = COALESCE(sqlc.narg(upstream_revision_num)::bigint, upstream_revision_num),
    version = version + CASE WHEN @bump_version::boolean THEN 1 ELSE 0 END, updated_at = now()
WHERE organization_id = @organization_id AND unit_id = @unit_id
RETURNING *;

-- name: UnitSpaceOf :one
-- The Space of a Unit of the organization (a backing Unit, named by the entity it backs without its Space).
SELECT space_id FROM unit WHERE organization_id = @organization_id AND unit_id = @unit_id;
