DROP INDEX unit_target_id_idx;
DROP INDEX mutation_revision_idx;
