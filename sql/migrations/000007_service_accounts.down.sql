DROP TABLE used_assertion;
DROP TABLE user_key;
DROP TABLE service_account;
