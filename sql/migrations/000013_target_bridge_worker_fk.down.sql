-- The references cleared by the up migration named nothing and are not restored.
ALTER TABLE target DROP CONSTRAINT target_bridge_worker_id_fkey;
DROP INDEX target_bridge_worker_id_idx;
