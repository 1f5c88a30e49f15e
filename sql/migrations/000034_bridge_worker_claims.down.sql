ALTER TABLE bridge_worker DROP COLUMN provided_info, DROP COLUMN claim_ttl_seconds;
