-- name: CommandRunInsert :one
INSERT INTO command_run (command_run_id, organization_id, space_id, channel_id, command, options, parameters, status, user_id, deadline)
VALUES (@command_run_id, @organization_id, @space_id, @channel_id, @command, @options, @parameters, 'Waiting', @user_id,
        now() + make_interval(secs => @deadline_seconds::int))
RETURNING *;

-- name: CommandRunGet :one
SELECT * FROM command_run WHERE organization_id = @organization_id AND channel_id = @channel_id AND command_run_id = @command_run_id;

-- name: CommandRunTake :many
-- Hands a lease holder what is due, oldest first: runs waiting to be taken, and runs delivered under a
-- lease that is no longer current (redelivery after a lost lease). Locked rows belong to a concurrent
-- poll and are skipped.
UPDATE command_run SET status = 'Delivered', delivered_token = @claim_token, delivered_at = now()
WHERE command_run_id IN (
    SELECT r.command_run_id FROM command_run r
    WHERE r.channel_id = @channel_id AND r.status IN ('Waiting', 'Delivered') AND r.deadline > now()
      AND (r.status = 'Waiting' OR r.delivered_token <> @claim_token)
      AND (cardinality(@commands::text[]) = 0 OR r.command = ANY(@commands::text[]))
    ORDER BY r.created_at, r.command_run_id
    LIMIT @max_runs
    FOR UPDATE SKIP LOCKED)
RETURNING *;

-- name: CommandRunAnswer :one
-- The first answer wins: only a delivered run takes one.
UPDATE command_run SET status = @status, result = @result, error_message = @error_message, completed_at = now()
WHERE organization_id = @organization_id AND channel_id = @channel_id AND command_run_id = @command_run_id AND status = 'Delivered'
RETURNING *;

-- name: CommandRunCancel :one
UPDATE command_run SET status = 'Cancelled', completed_at = now()
WHERE organization_id = @organization_id AND channel_id = @channel_id AND command_run_id = @command_run_id AND status = 'Waiting'
RETURNING *;

-- name: CommandRunSweep :many
-- Ends runs whose time is up: Waiting past the deadline expire; Delivered and unanswered 30 seconds after
-- delivery fail, when their holder still has the lease (else they wait for redelivery) or their deadline
-- has passed too. Safe on every replica at once.
WITH due AS (
    SELECT r.command_run_id FROM command_run r
    WHERE r.status IN ('Waiting', 'Delivered')
      AND ((r.status = 'Waiting' AND r.deadline <= now())
        OR (r.status = 'Delivered' AND r.delivered_at <= now() - make_interval(secs => @answer_seconds::int)
            AND (r.deadline <= now() OR EXISTS (
                SELECT 1 FROM channel_lease l
                WHERE l.channel_id = r.channel_id AND l.claim_token = r.delivered_token AND l.expires_at > now()))))
    LIMIT 500
    FOR UPDATE SKIP LOCKED
)
UPDATE command_run r
SET status = CASE WHEN r.status = 'Waiting' THEN 'Expired' ELSE 'Failed' END,
    error_message = CASE WHEN r.status = 'Waiting' THEN 'no bot took the run before its deadline'
                         ELSE 'the bot did not report a result within ' || @answer_seconds::int || ' seconds of delivery' END,
    completed_at = now()
FROM due WHERE r.command_run_id = due.command_run_id
RETURNING r.*, (SELECT s.slug FROM space s WHERE s.space_id = r.space_id)::text AS space_slug;

-- name: CommandRunPrune :execrows
-- Deletes up to @batch finished runs older than the retention; run repeatedly, from any replica.
DELETE FROM command_run WHERE command_run_id IN (
    SELECT command_run_id FROM command_run
    WHERE status NOT IN ('Waiting', 'Delivered') AND created_at < now() - make_interval(secs => @retention_seconds::bigint)
    LIMIT @batch
);
