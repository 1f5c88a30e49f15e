-- name: UnitGetByID :one
SELECT * FROM unit WHERE organization_id = @organization_id AND space_id = @space_id AND unit_id = @unit_id;

-- name: UnitGetByIDForUpdate :one
-- Serializes writers of one Unit: Revision numbers stay dense and unique, no update is lost.
SELECT * FROM unit WHERE organization_id = @organization_id AND space_id = @space_id AND unit_id = @unit_id FOR UPDATE;

-- name: UnitGetBySlug :one
SELECT * FROM unit WHERE organization_id = @organization_id AND space_id = @space_id AND slug = @slug;

-- name: UnitInsert :one
INSERT INTO unit (unit_id, organization_id, space_id, slug, display_name, labels, annotations, delete_gates,
                  destroy_gates, permissions, toolchain_type, provider_type, target_id, change_set_id,
                  last_change_description, data_hash, data_size, head_doc,
                  upstream_unit_id, upstream_space_id, upstream_revision_num)
VALUES (@unit_id, @organization_id, @space_id, @slug, @display_name, @labels, @annotations, @delete_gates,
        @destroy_gates, @permissions, @toolchain_type, @provider_type, @target_id, @change_set_id,
        @last_change_description, @data_hash, @data_size, @head_doc,
        @upstream_unit_id, @upstream_space_id, @upstream_revision_num)
RETURNING *;

-- name: UnitUpdate :one
UPDATE unit
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, destroy_gates = @destroy_gates, permissions = @permissions,
    provider_type = @provider_type, target_id = @target_id, change_set_id = @change_set_id,
    last_change_description = @last_change_description,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND unit_id = @unit_id AND version = @version
RETURNING *;

-- name: UnitSetHead :one
-- Makes a new Revision the head. A write that already bumped Version in its transaction (a PATCH
-- with restore) does not bump it again: one write, one Version.
UPDATE unit
SET data_hash = @data_hash, data_size = @data_size, head_doc = @head_doc,
    head_revision_id = @head_revision_id, head_revision_num = @head_revision_num,
    head_mutation_num = @head_mutation_num, last_change_description = @last_change_description,
    version = version + CASE WHEN @bump_version::boolean THEN 1 ELSE 0 END, updated_at = now()
WHERE unit_id = @unit_id
RETURNING *;

-- name: UnitDelete :execrows
DELETE FROM unit WHERE organization_id = @organization_id AND space_id = @space_id AND unit_id = @unit_id;

-- name: UnitListByIDs :many
SELECT * FROM unit WHERE organization_id = @organization_id AND unit_id = ANY(@unit_ids::uuid[]);

-- name: UnitMove :one
UPDATE unit SET space_id = @to_space_id, target_id = NULL, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND unit_id = @unit_id
RETURNING *;

-- name: RevisionMoveUnit :exec
UPDATE revision SET space_id = @to_space_id WHERE unit_id = @unit_id;

-- name: MutationMoveUnit :exec
UPDATE mutation SET space_id = @to_space_id WHERE unit_id = @unit_id;
