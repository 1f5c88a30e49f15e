ALTER TABLE event_log RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold);
DROP INDEX event_log_cursor_idx;
CREATE UNIQUE INDEX event_log_cursor_idx ON event_log (cursor_id);
