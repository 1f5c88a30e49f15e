-- name: LinksReadingUnit :many
-- The Links that read a Unit whose data just changed (its head is now @head_revision_num), in one round trip:
-- those with AutoUpdate are returned to propagate, ordered by From Unit so that concurrent propagations lock
-- Units in one order; the others are marked Stale (behind their upstream until someone upgrades them).
-- Links of UpdateType None move nothing and are never behind. (PostgreSQL runs a data-modifying WITH whether or
-- not the query reads it.)
WITH staled AS (
    UPDATE link SET stale = true
    WHERE link.organization_id = @organization_id AND link.to_unit_id = @unit_id AND NOT link.auto_update
      AND link.update_type <> 'None' AND NOT link.stale AND link.upstream_last_merged_revision_num < @head_revision_num
    RETURNING link.link_id
)
SELECT l.* FROM link l
WHERE l.organization_id = @organization_id AND l.to_unit_id = @unit_id AND l.auto_update AND l.update_type <> 'None'
ORDER BY l.from_unit_id, l.link_id;

-- name: LinksFromUnit :many
-- The Links that write into a Unit (its upgrade applies them all), ordered as LinksReadingUnit orders them.
SELECT * FROM link
WHERE organization_id = @organization_id AND from_unit_id = @unit_id AND update_type <> 'None'
ORDER BY to_unit_id, link_id;

-- name: UnitReadForLink :one
-- The upstream Unit a Link reads, by ID within the organization (no lock: the Link reads its committed head).
SELECT * FROM unit WHERE organization_id = @organization_id AND unit_id = @unit_id;

-- name: LinkApplied :one
-- Records, in one statement, where a Link stands after it was applied: the upstream Revision it read and the
-- downstream Revision it left (the downstream head when it changed nothing), and, when set_findings, its
-- findings on the Unit it writes into (replacing its earlier ones) and on the Revision its write made (when
-- it made one). Neither is an edit of the Link or the Unit: no new Version.
WITH unit_done AS (
    UPDATE unit
    SET link_findings = COALESCE((SELECT jsonb_agg(f ORDER BY ord) FROM jsonb_array_elements(unit.link_findings) WITH ORDINALITY AS e(f, ord)
                                  WHERE f ->> 'LinkID' <> @link_id::text), '[]'::jsonb) || @findings::jsonb
    WHERE @set_findings::boolean AND unit.organization_id = @organization_id AND unit.unit_id = @unit_id
    RETURNING unit.unit_id
), revision_done AS (
    UPDATE revision SET link_findings = @findings::jsonb
    WHERE @set_findings::boolean AND revision.organization_id = @organization_id AND revision.revision_id = sqlc.narg(revision_id)::uuid
    RETURNING revision.revision_id
)
UPDATE link
SET upstream_last_merged_revision_num = @upstream_revision_num, downstream_last_merged_revision_num = @downstream_revision_num,
    stale = false
WHERE link.organization_id = @organization_id AND link.link_id = @link_id::uuid
RETURNING *;

-- name: UnitForgetLink :exec
-- A deleted Link's findings and outstanding conflicts leave the Unit it wrote into.
UPDATE unit
SET link_findings = COALESCE((SELECT jsonb_agg(f ORDER BY ord) FROM jsonb_array_elements(unit.link_findings) WITH ORDINALITY AS e(f, ord)
                              WHERE f ->> 'LinkID' <> @link_id::text), '[]'::jsonb),
    conflicts = COALESCE((SELECT jsonb_agg(c ORDER BY ord) FROM jsonb_array_elements(unit.conflicts) WITH ORDINALITY AS e(c, ord)
                          WHERE c ->> 'LinkID' IS DISTINCT FROM @link_id::text), '[]'::jsonb)
WHERE organization_id = @organization_id AND unit_id = @unit_id;

-- name: LinkForApply :one
-- A Link as its write left it, in that write's transaction.
SELECT * FROM link WHERE organization_id = @organization_id AND link_id = @link_id;

-- name: LinksOfUnits :many
-- The Links that write into or read each of unit_ids (a Unit's FromLinkID and ProvidedPaths), in one query
-- for a page of Units.
SELECT link_id, from_unit_id, to_unit_id, upstream_paths FROM link
WHERE organization_id = @organization_id AND (from_unit_id = ANY(@unit_ids::uuid[]) OR to_unit_id = ANY(@unit_ids::uuid[]))
ORDER BY link_id;
