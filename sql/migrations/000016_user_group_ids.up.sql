-- A User's Groups are per organization: User.GroupIDs is read from user_group (its members), so the
-- organization-less column of app_user goes.
ALTER TABLE app_user DROP COLUMN group_ids;
