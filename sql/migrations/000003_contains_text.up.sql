-- contains matches text, not JSON punctuation: the maps contribute their keys and values only.
CREATE FUNCTION hubd_map_text(m jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (SELECT coalesce(string_agg(key || ' ' || value, ' '), '') FROM jsonb_each_text(m));

DROP INDEX space_search_idx;
ALTER TABLE space DROP COLUMN search_text;
ALTER TABLE space ADD COLUMN search_text text GENERATED ALWAYS AS (
    slug || ' ' || display_name || ' ' || hidden_reason || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)
) STORED;
CREATE INDEX space_search_idx ON space USING gin (search_text gin_trgm_ops);
