-- name: RevisionGet :one
SELECT * FROM revision WHERE organization_id = @organization_id AND unit_id = @unit_id AND revision_id = @revision_id;

-- name: RevisionGetByNum :one
SELECT * FROM revision WHERE organization_id = @organization_id AND unit_id = @unit_id AND revision_num = @revision_num;

-- name: RevisionListByIDs :many
SELECT * FROM revision WHERE organization_id = @organization_id AND revision_id = ANY(@revision_ids::uuid[]);

-- name: RevisionListByUnitNums :many
-- The Revisions numbered nums[i] of Units unit_ids[i] (those a page of Units last released), in one query.
SELECT r.* FROM revision r
JOIN (SELECT unnest(sqlc.arg(unit_ids)::uuid[]) AS unit_id, unnest(sqlc.arg(nums)::bigint[]) AS num) want
  ON r.unit_id = want.unit_id AND r.revision_num = want.num
WHERE r.organization_id = sqlc.arg(organization_id)::uuid;

-- name: RevisionRemoveTagFromUnit :execrows
UPDATE revision SET tags = tags - @tag_id::text
WHERE organization_id = @organization_id AND unit_id = @unit_id AND tags ? @tag_id::text;

-- name: RevisionSourcesByIDs :many
SELECT revision_id, mutation_sources FROM revision WHERE organization_id = @organization_id AND revision_id = ANY(@revision_ids::uuid[]);

-- name: RevisionNewestWithTag :one
-- The newest Revision of the Unit carrying the Tag (a bulk tag's Tag:<tag> selector).
SELECT * FROM revision WHERE organization_id = @organization_id AND unit_id = @unit_id AND tags ? @tag_id::text
ORDER BY revision_num DESC LIMIT 1;
