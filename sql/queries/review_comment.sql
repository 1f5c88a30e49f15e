-- name: ReviewCommentInsert :one
INSERT INTO review_comment (review_comment_id, organization_id, space_id, unit_id, revision_id, revision_num, path, text,
    reply_to_id, user_id, user_agent)
VALUES (@review_comment_id, @organization_id, @space_id, @unit_id, @revision_id, @revision_num, @path, @text,
    @reply_to_id, @user_id, @user_agent)
RETURNING *;

-- name: ReviewCommentUpdate :one
-- Only the Text changes after creation.
UPDATE review_comment SET text = @text, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND review_comment_id = @review_comment_id AND version = @version
RETURNING *;

-- name: ReviewCommentUnitOf :one
-- The Unit of a ReviewComment of the organization (a reply must answer one on its own Unit).
SELECT unit_id FROM review_comment WHERE organization_id = @organization_id AND review_comment_id = @review_comment_id;

-- name: ReviewCommentMoveUnit :exec
-- ReviewComments follow their Unit to another Space.
UPDATE review_comment SET space_id = @to_space_id WHERE organization_id = @organization_id AND unit_id = @unit_id;
