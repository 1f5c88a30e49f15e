-- name: InvocationInsert :one
INSERT INTO invocation (invocation_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                        toolchain_type, function_invocations, parameters, mutating, validating, hash)
VALUES (@invocation_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @toolchain_type, @function_invocations, @parameters, @mutating, @validating, @hash)
RETURNING *;

-- name: InvocationUpdate :one
UPDATE invocation
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations, delete_gates = @delete_gates,
    toolchain_type = @toolchain_type, function_invocations = @function_invocations, parameters = @parameters,
    mutating = @mutating, validating = @validating, hash = @hash, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND invocation_id = @invocation_id AND version = @version
RETURNING *;

-- name: TriggersRunningInvocation :many
-- The Triggers that run an Invocation (an edit of the Invocation must keep them able to run).
SELECT * FROM trigger WHERE organization_id = @organization_id AND invocation_id = sqlc.arg(invocation_id)::uuid ORDER BY slug;
