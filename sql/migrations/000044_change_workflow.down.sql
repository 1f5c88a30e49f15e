DROP TABLE change_workflow;
