DROP TABLE oidc_auth_request;
