DROP INDEX space_search_idx;
ALTER TABLE space DROP COLUMN search_text;
ALTER TABLE space ADD COLUMN search_text text GENERATED ALWAYS AS (
    slug || ' ' || display_name || ' ' || hidden_reason || ' ' || labels::text || ' ' || annotations::text
) STORED;
CREATE INDEX space_search_idx ON space USING gin (search_text gin_trgm_ops);
DROP FUNCTION hubd_map_text(jsonb);
