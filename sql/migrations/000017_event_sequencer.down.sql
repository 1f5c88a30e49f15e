-- Pending events are numbered as a sequencer pass would, then cursors come from a sequence again.
UPDATE event_log e SET cursor_id = s.last_cursor + p.n
FROM event_sequencer s, (SELECT event_id, row_number() OVER (ORDER BY event_id) AS n FROM event_log WHERE cursor_id IS NULL) p
WHERE e.event_id = p.event_id;
CREATE SEQUENCE event_log_cursor_id_seq OWNED BY event_log.cursor_id;
SELECT setval('event_log_cursor_id_seq', GREATEST((SELECT max(cursor_id) FROM event_log), (SELECT last_cursor FROM event_sequencer), 1));
DROP TABLE event_sequencer;
DROP INDEX event_log_pending_idx;
DROP INDEX event_log_cursor_idx;
ALTER TABLE event_log DROP CONSTRAINT event_log_pkey;
ALTER TABLE event_log ALTER COLUMN cursor_id SET NOT NULL;
ALTER TABLE event_log ALTER COLUMN cursor_id SET DEFAULT nextval('event_log_cursor_id_seq');
ALTER TABLE event_log ADD PRIMARY KEY (cursor_id);
ALTER TABLE event_log DROP COLUMN event_id;
