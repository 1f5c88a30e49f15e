-- name: TargetGetByIDForShare :one
-- A Unit naming the Target holds this until it commits: a Target update (FOR UPDATE) waits, then sees the Unit.
SELECT * FROM target WHERE organization_id = @organization_id AND space_id = @space_id AND target_id = @target_id FOR SHARE;

-- name: TargetListByIDs :many
SELECT * FROM target WHERE organization_id = @organization_id AND target_id = ANY(@target_ids::uuid[]);

-- name: TargetInUse :one
SELECT EXISTS (SELECT 1 FROM unit WHERE target_id = @target_id);

-- name: TargetInsert :one
INSERT INTO target (target_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                    permissions, toolchain_type, provider_type, bridge_worker_id, bridge_handle, options, facts,
                    live_state_type)
VALUES (@target_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @permissions, @toolchain_type, @provider_type, @bridge_worker_id, @bridge_handle, @options, @facts,
        @live_state_type)
RETURNING *;

-- name: TargetUpdate :one
UPDATE target
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, toolchain_type = @toolchain_type,
    provider_type = @provider_type, bridge_worker_id = @bridge_worker_id, bridge_handle = @bridge_handle,
    options = @options, facts = @facts, live_state_type = @live_state_type,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND target_id = @target_id AND version = @version
RETURNING *;
