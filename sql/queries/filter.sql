-- name: FilterGetByID :one
SELECT * FROM filter WHERE organization_id = @organization_id AND space_id = @space_id AND filter_id = @filter_id;

-- name: FilterGetByIDForUpdate :one
SELECT * FROM filter WHERE organization_id = @organization_id AND space_id = @space_id AND filter_id = @filter_id FOR UPDATE;

-- name: FilterGetBySlug :one
SELECT * FROM filter WHERE organization_id = @organization_id AND space_id = @space_id AND slug = @slug;

-- name: FilterListByIDs :many
SELECT * FROM filter WHERE organization_id = @organization_id AND filter_id = ANY(@filter_ids::uuid[]);

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

-- name: FilterDelete :execrows
DELETE FROM filter WHERE organization_id = @organization_id AND space_id = @space_id AND filter_id = @filter_id;

-- name: FilterMove :one
UPDATE filter SET space_id = @to_space_id, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND filter_id = @filter_id
RETURNING *;

-- name: FilterSetUpstream :one
UPDATE filter SET upstream_filter_id = @upstream_filter_id
WHERE organization_id = @organization_id AND filter_id = @filter_id
RETURNING *;
