-- A sequencer pass in one statement, so in one round trip: lock, number and signal, committed as the
-- statement ends.
-- The lock serializes passes across replicas until the pass's transaction ends; the numbering statement
-- runs after it with a snapshot of its own (a VOLATILE function takes one per statement), so it never
-- renumbers what the previous pass numbered. (An advisory lock, not a row lock: a pass that finds
-- nothing writes nothing.)
--
-- It numbers up to batch committed pending events, in the order they were written, after the last
-- cursor assigned; records the new last cursor; and signals the numbered events on commit. The payload
-- is "<last cursor> <organizations> <organizations where access may have changed>", each list
-- comma-separated and the last "-" when empty; an organization's access may have changed when any of
-- its events is of a family not in quiet_families. When more than max_orgs organizations are concerned
-- the payload is the cursor alone, which wakes everyone. Returns how many it numbered and the payload.
CREATE FUNCTION hubd_sequence_pass(batch int, quiet_families text[], max_orgs int)
RETURNS TABLE (numbered int, payload text) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('hubd.event_sequencer'));
    RETURN QUERY
    WITH pending AS (
        SELECT event_id, row_number() OVER (ORDER BY event_id) AS n
        FROM event_log WHERE cursor_id IS NULL
        ORDER BY event_id
        LIMIT batch
    ), assigned AS (
        UPDATE event_log e SET cursor_id = s.last_cursor + p.n
        FROM pending p, event_sequencer s
        WHERE e.event_id = p.event_id AND e.cursor_id IS NULL
        RETURNING e.cursor_id, e.organization_id,
                  split_part(e.event_type, '.', 1) <> ALL (COALESCE(quiet_families, '{}')) AS access
    ), summary AS (
        SELECT count(*)::int AS numbered, max(a.cursor_id) AS last_cursor, count(DISTINCT a.organization_id) AS orgs,
               string_agg(DISTINCT a.organization_id::text, ',') AS org_list,
               string_agg(DISTINCT a.organization_id::text, ',') FILTER (WHERE a.access) AS access_org_list
        FROM assigned a
    ), advanced AS (
        UPDATE event_sequencer SET last_cursor = summary.last_cursor FROM summary WHERE summary.numbered > 0
    ), signal AS (
        SELECT summary.numbered,
               CASE WHEN summary.numbered = 0 THEN ''
                    WHEN summary.orgs > max_orgs THEN summary.last_cursor::text
                    ELSE summary.last_cursor::text || ' ' || summary.org_list || ' ' || COALESCE(summary.access_org_list, '-')
               END AS payload
        FROM summary
    )
    SELECT signal.numbered, signal.payload::text
    FROM signal
    LEFT JOIN LATERAL (SELECT pg_notify('hubd_events', signal.payload) WHERE signal.numbered > 0) notified ON true;
END $$;
