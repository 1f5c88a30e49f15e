DROP INDEX bridge_worker_permissions_idx;
DROP INDEX service_account_permissions_idx;
DROP INDEX channel_permissions_idx;
DROP INDEX target_permissions_idx;
DROP INDEX unit_permissions_idx;
DROP INDEX space_permissions_idx;
DROP TRIGGER organization_member_leave_groups ON organization_member;
DROP FUNCTION hubd_leave_groups();
DROP TABLE user_group;
-- Guests cannot be expressed any more: their memberships and keys go.
DELETE FROM user_key WHERE max_org_role = 'guest';
UPDATE bridge_worker SET secret_max_org_role = 'viewer' WHERE secret_max_org_role = 'guest';
DELETE FROM organization_member WHERE org_role = 'guest';
ALTER TABLE bridge_worker DROP CONSTRAINT bridge_worker_secret_max_org_role_check;
ALTER TABLE bridge_worker ADD CONSTRAINT bridge_worker_secret_max_org_role_check
    CHECK (secret_max_org_role IN ('admin', 'manager', 'member', 'viewer'));
ALTER TABLE user_key DROP CONSTRAINT user_key_max_org_role_check;
ALTER TABLE user_key ADD CONSTRAINT user_key_max_org_role_check
    CHECK (max_org_role IN ('admin', 'manager', 'member', 'viewer'));
ALTER TABLE organization_member DROP CONSTRAINT organization_member_org_role_check;
ALTER TABLE organization_member ADD CONSTRAINT organization_member_org_role_check
    CHECK (org_role IN ('admin', 'manager', 'member', 'viewer'));
