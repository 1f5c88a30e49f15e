-- name: SpaceGetByID :one
SELECT * FROM space WHERE organization_id = @organization_id AND space_id = @space_id;

-- name: SpaceGetBySlug :one
SELECT * FROM space WHERE organization_id = @organization_id AND slug = @slug;

-- name: SpaceInsert :one
INSERT INTO space (space_id, organization_id, slug, display_name, labels, annotations, delete_gates,
                   permissions, component_id)
VALUES (@space_id, @organization_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @permissions, @component_id)
RETURNING *;

-- name: SpaceUpdate :one
UPDATE space
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, component_id = @component_id,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND space_id = @space_id AND version = @version
RETURNING *;

-- name: SpaceGrantsContaining :many
-- The Spaces whose Permissions contain one of the documents (a caller's grants: authz.Containing), by
-- the GIN index on permissions.
SELECT space_id, permissions FROM space WHERE organization_id = @organization_id AND permissions @> ANY(@docs::jsonb[]);

-- name: SpacesOfComponent :many
-- The Variants of a Component (a delete of the Component is refused while there are any), by Slug.
SELECT space_id, slug FROM space WHERE organization_id = @organization_id AND component_id = @component_id
ORDER BY slug LIMIT 100;
