ALTER TABLE unit DROP COLUMN path_annotations;
