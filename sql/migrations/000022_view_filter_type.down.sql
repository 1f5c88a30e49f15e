ALTER TABLE view DROP CONSTRAINT view_filter_of_fkey;
ALTER TABLE filter DROP CONSTRAINT filter_id_from_key;
