-- Events get their cursor after their transaction commits, from a sequencer, so that no writer holds a
-- lock through its commit: such a lock would make all commits of all organizations one at a time.
--
-- A writer inserts its events with no cursor (pending), in its transaction. After the commit, a
-- sequencer pass (internal/event) locks event_sequencer's row, numbers every committed pending event in
-- event_id order from last_cursor + 1, stores the new last_cursor and commits. Passes are serialized by
-- that row lock held through their commit, so a reader that sees cursor N has seen every cursor below N
-- that will ever exist: cursor order is commit order, with no gaps a later commit could fill.
ALTER TABLE event_log ADD COLUMN event_id bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE event_log DROP CONSTRAINT event_log_pkey;
ALTER TABLE event_log ADD PRIMARY KEY (event_id);
ALTER TABLE event_log ALTER COLUMN cursor_id DROP DEFAULT;
ALTER TABLE event_log ALTER COLUMN cursor_id DROP NOT NULL;
CREATE UNIQUE INDEX event_log_cursor_idx ON event_log (cursor_id);
-- What a sequencer pass reads: the pending events, in the order they were written.
CREATE INDEX event_log_pending_idx ON event_log (event_id) WHERE cursor_id IS NULL;

CREATE TABLE event_sequencer (
    only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    last_cursor bigint  NOT NULL
);
INSERT INTO event_sequencer (last_cursor) SELECT COALESCE(max(cursor_id), 0) FROM event_log;
DROP SEQUENCE event_log_cursor_id_seq;
