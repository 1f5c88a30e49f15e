DROP TABLE mutation;
DROP TABLE revision;
DROP TABLE unit;
DROP TABLE target;
DROP TABLE config_data;
