DROP INDEX revision_change_set_units_idx;
DROP INDEX tag_change_set_idx;
ALTER TABLE tag DROP COLUMN change_set_id;
DROP INDEX attestation_approval_idx;
