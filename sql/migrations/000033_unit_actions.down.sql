ALTER TABLE unit DROP COLUMN unit_event_id;
DROP TABLE unit_event;
DROP TABLE queued_operation;
