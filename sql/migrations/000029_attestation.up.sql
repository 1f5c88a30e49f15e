-- Attestations: immutable claims by a principal about Revisions of one Space. Never updated; deleted only
-- with their Space (a claim about a Space's Revisions means nothing without it). user_id is who recorded
-- it, kept as a plain ID so that the record outlives a removed bot User; revision_ids and the Attestations
-- named are checked when written and kept as given.
CREATE TABLE attestation (
    attestation_id           uuid PRIMARY KEY,
    organization_id          uuid        NOT NULL REFERENCES organization,
    space_id                 uuid        NOT NULL REFERENCES space ON DELETE CASCADE,
    user_id                  uuid        NOT NULL,
    type                     text        NOT NULL,
    result                   text        NOT NULL DEFAULT '',
    revision_ids             uuid[]      NOT NULL,
    claims                   jsonb       NOT NULL DEFAULT '{}',
    note                     text        NOT NULL DEFAULT '',
    expires_at               timestamptz,
    evidence_attestation_ids uuid[]      NOT NULL DEFAULT '{}',
    revoked_attestation_id   uuid REFERENCES attestation ON DELETE CASCADE,
    release_id               uuid,
    change_order_id          uuid,
    permissions              jsonb       NOT NULL DEFAULT '{}',
    hidden_reason            text        NOT NULL DEFAULT '',
    -- The kit's common columns; an Attestation keeps its first Version and times.
    version                  bigint      NOT NULL DEFAULT 1,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    search_text              text GENERATED ALWAYS AS (type || ' ' || result || ' ' || note) STORED
);
-- Every order field of the list (and the filters on them) has its index; list attributes and maps GIN.
CREATE INDEX attestation_organization_idx ON attestation (organization_id, attestation_id);
CREATE INDEX attestation_space_idx ON attestation (space_id, attestation_id);
CREATE INDEX attestation_type_idx ON attestation (organization_id, type, attestation_id);
CREATE INDEX attestation_result_idx ON attestation (organization_id, result, attestation_id);
CREATE INDEX attestation_user_idx ON attestation (organization_id, user_id, attestation_id);
CREATE INDEX attestation_expires_at_idx ON attestation (organization_id, expires_at, attestation_id);
CREATE INDEX attestation_hidden_reason_idx ON attestation (organization_id, hidden_reason, attestation_id);
CREATE INDEX attestation_created_at_idx ON attestation (organization_id, created_at, attestation_id);
CREATE INDEX attestation_revoked_idx ON attestation (organization_id, (COALESCE(revoked_attestation_id, '00000000-0000-0000-0000-000000000000'::uuid)), attestation_id);
CREATE INDEX attestation_revoked_fk_idx ON attestation (revoked_attestation_id) WHERE revoked_attestation_id IS NOT NULL;
CREATE INDEX attestation_revision_ids_idx ON attestation USING gin (revision_ids);
CREATE INDEX attestation_evidence_idx ON attestation USING gin (evidence_attestation_ids);
CREATE INDEX attestation_permissions_idx ON attestation USING gin (permissions jsonb_path_ops);
CREATE INDEX attestation_search_idx ON attestation USING gin (search_text gin_trgm_ops);
