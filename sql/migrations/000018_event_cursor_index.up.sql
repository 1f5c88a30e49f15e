-- Every sequencer pass updates the events it numbers, and an update leaves the old, pending version of the
-- row behind until vacuum. A cursor index that lists those dead pending versions too (NULL is a value to
-- a btree) leads the planner to find the pending events through it, scanning every dead entry on each
-- pass. The cursor index lists numbered events only, so the pending events are found through the pending
-- index alone, and the table is vacuumed after far fewer updates than the default fifth of its rows.
DROP INDEX event_log_cursor_idx;
CREATE UNIQUE INDEX event_log_cursor_idx ON event_log (cursor_id) WHERE cursor_id IS NOT NULL;
ALTER TABLE event_log SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
