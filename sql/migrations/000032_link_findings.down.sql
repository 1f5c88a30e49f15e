ALTER TABLE revision DROP COLUMN link_findings;
ALTER TABLE unit DROP COLUMN link_findings;
