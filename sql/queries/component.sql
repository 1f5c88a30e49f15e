-- name: ComponentInsert :one
INSERT INTO component (component_id, organization_id, slug, display_name, labels, annotations, delete_gates, permissions,
                       allowed_change_workflow_ids, change_workflow_required, upstream_component_id)
VALUES (@component_id, @organization_id, @slug, @display_name, @labels, @annotations, @delete_gates, @permissions,
        @allowed_change_workflow_ids::uuid[], @change_workflow_required, @upstream_component_id)
RETURNING *;

-- name: ComponentUpdate :one
UPDATE component
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions,
    allowed_change_workflow_ids = @allowed_change_workflow_ids::uuid[],
    change_workflow_required = @change_workflow_required, upstream_component_id = @upstream_component_id,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND component_id = @component_id AND version = @version
RETURNING *;

-- name: ComponentSetBackingUnit :one
-- The backing Unit made for the Component in the same write (no new Version: one write, one Version).
UPDATE component SET backing_unit_id = @backing_unit_id
WHERE organization_id = @organization_id AND component_id = @component_id
RETURNING *;

-- name: ComponentLockOrganization :exec
-- Writes that set an UpstreamComponentID serialize per organization, so two that together would close a
-- cycle cannot both pass their check.
SELECT pg_advisory_xact_lock(hashtext('hubd.component'), hashtext(sqlc.arg(organization_id)::uuid::text));

-- name: ComponentUpstreams :many
-- The chain of upstreams from start (start included), by following upstream_component_id. UNION ends the
-- walk even on a cycle; the LIMIT bounds it.
WITH RECURSIVE chain(component_id, slug, upstream_component_id) AS (
    SELECT c.component_id, c.slug, c.upstream_component_id FROM component c
    WHERE c.organization_id = @organization_id AND c.component_id = @start_id::uuid
    UNION
    SELECT c.component_id, c.slug, c.upstream_component_id FROM chain
    JOIN component c ON c.organization_id = @organization_id AND c.component_id = chain.upstream_component_id
)
SELECT chain.component_id, chain.slug FROM chain LIMIT 10000;

-- name: ComponentPolicyForSpaces :many
-- The Component of each of the Spaces that are Variants (one query for the promotion engine).
SELECT s.space_id, c.component_id, c.slug, c.allowed_change_workflow_ids, c.change_workflow_required
FROM space s JOIN component c ON c.organization_id = s.organization_id AND c.component_id = s.component_id
WHERE s.organization_id = @organization_id AND s.space_id = ANY(@space_ids::uuid[]);
