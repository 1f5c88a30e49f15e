ALTER TABLE bridge_worker DROP CONSTRAINT bridge_worker_secret_max_org_role_check;
ALTER TABLE bridge_worker DROP COLUMN secret_max_org_role;
DROP INDEX user_key_user_idx;
CREATE INDEX user_key_user_idx ON user_key (user_id, created_at);
DROP INDEX user_key_kid_idx;
ALTER TABLE user_key DROP CONSTRAINT user_key_organization_kid_key;
-- One row per kid again (the oldest registration stays).
DELETE FROM user_key k WHERE EXISTS (
    SELECT 1 FROM user_key o WHERE o.kid = k.kid AND (o.created_at, o.user_key_id) < (k.created_at, k.user_key_id));
ALTER TABLE user_key ADD CONSTRAINT user_key_kid_key UNIQUE (kid);
ALTER TABLE user_key DROP CONSTRAINT user_key_member_fkey;
ALTER TABLE user_key DROP CONSTRAINT user_key_max_org_role_check;
ALTER TABLE user_key DROP COLUMN max_org_role;
ALTER TABLE user_key DROP COLUMN organization_id;
