-- name: LinkInsert :one
INSERT INTO link (link_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                  permissions, from_unit_id, to_unit_id, to_space_id, auto_update, update_type, upstream_paths,
                  downstream_paths, bindings, downstream_setters, upstream_getters, clearance, guards, protect,
                  squash, merge_enable_subtraction, where_mutation, where_resource, transform_invocation_id, hash)
VALUES (@link_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @permissions, @from_unit_id, @to_unit_id, @to_space_id, @auto_update, @update_type, @upstream_paths,
        @downstream_paths, @bindings, @downstream_setters, @upstream_getters, @clearance, @guards, @protect,
        @squash, @merge_enable_subtraction, @where_mutation, @where_resource, @transform_invocation_id, @hash)
RETURNING *;

-- name: LinkUpdate :one
UPDATE link
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, from_unit_id = @from_unit_id,
    to_unit_id = @to_unit_id, to_space_id = @to_space_id, auto_update = @auto_update,
    update_type = @update_type, upstream_paths = @upstream_paths, downstream_paths = @downstream_paths,
    bindings = @bindings, downstream_setters = @downstream_setters, upstream_getters = @upstream_getters,
    clearance = @clearance, guards = @guards, protect = @protect, squash = @squash,
    merge_enable_subtraction = @merge_enable_subtraction, where_mutation = @where_mutation,
    where_resource = @where_resource, transform_invocation_id = @transform_invocation_id, hash = @hash,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND link_id = @link_id AND version = @version
RETURNING *;

-- name: LinkSetUpstream :one
UPDATE link SET upstream_link_id = @upstream_link_id
WHERE organization_id = @organization_id AND link_id = @link_id
RETURNING *;

-- name: LinkLockOrganization :exec
-- Link writes of one organization serialize on this lock (held to commit): two writes that each keep the
-- graph acyclic could together close a cycle.
SELECT pg_advisory_xact_lock(hashtext('hubd.link'), hashtext(sqlc.arg(organization_id)::text));

-- name: LinkReachable :many
-- The Links reachable from start by following Links From -> To (but exclude_link_id, the Link being
-- rewritten): the edges (from, to) of that part of the graph. UNION drops edges already found, so the walk
-- ends even if the graph had a cycle; the LIMIT bounds it.
WITH RECURSIVE reach(from_unit_id, to_unit_id) AS (
    SELECT l.from_unit_id, l.to_unit_id FROM link l
    WHERE l.organization_id = @organization_id AND l.from_unit_id = @start_unit_id::uuid AND l.link_id <> @exclude_link_id::uuid
    UNION
    SELECT l.from_unit_id, l.to_unit_id FROM reach r
    JOIN link l ON l.organization_id = @organization_id AND l.from_unit_id = r.to_unit_id
    WHERE l.link_id <> @exclude_link_id::uuid
)
SELECT reach.from_unit_id, reach.to_unit_id FROM reach LIMIT 100000;

-- name: LinkReadersOfUnit :many
-- The Links that read Unit to_unit_id (a Unit's delete is refused while there are any).
SELECT * FROM link WHERE organization_id = @organization_id AND to_unit_id = @to_unit_id ORDER BY slug LIMIT 100;

-- name: LinkMoveWithUnit :many
-- A Unit moved to another Space takes its Links with it.
UPDATE link SET space_id = @to_space_id, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND from_unit_id = @from_unit_id AND space_id <> @to_space_id
RETURNING *;

-- name: LinkFollowUnit :many
-- The Links that read a moved Unit follow it to its new Space.
UPDATE link SET to_space_id = @to_space_id, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND to_unit_id = @to_unit_id AND to_space_id <> @to_space_id
RETURNING *;

-- name: LinkListFromUnit :many
-- The Links whose From Unit is from_unit_id (they go with it when it is deleted).
SELECT * FROM link WHERE organization_id = @organization_id AND from_unit_id = @from_unit_id ORDER BY slug;

-- name: LinkSlugsTakenIn :many
-- The Slugs of from_unit_id's Links that other Links of Space to_space_id already have (a move of the Unit
-- there would clash).
SELECT l.slug FROM link l
WHERE l.organization_id = @organization_id AND l.from_unit_id = @from_unit_id
  AND EXISTS (SELECT 1 FROM link d WHERE d.space_id = @to_space_id AND d.slug = l.slug AND d.link_id <> l.link_id)
ORDER BY l.slug;
