DROP INDEX command_run_space_idx;
DROP INDEX command_run_channel_org_idx;
DROP INDEX command_run_command_idx;
DROP INDEX command_run_status_idx;
DROP INDEX command_run_user_idx;
DROP INDEX command_run_deadline_idx;
