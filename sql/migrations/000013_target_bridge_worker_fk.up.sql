-- A Target's BridgeWorkerID names a BridgeWorker of the Target's organization, and a BridgeWorker is not
-- deleted while Targets name it (409 Conflict through store.TranslateDelete, as for a Target used by
-- Units). References stored before the check existed that name no BridgeWorker of the Target's
-- organization (a random ID, a deleted worker, another organization's) are cleared first; the Targets
-- they were on get a new Version, so a client holding the old one re-reads before writing it back.
UPDATE target t
SET bridge_worker_id = NULL, version = t.version + 1, updated_at = now()
WHERE t.bridge_worker_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM bridge_worker w
                  WHERE w.bridge_worker_id = t.bridge_worker_id AND w.organization_id = t.organization_id);

-- The foreign-key check of a BridgeWorker delete looks for Targets naming it; most name none.
CREATE INDEX target_bridge_worker_id_idx ON target (bridge_worker_id) WHERE bridge_worker_id IS NOT NULL;

ALTER TABLE target ADD CONSTRAINT target_bridge_worker_id_fkey
    FOREIGN KEY (bridge_worker_id) REFERENCES bridge_worker ON DELETE RESTRICT;
