-- A View's Filter selects what the View is of: the pair (filter_id, of_type) references the Filter's
-- (filter_id, from_type), so a Filter's From cannot change while a View of another type uses it.
ALTER TABLE filter ADD CONSTRAINT filter_id_from_key UNIQUE (filter_id, from_type);
ALTER TABLE view ADD CONSTRAINT view_filter_of_fkey FOREIGN KEY (filter_id, of_type)
    REFERENCES filter (filter_id, from_type) ON UPDATE RESTRICT ON DELETE RESTRICT;
