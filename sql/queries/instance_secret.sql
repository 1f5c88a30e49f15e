-- name: InstanceSecretEnsure :exec
-- Creates the named secret unless it exists; replicas starting at once keep the first one.
INSERT INTO instance_secret (name, secret) VALUES (@name, @secret) ON CONFLICT (name) DO NOTHING;

-- name: InstanceSecretGet :one
SELECT secret FROM instance_secret WHERE name = @name;
