-- ReviewComments: remarks on a Revision of a Unit, and replies to them. They go with their Unit (and its
-- Revisions); a reply outlives the comment it answered (its reply_to_id becomes null), so deleting a
-- thread in one bulk delete meets no row already gone. user_id is the author, kept as a plain ID so that
-- the remark outlives a removed bot User.
CREATE TABLE review_comment (
    review_comment_id uuid PRIMARY KEY,
    organization_id   uuid        NOT NULL REFERENCES organization,
    space_id          uuid        NOT NULL REFERENCES space ON DELETE CASCADE,
    unit_id           uuid        NOT NULL REFERENCES unit ON DELETE CASCADE,
    revision_id       uuid        NOT NULL REFERENCES revision ON DELETE CASCADE,
    revision_num      bigint      NOT NULL,
    path              text        NOT NULL DEFAULT '',
    text              text        NOT NULL,
    reply_to_id       uuid REFERENCES review_comment ON DELETE SET NULL,
    user_id           uuid        NOT NULL,
    user_agent        text        NOT NULL DEFAULT '',
    hidden_reason     text        NOT NULL DEFAULT '',
    version           bigint      NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    search_text       text GENERATED ALWAYS AS (path || ' ' || text) STORED
);
-- Every order field of the list (and the filters on them) has its index.
CREATE INDEX review_comment_organization_idx ON review_comment (organization_id, review_comment_id);
CREATE INDEX review_comment_space_idx ON review_comment (space_id, review_comment_id);
CREATE INDEX review_comment_unit_idx ON review_comment (unit_id, review_comment_id);
CREATE INDEX review_comment_revision_idx ON review_comment (revision_id, review_comment_id);
CREATE INDEX review_comment_revision_num_idx ON review_comment (organization_id, revision_num, review_comment_id);
CREATE INDEX review_comment_path_idx ON review_comment (organization_id, path, review_comment_id);
CREATE INDEX review_comment_user_idx ON review_comment (organization_id, user_id, review_comment_id);
CREATE INDEX review_comment_user_agent_idx ON review_comment (organization_id, user_agent, review_comment_id);
CREATE INDEX review_comment_reply_to_idx ON review_comment (organization_id, (COALESCE(reply_to_id, '00000000-0000-0000-0000-000000000000'::uuid)), review_comment_id);
CREATE INDEX review_comment_reply_to_fk_idx ON review_comment (reply_to_id) WHERE reply_to_id IS NOT NULL;
CREATE INDEX review_comment_hidden_reason_idx ON review_comment (organization_id, hidden_reason, review_comment_id);
CREATE INDEX review_comment_created_at_idx ON review_comment (organization_id, created_at, review_comment_id);
CREATE INDEX review_comment_updated_at_idx ON review_comment (organization_id, updated_at, review_comment_id);
CREATE INDEX review_comment_search_idx ON review_comment USING gin (search_text gin_trgm_ops);
