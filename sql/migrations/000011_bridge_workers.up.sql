-- BridgeWorkers (each backed by a bot User whose membership carries its OrgRole; only a SHA-256 hash of
-- its Secret is kept) and the named event cursors of worker event consumers.
CREATE TABLE bridge_worker (
    bridge_worker_id uuid PRIMARY KEY,
    organization_id  uuid        NOT NULL REFERENCES organization ON DELETE CASCADE,
    space_id         uuid        NOT NULL REFERENCES space ON DELETE RESTRICT,
    user_id          uuid        NOT NULL UNIQUE REFERENCES app_user ON DELETE CASCADE,
    slug             text        NOT NULL,
    display_name     text        NOT NULL DEFAULT '',
    labels           jsonb       NOT NULL DEFAULT '{}',
    annotations      jsonb       NOT NULL DEFAULT '{}',
    delete_gates     jsonb       NOT NULL DEFAULT '{}',
    permissions      jsonb       NOT NULL DEFAULT '{}',
    secret_hash      bytea       NOT NULL,
    last_seen_at     timestamptz,
    hidden_reason    text        NOT NULL DEFAULT '',
    version          bigint      NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    search_text      text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT bridge_worker_slug_key UNIQUE (space_id, slug)
);
-- Filters and orders of the list (keyset: the order field, then the ID).
CREATE INDEX bridge_worker_organization_idx ON bridge_worker (organization_id, bridge_worker_id);
CREATE INDEX bridge_worker_space_idx ON bridge_worker (organization_id, space_id, bridge_worker_id);
CREATE INDEX bridge_worker_slug_idx ON bridge_worker (organization_id, slug, bridge_worker_id);
CREATE INDEX bridge_worker_display_name_idx ON bridge_worker (organization_id, display_name, bridge_worker_id);
CREATE INDEX bridge_worker_user_idx ON bridge_worker (organization_id, user_id, bridge_worker_id);
CREATE INDEX bridge_worker_hidden_reason_idx ON bridge_worker (organization_id, hidden_reason, bridge_worker_id);
CREATE INDEX bridge_worker_created_at_idx ON bridge_worker (organization_id, created_at, bridge_worker_id);
CREATE INDEX bridge_worker_updated_at_idx ON bridge_worker (organization_id, updated_at, bridge_worker_id);
CREATE INDEX bridge_worker_labels_idx ON bridge_worker USING gin (labels);
CREATE INDEX bridge_worker_annotations_idx ON bridge_worker USING gin (annotations);
CREATE INDEX bridge_worker_delete_gates_idx ON bridge_worker USING gin (delete_gates);
CREATE INDEX bridge_worker_search_idx ON bridge_worker USING gin (search_text gin_trgm_ops);

-- One cursor per worker and Name: the CursorID of the last event handed out through it. FromCursor
-- places it only when the Name first connects; afterwards the stored cursor is what counts.
CREATE TABLE bridge_worker_cursor (
    bridge_worker_id uuid        NOT NULL REFERENCES bridge_worker ON DELETE CASCADE,
    name             text        NOT NULL,
    cursor           bigint      NOT NULL,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bridge_worker_id, name)
);
