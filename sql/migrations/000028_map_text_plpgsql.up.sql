-- hubd_map_text computes the text of labels and annotations in the search_text column of most tables,
-- so it runs twice in every insert and update of them. As a SQL function it cannot be inlined (its body
-- is a subquery), and PostgreSQL plans the body of such a function again in every statement that calls
-- it, a cost of the same order as the insert itself. A PL/pgSQL function keeps its plan for the
-- session, and an empty map (the common case) needs no query at all. The result is the same text, so
-- the stored columns stay valid.
CREATE OR REPLACE FUNCTION hubd_map_text(m jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    out text;
BEGIN
    IF m = '{}'::jsonb THEN
        RETURN '';
    END IF;
    SELECT coalesce(string_agg(key || ' ' || value, ' '), '') INTO out FROM jsonb_each_text(m);
    RETURN out;
END $$;
