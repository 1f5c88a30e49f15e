-- A ChangeSet's ChangeWorkflow: change_workflow is the content of the ChangeWorkflow change_workflow_id names,
-- copied when it is set (at create, or by a write while the ChangeSet is Open); null without one.
ALTER TABLE change_set ADD COLUMN change_workflow jsonb;
