-- The guest role (holds nothing organization-wide: only what Permissions grant it, directly or through a
-- Group), Groups of an organization's members, and the indexes that let lists keep to what a guest may
-- view inside their SQL.
ALTER TABLE organization_member DROP CONSTRAINT organization_member_org_role_check;
ALTER TABLE organization_member ADD CONSTRAINT organization_member_org_role_check
    CHECK (org_role IN ('admin', 'manager', 'member', 'viewer', 'guest'));
ALTER TABLE user_key DROP CONSTRAINT user_key_max_org_role_check;
ALTER TABLE user_key ADD CONSTRAINT user_key_max_org_role_check
    CHECK (max_org_role IN ('admin', 'manager', 'member', 'viewer', 'guest'));
ALTER TABLE bridge_worker DROP CONSTRAINT bridge_worker_secret_max_org_role_check;
ALTER TABLE bridge_worker ADD CONSTRAINT bridge_worker_secret_max_org_role_check
    CHECK (secret_max_org_role IN ('admin', 'manager', 'member', 'viewer', 'guest'));

-- "group" is reserved in SQL, hence user_group. Members are the organization's Users (user_ids); a
-- membership that ends takes the User out of the organization's Groups (trigger below).
CREATE TABLE user_group (
    group_id        uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organization ON DELETE CASCADE,
    slug            text        NOT NULL,
    display_name    text        NOT NULL DEFAULT '',
    user_ids        uuid[]      NOT NULL DEFAULT '{}',
    labels          jsonb       NOT NULL DEFAULT '{}',
    annotations     jsonb       NOT NULL DEFAULT '{}',
    delete_gates    jsonb       NOT NULL DEFAULT '{}',
    hidden_reason   text        NOT NULL DEFAULT '',
    version         bigint      NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    search_text     text GENERATED ALWAYS AS (slug || ' ' || display_name || ' ' || hubd_map_text(labels) || ' ' || hubd_map_text(annotations)) STORED,
    CONSTRAINT user_group_slug_key UNIQUE (organization_id, slug)
);
CREATE INDEX user_group_organization_idx ON user_group (organization_id, group_id);
CREATE INDEX user_group_slug_idx ON user_group (organization_id, slug, group_id);
CREATE INDEX user_group_display_name_idx ON user_group (organization_id, display_name, group_id);
CREATE INDEX user_group_created_at_idx ON user_group (organization_id, created_at, group_id);
CREATE INDEX user_group_updated_at_idx ON user_group (organization_id, updated_at, group_id);
CREATE INDEX user_group_hidden_reason_idx ON user_group (organization_id, hidden_reason, group_id);
CREATE INDEX user_group_labels_idx ON user_group USING gin (labels);
CREATE INDEX user_group_search_idx ON user_group USING gin (search_text gin_trgm_ops);
-- The Groups a User is in (every authenticated request asks).
CREATE INDEX user_group_user_ids_idx ON user_group USING gin (user_ids);

CREATE FUNCTION hubd_leave_groups() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE user_group
       SET user_ids = array_remove(user_ids, OLD.user_id), version = version + 1, updated_at = now()
     WHERE organization_id = OLD.organization_id AND user_ids @> ARRAY[OLD.user_id];
    RETURN OLD;
END $$;
CREATE TRIGGER organization_member_leave_groups AFTER DELETE ON organization_member
    FOR EACH ROW EXECUTE FUNCTION hubd_leave_groups();

-- A guest's list condition is permissions @> {"View": {"UserIDs"|"GroupIDs": {<id>: true}}} per subject.
CREATE INDEX space_permissions_idx ON space USING gin (permissions jsonb_path_ops);
CREATE INDEX unit_permissions_idx ON unit USING gin (permissions jsonb_path_ops);
CREATE INDEX target_permissions_idx ON target USING gin (permissions jsonb_path_ops);
CREATE INDEX channel_permissions_idx ON channel USING gin (permissions jsonb_path_ops);
CREATE INDEX service_account_permissions_idx ON service_account USING gin (permissions jsonb_path_ops);
CREATE INDEX bridge_worker_permissions_idx ON bridge_worker USING gin (permissions jsonb_path_ops);
