DROP INDEX revision_change_set_idx;
DROP TABLE change_set;
