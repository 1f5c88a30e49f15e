-- name: PromoteUnitsCarryingTag :many
-- The Units among unit_ids one of whose Revisions carries the Tag (a ChangeOrder's end Tag: they took it).
SELECT DISTINCT unit_id FROM revision
WHERE organization_id = @organization_id AND unit_id = ANY(@unit_ids::uuid[]) AND tags ? @tag_id::text;

-- name: PromoteLatestApplies :many
-- The latest Apply of each of the Units (the Healthy gate), by queued_operation_unit_idx.
SELECT DISTINCT ON (unit_id) unit_id, status FROM queued_operation
WHERE organization_id = @organization_id AND unit_id = ANY(@unit_ids::uuid[]) AND action = 'Apply' AND NOT dry_run
ORDER BY unit_id, unit_action_num DESC;

-- name: PromoteUnitsWithChangeSet :many
-- The Units among unit_ids that recorded a Revision in the ChangeSet (a promotion's ChangeSetID).
SELECT DISTINCT unit_id FROM revision
WHERE organization_id = @organization_id AND unit_id = ANY(@unit_ids::uuid[]) AND change_set_id = @change_set_id;

-- name: PromoteSpaces :many
-- The Spaces a promotion selected (already checked visible), by Slug.
SELECT * FROM space WHERE organization_id = @organization_id AND space_id = ANY(@space_ids::uuid[]) ORDER BY slug;

-- name: AttestationsAboutRevisions :many
-- The Attestations in force about any of the Revisions: not expired, not revoked (by revision_ids GIN and
-- attestation_revoked_fk_idx).
SELECT a.attestation_id, a.user_id, a.type, a.result, a.revision_ids, a.created_at FROM attestation a
WHERE a.organization_id = @organization_id AND a.revision_ids && @revision_ids::uuid[]
  AND (a.expires_at IS NULL OR a.expires_at > now())
  AND NOT EXISTS (SELECT 1 FROM attestation r WHERE r.revoked_attestation_id = a.attestation_id)
ORDER BY a.created_at, a.attestation_id;

-- name: ReleasesHoldingRevisions :many
-- The Releases of a Space that bundle any of the Revisions (by release_revision_ids_idx).
SELECT release_id, release_num, published, digest, revision_ids FROM release
WHERE organization_id = @organization_id AND space_id = @space_id AND revision_ids && @revision_ids::uuid[]
ORDER BY release_num;

-- name: PromoteLinksFromUnits :many
-- The Links whose From Unit is one of the Units (those a promotion clones), by link_from_unit_idx.
SELECT * FROM link WHERE organization_id = @organization_id AND from_unit_id = ANY(@unit_ids::uuid[]) ORDER BY from_unit_id, slug;
