DROP TABLE signing_key;
DROP TABLE space;
DROP TABLE organization_member;
DROP TABLE app_user;
DROP TABLE organization;
