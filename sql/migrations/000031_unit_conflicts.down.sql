ALTER TABLE revision DROP COLUMN conflicts;
ALTER TABLE unit DROP COLUMN conflicts;
