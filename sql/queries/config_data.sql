-- name: ConfigDataPut :exec
-- Stores content once; the same bytes are already there under the same hash.
INSERT INTO config_data (data_hash, data, data_size) VALUES (@data_hash, @data, @data_size)
ON CONFLICT (data_hash) DO NOTHING;

-- name: ConfigDataGet :one
SELECT data FROM config_data WHERE data_hash = @data_hash;

-- name: ConfigDataGetMany :many
SELECT data_hash, data FROM config_data WHERE data_hash = ANY(@data_hashes::text[]);
