-- Guards and protection of a Unit's paths (a list of {ResourceType, ResourceName, Path, Guards, Protected}):
-- the current state of the Unit, kept across its data writes; a path's annotation applies to what is below it.
ALTER TABLE unit ADD COLUMN path_annotations jsonb NOT NULL DEFAULT '[]';
