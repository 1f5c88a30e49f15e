DROP INDEX space_component_fk_idx;
ALTER TABLE space DROP CONSTRAINT space_component_fk;
DROP TABLE component;
