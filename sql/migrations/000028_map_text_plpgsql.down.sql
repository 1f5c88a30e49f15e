-- Back to migration 000003's SQL function (same result).
CREATE OR REPLACE FUNCTION hubd_map_text(m jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (SELECT coalesce(string_agg(key || ' ' || value, ' '), '') FROM jsonb_each_text(m));
