-- Foreign keys that had no index on their referencing column.
-- Deleting a Revision (with its Unit) cascades to its Mutations by revision_id.
CREATE INDEX mutation_revision_idx ON mutation (revision_id);
-- TargetInUse, and the FK check of a Target delete, look for Units naming the Target; most name none.
CREATE INDEX unit_target_id_idx ON unit (target_id) WHERE target_id IS NOT NULL;
