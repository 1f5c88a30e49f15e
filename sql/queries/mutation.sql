-- name: MutationGet :one
SELECT * FROM mutation WHERE organization_id = @organization_id AND unit_id = @unit_id AND mutation_id = @mutation_id;
