-- What a Unit's Links found when they last wrote into it, one entry per DownstreamPath of each Link
-- (LinkFindings; NeededPaths are read from them), and the findings of the Link write that made a Revision.
ALTER TABLE unit ADD COLUMN link_findings jsonb NOT NULL DEFAULT '[]';
ALTER TABLE revision ADD COLUMN link_findings jsonb NOT NULL DEFAULT '[]';
