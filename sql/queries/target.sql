-- name: TargetGetByID :one
SELECT * FROM target WHERE organization_id = @organization_id AND space_id = @space_id AND target_id = @target_id;
