-- A writer numbers its own events when it can, so that an event is delivered at its commit, without
-- waiting for a sequencer pass after it (one round trip, one WAL flush and a hand-over fewer).
--
-- hubd_append_events inserts a transaction's events (a JSON array, one statement however many) and, when
-- asked to number them and the sequencer's lock is free at once, takes it and numbers every pending
-- event it sees: those committed by others and its own. The lock is then held through the writer's
-- commit, like a pass holds it through its own, so cursor order stays commit order: whoever sees cursor
-- N sees every cursor below it. When the lock is taken (a pass or another writer has it, or waits for
-- it), the events stay pending for the sequencer: writers never queue on the lock. (hubd asks
-- only when its replica's sequencer is idle: under load, writers holding the lock through their commits
-- would hold up the passes that number many commits' events at once.)
--
-- The numbering is hubd_number_pending's, used by both.

CREATE FUNCTION hubd_number_pending(batch int, quiet_families text[], max_orgs int)
RETURNS TABLE (numbered int, payload text) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
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

-- A sequencer pass: waits for the lock, then numbers.
CREATE OR REPLACE FUNCTION hubd_sequence_pass(batch int, quiet_families text[], max_orgs int)
RETURNS TABLE (numbered int, payload text) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('hubd.event_sequencer'));
    RETURN QUERY SELECT * FROM hubd_number_pending(batch, quiet_families, max_orgs);
END $$;

-- events: [{"organization_id", "event_type", "space_id", "target_id", "subject_entity_type",
-- "subject_entity_id", "payload"}], inserted in array order. Returns numbered -1 when not asked to number
-- or the lock was taken (the events are left pending), else what hubd_number_pending returns.
CREATE FUNCTION hubd_append_events(events jsonb, number boolean, batch int, quiet_families text[], max_orgs int)
RETURNS TABLE (numbered int, payload text) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    INSERT INTO event_log (organization_id, event_type, space_id, target_id, subject_entity_type, subject_entity_id, payload)
    SELECT (a.e->>'organization_id')::uuid, a.e->>'event_type', (a.e->>'space_id')::uuid, (a.e->>'target_id')::uuid,
           a.e->>'subject_entity_type', (a.e->>'subject_entity_id')::uuid, a.e->'payload'
    FROM jsonb_array_elements(events) WITH ORDINALITY AS a(e, ord)
    ORDER BY a.ord;
    IF NOT number OR NOT pg_try_advisory_xact_lock(hashtext('hubd.event_sequencer')) THEN
        RETURN QUERY SELECT -1, ''::text;
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM hubd_number_pending(batch, quiet_families, max_orgs);
END $$;
