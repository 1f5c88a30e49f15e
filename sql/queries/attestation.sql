-- name: AttestationInsert :one
INSERT INTO attestation (attestation_id, organization_id, space_id, user_id, type, result, revision_ids, claims, note,
    expires_at, evidence_attestation_ids, revoked_attestation_id, release_id, change_order_id, permissions)
VALUES (@attestation_id, @organization_id, @space_id, @user_id, @type, @result, @revision_ids, @claims, @note,
    @expires_at, @evidence_attestation_ids, @revoked_attestation_id, @release_id, @change_order_id, @permissions)
RETURNING *;

-- name: AttestationRevisionsOutside :many
-- The Revisions among ids that are not of the organization's Space space_id: an Attestation may name only its own Space's.
SELECT id::uuid FROM unnest(@ids::uuid[]) AS id
WHERE NOT EXISTS (SELECT 1 FROM revision r WHERE r.organization_id = @organization_id AND r.space_id = @space_id AND r.revision_id = id);

-- name: AttestationsOutside :many
-- The Attestations among ids that are not of the organization's Space space_id.
SELECT id::uuid FROM unnest(@ids::uuid[]) AS id
WHERE NOT EXISTS (SELECT 1 FROM attestation a WHERE a.organization_id = @organization_id AND a.space_id = @space_id AND a.attestation_id = id);

-- name: AttestationsNamingRevisions :many
-- The Attestations of the organization naming any of revision_ids, a row per Revision named, oldest first;
-- at most 10,000 rows (a page of Revisions' include=Attestations).
SELECT a.attestation_id, r.revision_id::uuid AS revision_id
FROM attestation a CROSS JOIN LATERAL unnest(a.revision_ids) AS r(revision_id)
WHERE a.organization_id = @organization_id AND a.revision_ids && @revision_ids::uuid[]
  AND r.revision_id = ANY(@revision_ids::uuid[])
ORDER BY a.created_at, a.attestation_id
LIMIT 10000;

-- name: AttestationApprovalsOf :many
-- The approvals in force of revision_ids: Attestations of Type Approval and Result Approved naming them that
-- are not revocations, not revoked (named by another Attestation's revoked_attestation_id) and not expired;
-- a row per Revision and approving User (indexes attestation_approval_idx, attestation_revoked_fk_idx).
SELECT DISTINCT r.revision_id::uuid AS revision_id, a.user_id
FROM attestation a CROSS JOIN LATERAL unnest(a.revision_ids) AS r(revision_id)
WHERE a.organization_id = @organization_id AND a.revision_ids && @revision_ids::uuid[]
  AND a.type = 'Approval' AND a.result = 'Approved' AND a.revoked_attestation_id IS NULL
  AND (a.expires_at IS NULL OR a.expires_at > now())
  AND r.revision_id = ANY(@revision_ids::uuid[])
  AND NOT EXISTS (SELECT 1 FROM attestation w WHERE w.revoked_attestation_id = a.attestation_id)
ORDER BY 1, 2;
