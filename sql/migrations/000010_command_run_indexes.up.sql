-- Indexes for the CommandRun list's filters and orders (keyset: the order field, then the ID).
CREATE INDEX command_run_space_idx ON command_run (organization_id, space_id, command_run_id);
CREATE INDEX command_run_channel_org_idx ON command_run (organization_id, channel_id, command_run_id);
CREATE INDEX command_run_command_idx ON command_run (organization_id, command, command_run_id);
CREATE INDEX command_run_status_idx ON command_run (organization_id, status, command_run_id);
CREATE INDEX command_run_user_idx ON command_run (organization_id, user_id, command_run_id);
CREATE INDEX command_run_deadline_idx ON command_run (organization_id, deadline, command_run_id);
