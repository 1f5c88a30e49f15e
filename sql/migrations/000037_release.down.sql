DROP TABLE release;
DROP TABLE release_bundle;
