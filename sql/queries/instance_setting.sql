-- name: InstanceSettingPut :one
-- Records a setting and returns the value it replaces (empty when there was none).
WITH previous AS (SELECT value FROM instance_setting WHERE name = sqlc.arg(name)::text)
INSERT INTO instance_setting (name, value) VALUES (sqlc.arg(name)::text, sqlc.arg(value)::text)
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
RETURNING COALESCE((SELECT value FROM previous), '')::text AS previous;

-- name: InstanceSettingGet :one
SELECT value FROM instance_setting WHERE name = sqlc.arg(name)::text;
