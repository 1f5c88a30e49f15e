ALTER TABLE change_set DROP COLUMN change_workflow;
