-- The conflicts of merges from upstream: a Unit's outstanding ones (each source's latest merge replaces
-- that source's) and those the merge that made a Revision found.
ALTER TABLE unit ADD COLUMN conflicts jsonb NOT NULL DEFAULT '[]';
ALTER TABLE revision ADD COLUMN conflicts jsonb NOT NULL DEFAULT '[]';
