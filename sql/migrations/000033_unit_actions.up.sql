-- UnitActions (QueuedOperations): the actions on Units queued for the BridgeWorkers of their Targets, and
-- UnitEvents, the results the workers report. Both are numbered per Unit (unit.head_unit_action_num and
-- unit.head_unit_event_num) and go with their Unit. An operation is a row from the moment it is queued, so
-- one queued while its worker is away waits for it, across restarts.
CREATE TABLE queued_operation (
    queued_operation_id uuid PRIMARY KEY,
    -- seq orders a worker's queue by creation (two operations of one transaction keep their order).
    seq                 bigserial   NOT NULL,
    organization_id     uuid        NOT NULL REFERENCES organization ON DELETE CASCADE,
    space_id            uuid        NOT NULL,
    unit_id             uuid        NOT NULL REFERENCES unit ON DELETE CASCADE,
    target_id           uuid        NOT NULL,
    bridge_worker_id    uuid        NOT NULL REFERENCES bridge_worker ON DELETE CASCADE,
    user_id             uuid,
    action              text        NOT NULL,
    status              text        NOT NULL,
    unit_action_num     bigint      NOT NULL,
    revision_num        bigint      NOT NULL DEFAULT 0,
    dry_run             boolean     NOT NULL DEFAULT false,
    data                bytea       NOT NULL DEFAULT '',
    error_details       jsonb       NOT NULL DEFAULT '[]',
    -- While Progressing: when the operation is Aborted unless its worker reports again.
    claim_expires_at    timestamptz,
    version             bigint      NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT queued_operation_num_key UNIQUE (unit_id, unit_action_num)
);
-- A worker's queue: its outstanding operations in creation order.
CREATE INDEX queued_operation_queue_idx ON queued_operation (bridge_worker_id, seq) WHERE status IN ('Pending', 'Delivered');
-- The sweep of Progressing operations past their claim.
CREATE INDEX queued_operation_claim_idx ON queued_operation (claim_expires_at) WHERE status = 'Progressing';
-- Lists: a Unit's actions by number, the organization's latest per Unit.
CREATE INDEX queued_operation_unit_idx ON queued_operation (organization_id, unit_id, unit_action_num);
CREATE INDEX queued_operation_created_at_idx ON queued_operation (organization_id, created_at, queued_operation_id);

CREATE TABLE unit_event (
    unit_event_id       uuid PRIMARY KEY,
    organization_id     uuid        NOT NULL REFERENCES organization ON DELETE CASCADE,
    space_id            uuid        NOT NULL,
    unit_id             uuid        NOT NULL REFERENCES unit ON DELETE CASCADE,
    queued_operation_id uuid        NOT NULL REFERENCES queued_operation ON DELETE CASCADE,
    bridge_worker_id    uuid        NOT NULL,
    unit_event_num      bigint      NOT NULL,
    action              text        NOT NULL,
    status              text        NOT NULL,
    result              text        NOT NULL DEFAULT '',
    message             text        NOT NULL DEFAULT '',
    revision_num        bigint      NOT NULL DEFAULT 0,
    resource_statuses   jsonb       NOT NULL DEFAULT '{}',
    started_at          timestamptz,
    terminated_at       timestamptz,
    version             bigint      NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT unit_event_num_key UNIQUE (unit_id, unit_event_num)
);
CREATE INDEX unit_event_unit_idx ON unit_event (organization_id, unit_id, unit_event_num);
CREATE INDEX unit_event_operation_idx ON unit_event (queued_operation_id, unit_event_num);
CREATE INDEX unit_event_created_at_idx ON unit_event (organization_id, created_at, unit_event_id);

-- The Unit's latest UnitEvent (Unit.UnitEventID).
ALTER TABLE unit ADD COLUMN unit_event_id uuid;
