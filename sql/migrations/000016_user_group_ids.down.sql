ALTER TABLE app_user ADD COLUMN group_ids uuid[] NOT NULL DEFAULT '{}';
