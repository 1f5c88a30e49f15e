-- name: ChangeSetInsert :one
INSERT INTO change_set (change_set_id, organization_id, space_id, user_id, slug, display_name, description, labels,
                        annotations, delete_gates, permissions, state, close_override, review_requests, in_scope_space_ids,
                        change_workflow_id, change_workflow)
VALUES (@change_set_id, @organization_id, @space_id, @user_id, @slug, @display_name, @description, @labels,
        @annotations, @delete_gates, @permissions, @state, @close_override, @review_requests, @in_scope_space_ids,
        @change_workflow_id, @change_workflow)
RETURNING *;

-- name: ChangeSetUpdate :one
UPDATE change_set
SET slug = @slug, display_name = @display_name, description = @description, labels = @labels,
    annotations = @annotations, delete_gates = @delete_gates, permissions = @permissions, state = @state,
    close_override = @close_override, review_requests = @review_requests, in_scope_space_ids = @in_scope_space_ids,
    change_workflow_id = @change_workflow_id, change_workflow = @change_workflow, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND change_set_id = @change_set_id AND version = @version
RETURNING *;

-- name: ChangeSetMove :one
UPDATE change_set SET space_id = @to_space_id, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND change_set_id = @change_set_id
RETURNING *;

-- name: ChangeSetGetForShare :one
-- Held by a Unit write joining the ChangeSet or recording it on a Revision until it commits: a close or
-- delete of the ChangeSet (which locks it FOR UPDATE) waits for the write, then sees its Unit.
SELECT * FROM change_set WHERE organization_id = @organization_id AND change_set_id = @change_set_id FOR SHARE;

-- name: ChangeSetUnitCount :one
SELECT count(*) FROM unit WHERE organization_id = @organization_id AND change_set_id = @change_set_id;

-- name: ChangeSetReleaseUnits :many
-- A ChangeSet closed, abandoned or deleted with detach lets its Units go; their Revisions keep its ID.
-- It answers what each Unit's unit.updated event names.
UPDATE unit SET change_set_id = NULL, version = unit.version + 1, updated_at = now()
FROM space
WHERE unit.organization_id = @organization_id AND unit.change_set_id = @change_set_id AND space.space_id = unit.space_id
RETURNING unit.unit_id, unit.slug, unit.version, unit.space_id, space.slug AS space_slug;

-- name: RevisionNewestInChangeSet :one
-- The newest Revision of the Unit recorded with the ChangeSet (a bulk tag's ChangeSet:<id> selector).
SELECT * FROM revision WHERE organization_id = @organization_id AND unit_id = @unit_id AND change_set_id = @change_set_id
ORDER BY revision_num DESC LIMIT 1;

-- name: ChangeSetSetTags :one
-- Records the ChangeSet's start and end Tags, as part of the write that made them (no new Version).
UPDATE change_set SET start_tag_id = @start_tag_id, end_tag_id = @end_tag_id, start_tag_is_prior_revision = @start_tag_is_prior_revision
WHERE organization_id = @organization_id AND change_set_id = @change_set_id
RETURNING *;

-- name: ChangeSetUnitHeads :many
-- The head Revisions of the Units that recorded Revisions with the ChangeSet (where a close puts its end Tag).
SELECT u.head_revision_id::uuid AS head_revision_id FROM unit u
WHERE u.organization_id = @organization_id AND u.head_revision_id IS NOT NULL
  AND u.unit_id IN (SELECT r.unit_id FROM revision r WHERE r.change_set_id = @change_set_id AND r.organization_id = @organization_id);
