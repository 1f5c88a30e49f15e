-- name: FilterInsert :one
INSERT INTO filter (filter_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                    permissions, from_type, where_expr, where_data, resource_type, from_space_id, include_hidden, hash)
VALUES (@filter_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @permissions, @from_type, @where_expr, @where_data, @resource_type, @from_space_id, @include_hidden, @hash)
RETURNING *;

-- name: FilterUpdate :one
UPDATE filter
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, from_type = @from_type, where_expr = @where_expr,
    where_data = @where_data, resource_type = @resource_type, from_space_id = @from_space_id,
    include_hidden = @include_hidden, hash = @hash, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND filter_id = @filter_id AND version = @version
RETURNING *;

-- name: FilterMove :one
UPDATE filter SET space_id = @to_space_id, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND filter_id = @filter_id
RETURNING *;

-- name: FilterSetUpstream :one
UPDATE filter SET upstream_filter_id = @upstream_filter_id
WHERE organization_id = @organization_id AND filter_id = @filter_id
RETURNING *;
