-- Approvals are Attestations of Type Approval and Result Approved; the promotion engine and the approve
-- operations read those in force for a set of Revisions (attestation.ApprovalsOf): this partial index
-- serves that read (revocations are found through attestation_revoked_fk_idx).
CREATE INDEX attestation_approval_idx ON attestation USING gin (revision_ids)
    WHERE type = 'Approval' AND result = 'Approved' AND revoked_attestation_id IS NULL;

-- The Tags a ChangeSet makes (its start and end Tags) name it; other Tags have none. A plain ID: the Tag
-- keeps marking its Revisions after its ChangeSet is deleted.
ALTER TABLE tag ADD COLUMN change_set_id uuid;
CREATE INDEX tag_change_set_idx ON tag (organization_id, (COALESCE(change_set_id, '00000000-0000-0000-0000-000000000000'::uuid)), tag_id);

-- A close puts the end Tag on the head of every Unit that recorded Revisions with the ChangeSet.
CREATE INDEX revision_change_set_units_idx ON revision (change_set_id, unit_id) WHERE change_set_id IS NOT NULL;
