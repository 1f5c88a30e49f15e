-- name: MutationGet :one
SELECT * FROM mutation WHERE organization_id = @organization_id AND unit_id = @unit_id AND mutation_id = @mutation_id;

-- name: MutationListByUnitNums :many
-- The Mutations numbered nums[i] of Units unit_ids[i] (the heads of a page of Units), in one query.
SELECT m.* FROM mutation m
JOIN (SELECT unnest(sqlc.arg(unit_ids)::uuid[]) AS unit_id, unnest(sqlc.arg(nums)::bigint[]) AS num) want
  ON m.unit_id = want.unit_id AND m.mutation_num = want.num
WHERE m.organization_id = sqlc.arg(organization_id)::uuid;

-- name: MutationInsert :exec
-- A further Mutation of a Revision UnitRecordRevision recorded (one per function invocation or mutating Trigger
-- that changed the data).
INSERT INTO mutation (mutation_id, organization_id, space_id, unit_id, revision_id, revision_num, mutation_num,
                      function_invocation, subgroup, trigger_id, invocation_id, invocation_params)
VALUES (@mutation_id, @organization_id, @space_id, @unit_id, @revision_id, @revision_num, @mutation_num,
        @function_invocation, @subgroup, sqlc.narg(trigger_id)::uuid, sqlc.narg(invocation_id)::uuid, @invocation_params);
