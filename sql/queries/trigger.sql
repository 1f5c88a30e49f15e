-- name: TriggerInsert :one
INSERT INTO trigger (trigger_id, organization_id, space_id, slug, display_name, description, labels, annotations,
                     delete_gates, event, toolchain_type, function_name, arguments, where_resource, guards, clearance,
                     protect, params, other_data_source, fail_open_after, where_unit, unit_filter_id, invocation_id,
                     validating, warn, disabled, hash)
VALUES (@trigger_id, @organization_id, @space_id, @slug, @display_name, @description, @labels, @annotations,
        @delete_gates, @event, @toolchain_type, @function_name, @arguments, @where_resource, @guards, @clearance,
        @protect, @params, @other_data_source, sqlc.narg(fail_open_after)::integer, @where_unit, @unit_filter_id,
        sqlc.narg(invocation_id)::uuid, @validating, @warn, @disabled, @hash)
RETURNING *;

-- name: TriggerUpdate :one
UPDATE trigger
SET slug = @slug, display_name = @display_name, description = @description, labels = @labels,
    annotations = @annotations, delete_gates = @delete_gates, event = @event, toolchain_type = @toolchain_type,
    function_name = @function_name, arguments = @arguments, where_resource = @where_resource, guards = @guards,
    clearance = @clearance, protect = @protect, params = @params, other_data_source = @other_data_source,
    fail_open_after = sqlc.narg(fail_open_after)::integer, where_unit = @where_unit, unit_filter_id = @unit_filter_id,
    invocation_id = sqlc.narg(invocation_id)::uuid, validating = @validating, warn = @warn, disabled = @disabled, hash = @hash, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND trigger_id = @trigger_id AND version = @version
RETURNING *;

-- name: TriggerIDsBySpace :many
-- The Triggers in force in each of some Spaces (Space.TriggerIDs), by Slug.
SELECT space_id, array_agg(trigger_id ORDER BY slug)::uuid[] AS trigger_ids
FROM trigger
WHERE organization_id = @organization_id AND space_id = ANY(@space_ids::uuid[]) AND NOT disabled
GROUP BY space_id;

-- name: TriggerCountInSpace :one
-- The Triggers of a Space (bounded per Space when one is created).
SELECT count(*) FROM trigger WHERE organization_id = @organization_id AND space_id = @space_id;

-- name: TriggersUsingFilter :many
-- The Triggers that select Units with a Filter (an edit of the Filter must keep them able to select).
SELECT * FROM trigger WHERE organization_id = @organization_id AND unit_filter_id = sqlc.arg(filter_id)::uuid ORDER BY slug;
