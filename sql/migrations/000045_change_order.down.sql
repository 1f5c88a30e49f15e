DROP INDEX attestation_change_order_fk_idx;
ALTER TABLE attestation DROP CONSTRAINT attestation_change_order_fk;
DROP INDEX tag_change_order_idx;
ALTER TABLE tag DROP COLUMN change_order_id;
DROP TABLE change_order;
