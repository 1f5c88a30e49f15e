-- name: ReleaseInsert :one
INSERT INTO "release" (release_id, organization_id, space_id, user_id, release_num, target_id, tag_id, change_order_id, bundle_base_name,
    description, digest, manifest_digest, manifest, data_size, unit_count, revision_ids, skipped_units, live_status,
    labels, annotations, delete_gates, permissions)
VALUES (sqlc.arg(release_id), @organization_id, @space_id, @user_id, sqlc.arg(release_num), @target_id, @tag_id, sqlc.narg(change_order_id), @bundle_base_name, @description, @digest, @manifest_digest, @manifest, @data_size, @unit_count,
    @revision_ids, @skipped_units, @live_status, @labels, @annotations, @delete_gates, @permissions)
RETURNING *;

-- name: ReleaseUpdate :one
-- Only what may change after publishing: the bundle and what it was made from never do.
UPDATE release
SET labels = @labels, annotations = @annotations, delete_gates = @delete_gates, live_status = @live_status, permissions = @permissions,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND release_id = sqlc.arg(release_id) AND version = @version
RETURNING *;

-- name: ReleaseWithdraw :one
UPDATE release SET published = false, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND release_id = sqlc.arg(release_id)
RETURNING *;

-- name: ReleaseLockSpace :exec
-- Publishes in one Space take their ReleaseNums one after another.
SELECT pg_advisory_xact_lock(hashtextextended(sqlc.arg(space_id)::uuid::text, 37));

-- name: ReleaseBundleInsert :exec
INSERT INTO release_bundle (digest, data, data_size) VALUES (@digest, @data, @data_size)
ON CONFLICT (digest) DO NOTHING;

-- name: ReleaseBundleData :one
SELECT data FROM release_bundle WHERE digest = @digest;

-- name: ReleaseUnits :many
-- The Units of the Space assigned to the Target, by Slug, each with the Revision a publish bundles: the
-- head, or (tag_id not empty) the latest Revision carrying the Tag; revision_num 0 when there is none.
SELECT u.unit_id, u.slug, u.toolchain_type, u.apply_gates, u.permissions,
    COALESCE(r.revision_id, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS revision_id,
    COALESCE(r.revision_num, 0)::bigint AS revision_num,
    COALESCE(cd.data, ''::bytea)::bytea AS data
FROM unit u
LEFT JOIN LATERAL (
    SELECT rv.revision_id, rv.revision_num, rv.data_hash FROM revision rv
    WHERE rv.organization_id = u.organization_id AND rv.unit_id = u.unit_id
      AND CASE WHEN @tag_id::text = '' THEN rv.revision_num = u.head_revision_num ELSE rv.tags ? @tag_id::text END
    ORDER BY rv.revision_num DESC LIMIT 1
) r ON true
LEFT JOIN config_data cd ON cd.data_hash = r.data_hash
WHERE u.organization_id = @organization_id AND u.space_id = @space_id AND u.target_id = @target_id
ORDER BY u.slug
FOR NO KEY UPDATE OF u;

-- name: ReleaseMarkUnits :exec
-- A published Unit records the Revision it was released at; one released again at the same Revision is
-- not written.
UPDATE unit SET last_released_revision_num = want.num
FROM (SELECT unnest(@unit_ids::uuid[]) AS unit_id, unnest(@revision_nums::bigint[]) AS num) want
WHERE unit.organization_id = @organization_id AND unit.unit_id = want.unit_id
  AND unit.last_released_revision_num IS DISTINCT FROM want.num;

-- name: ReleaseNextNum :one
SELECT (COALESCE(MAX(release_num), 0) + 1)::bigint FROM release WHERE space_id = @space_id;

-- name: ReleaseInSpace :one
SELECT EXISTS (SELECT 1 FROM release WHERE organization_id = @organization_id AND space_id = @space_id AND release_id = sqlc.arg(release_id));

-- name: ReleasesNamingRevisions :many
-- The Releases of the organization that bundled any of revision_ids, a row per Revision, oldest first; at
-- most 10,000 rows (a page of Revisions' include=Releases).
SELECT r.release_id, x.revision_id::uuid AS revision_id
FROM release r CROSS JOIN LATERAL unnest(r.revision_ids) AS x(revision_id)
WHERE r.organization_id = @organization_id AND r.revision_ids && @revision_ids::uuid[]
  AND x.revision_id = ANY(@revision_ids::uuid[])
ORDER BY r.created_at, r.release_id
LIMIT 10000;

-- name: ReleaseRepositorySpace :one
-- The Space an OCI repository name names: by its Slug in lowercase (OCI names are lowercase), an exact
-- match first when two Slugs differ only in case.
SELECT space_id FROM space
WHERE organization_id = @organization_id AND lower(slug) = lower(@slug::text)
ORDER BY slug = @slug::text DESC, space_id
LIMIT 1;

-- name: ReleaseRepositoryExists :one
SELECT EXISTS (SELECT 1 FROM release WHERE space_id = @space_id AND bundle_base_name = @bundle_base_name);

-- name: ReleasesByNumDesc :many
-- A repository's Releases, newest first, from before_num down: where the latest published one the
-- caller may view is looked for, a page at a time.
SELECT * FROM release
WHERE space_id = @space_id AND bundle_base_name = @bundle_base_name AND release_num < @before_num
  AND (published OR NOT @published_only::boolean)
ORDER BY release_num DESC
LIMIT @page_size;

-- name: ReleasesByDigest :many
-- A repository's Releases whose manifest or bundle has the digest, newest first.
SELECT * FROM release
WHERE organization_id = @organization_id AND space_id = @space_id AND bundle_base_name = @bundle_base_name
  AND (manifest_digest = @digest OR digest = @digest)
ORDER BY release_num DESC
LIMIT 100;

-- name: ReleaseTags :many
-- What a repository's tag list is made of: its published Releases, newest first, with what decides who
-- may view each.
SELECT release_id, release_num, permissions FROM release
WHERE space_id = @space_id AND bundle_base_name = @bundle_base_name AND published
ORDER BY release_num DESC;
