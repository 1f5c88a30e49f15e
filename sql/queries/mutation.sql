-- name: MutationInsert :one
INSERT INTO mutation (mutation_id, organization_id, space_id, unit_id, revision_id, revision_num, mutation_num,
                      function_invocation, restored_revision_num)
VALUES (@mutation_id, @organization_id, @space_id, @unit_id, @revision_id, @revision_num, @mutation_num,
        @function_invocation, @restored_revision_num)
RETURNING *;

-- name: MutationGet :one
SELECT * FROM mutation WHERE organization_id = @organization_id AND unit_id = @unit_id AND mutation_id = @mutation_id;
