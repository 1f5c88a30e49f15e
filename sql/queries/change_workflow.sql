-- name: ChangeWorkflowInsert :one
INSERT INTO change_workflow (change_workflow_id, organization_id, space_id, slug, display_name, labels, annotations,
                             delete_gates, stages, final, custom_prerequisites)
VALUES (@change_workflow_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations,
        @delete_gates, @stages, @final, @custom_prerequisites)
RETURNING *;

-- name: ChangeWorkflowUpdate :one
UPDATE change_workflow
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, stages = @stages, final = @final, custom_prerequisites = @custom_prerequisites,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND change_workflow_id = @change_workflow_id AND version = @version
RETURNING *;

-- name: ChangeWorkflowGetByID :one
-- A ChangeWorkflow of the organization, in any Space (a ChangeOrder copies its content).
SELECT * FROM change_workflow WHERE organization_id = @organization_id AND change_workflow_id = @change_workflow_id;

-- name: ChangeWorkflowSpacesByIDs :many
-- The Spaces of the ChangeWorkflows of the organization among the IDs (to check references to them).
SELECT change_workflow_id, space_id FROM change_workflow
WHERE organization_id = @organization_id AND change_workflow_id = ANY(@change_workflow_ids::uuid[]);
