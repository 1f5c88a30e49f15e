-- How long an operation a worker took stays Progressing without a report from it before it is Aborted
-- (ClaimTTLSeconds), and what the worker says it supports (ProvidedInfo).
ALTER TABLE bridge_worker
    ADD COLUMN claim_ttl_seconds integer NOT NULL DEFAULT 600,
    ADD COLUMN provided_info     jsonb   NOT NULL DEFAULT '{}';
