ALTER TABLE unit_event DROP COLUMN hidden_reason;
