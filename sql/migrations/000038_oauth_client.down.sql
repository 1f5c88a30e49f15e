ALTER TABLE organization DROP COLUMN sign_in_provision_role;
DROP TABLE user_password;
DROP TABLE oauth_client;
