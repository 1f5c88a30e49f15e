-- The event log: an append-only record of changes, written in the transaction of the change it records.
-- cursor_id order is commit order: writers take an advisory lock for the insert and the commit (see
-- internal/event), so no reader ever passes a cursor whose transaction commits later.
CREATE TABLE event_log (
    cursor_id           bigserial PRIMARY KEY,
    organization_id     uuid        NOT NULL,
    event_type          text        NOT NULL,
    space_id            uuid,
    target_id           uuid,
    subject_entity_type text        NOT NULL,
    subject_entity_id   uuid        NOT NULL,
    payload             jsonb       NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_log_organization_idx ON event_log (organization_id, cursor_id);
CREATE INDEX event_log_created_at_idx ON event_log (created_at);
