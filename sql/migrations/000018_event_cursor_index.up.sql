-- Every sequencer pass updates the events it numbers, and an update leaves the old, pending version of the
-- row behind until vacuum. The cursor index listed those dead pending versions too (NULL is a value to a
-- btree), and the planner chose it to find the pending events, scanning every dead entry on each pass. It
-- now lists numbered events only, so the pending events are found through the pending index alone, and
-- the table is vacuumed after far fewer updates than the default fifth of its rows.
DROP INDEX event_log_cursor_idx;
CREATE UNIQUE INDEX event_log_cursor_idx ON event_log (cursor_id) WHERE cursor_id IS NOT NULL;
ALTER TABLE event_log SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
