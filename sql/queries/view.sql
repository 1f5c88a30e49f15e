-- name: ViewInsert :one
INSERT INTO view (view_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                  permissions, of_type, columns, filter_id, group_by, order_by, order_by_direction, hash)
VALUES (@view_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @permissions, @of_type, @columns, @filter_id, @group_by, @order_by, @order_by_direction, @hash)
RETURNING *;

-- name: ViewUpdate :one
UPDATE view
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, of_type = @of_type, columns = @columns,
    filter_id = @filter_id, group_by = @group_by, order_by = @order_by, order_by_direction = @order_by_direction,
    hash = @hash, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND view_id = @view_id AND version = @version
RETURNING *;

-- name: ViewMove :one
UPDATE view SET space_id = @to_space_id, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND view_id = @view_id
RETURNING *;

-- name: ViewSetUpstream :one
UPDATE view SET upstream_view_id = @upstream_view_id
WHERE organization_id = @organization_id AND view_id = @view_id
RETURNING *;
