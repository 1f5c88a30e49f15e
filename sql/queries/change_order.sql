-- name: ChangeOrderInsert :one
INSERT INTO change_order (change_order_id, organization_id, space_id, slug, display_name, description, labels, annotations,
                          delete_gates, permissions, update_type, where_space, where_unit, space_filter_id, unit_filter_id,
                          in_scope_space_ids, parameters, invocation_id, change_workflow_id, change_workflow, aborted_reason, state,
                          adopted_end_tag_id)
VALUES (@change_order_id, @organization_id, @space_id, @slug, @display_name, @description, @labels, @annotations,
        @delete_gates, @permissions, @update_type, @where_space, @where_unit, sqlc.narg(space_filter_id), sqlc.narg(unit_filter_id),
        @in_scope_space_ids, @parameters, sqlc.narg(invocation_id), sqlc.narg(change_workflow_id), sqlc.narg(change_workflow),
        @aborted_reason, @state, sqlc.narg(adopted_end_tag_id))
RETURNING *;

-- name: ChangeOrderUpdate :one
UPDATE change_order
SET slug = @slug, display_name = @display_name, description = @description, labels = @labels,
    annotations = @annotations, delete_gates = @delete_gates, permissions = @permissions, update_type = @update_type,
    where_space = @where_space, where_unit = @where_unit, space_filter_id = sqlc.narg(space_filter_id),
    unit_filter_id = sqlc.narg(unit_filter_id), in_scope_space_ids = @in_scope_space_ids, parameters = @parameters,
    invocation_id = sqlc.narg(invocation_id), change_workflow_id = sqlc.narg(change_workflow_id),
    change_workflow = sqlc.narg(change_workflow), aborted_reason = @aborted_reason, state = @state,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND change_order_id = @change_order_id AND version = @version
RETURNING *;

-- name: ChangeOrderSetTags :one
-- The Tags made (or the end Tag adopted) with a ChangeOrder, recorded in its create (no new Version).
UPDATE change_order SET start_tag_id = @start_tag_id, end_tag_id = @end_tag_id, adopted_end_tag_id = sqlc.narg(adopted_end_tag_id)
WHERE organization_id = @organization_id AND change_order_id = @change_order_id
RETURNING *;

-- name: ChangeOrderSetProgress :one
-- What a promotion, a restore or a publish records (changeorder.SetProgress), with a new Version; null
-- released_space_ids or released_restored_space_ids keep what is stored.
UPDATE change_order
SET state = @state, stage = sqlc.narg(stage), resolved_space_ids = @resolved_space_ids, restored_space_ids = @restored_space_ids,
    released_space_ids = COALESCE(sqlc.narg(released_space_ids)::uuid[], released_space_ids),
    released_restored_space_ids = COALESCE(sqlc.narg(released_restored_space_ids)::uuid[], released_restored_space_ids),
    skipped_units = @skipped_units, promotion_overrides = @promotion_overrides, promotion_failures = @promotion_failures,
    restore_tag_id = sqlc.narg(restore_tag_id), version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND change_order_id = @change_order_id
RETURNING *;

-- name: ChangeOrderGetForUpdate :one
SELECT * FROM change_order WHERE organization_id = @organization_id AND change_order_id = @change_order_id FOR UPDATE;

-- name: ChangeOrderGetForShare :one
-- Held by a write naming the ChangeOrder (an Attestation) until it commits: a delete (FOR UPDATE) waits for it.
SELECT * FROM change_order WHERE organization_id = @organization_id AND change_order_id = @change_order_id FOR SHARE;

-- name: ChangeOrderTagsAmong :many
-- Which of the Tags tag_ids a ChangeOrder made (a Revision's include=ChangeOrders; primary key reads).
SELECT tag_id, change_order_id::uuid AS change_order_id FROM tag
WHERE organization_id = @organization_id AND tag_id = ANY(@tag_ids::uuid[]) AND change_order_id IS NOT NULL;
