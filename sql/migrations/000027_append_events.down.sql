DROP FUNCTION hubd_append_events(jsonb, boolean, int, text[], int);
-- The pass numbers by itself again (migration 000026's function).
CREATE OR REPLACE FUNCTION hubd_sequence_pass(batch int, quiet_families text[], max_orgs int)
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
DROP FUNCTION hubd_number_pending(int, text[], int);
