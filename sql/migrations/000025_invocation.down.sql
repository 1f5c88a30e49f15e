ALTER TABLE trigger DROP COLUMN invocation_id;
DROP TABLE invocation;
