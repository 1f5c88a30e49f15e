-- A ServiceAccount is read with the role of its User's membership (OrgRole): every read returns that row.

-- name: ServiceAccountGetWithRole :one
SELECT sa.*, m.org_role FROM service_account sa
JOIN organization_member m ON m.user_id = sa.user_id AND m.organization_id = sa.organization_id
WHERE sa.organization_id = @organization_id AND sa.service_account_id = @service_account_id;

-- name: ServiceAccountInsert :one
INSERT INTO service_account (service_account_id, organization_id, user_id, slug, display_name, labels, annotations,
                             delete_gates, permissions)
VALUES (@service_account_id, @organization_id, @user_id, @slug, @display_name, @labels, @annotations,
        @delete_gates, @permissions)
RETURNING *;

-- name: ServiceAccountUpdate :one
UPDATE service_account
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, permissions = @permissions, version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND service_account_id = @service_account_id AND version = @version
RETURNING *;

-- name: UserDelete :execrows
-- Deleting a bot User deletes what it backs (its ServiceAccount or BridgeWorker), its membership and keys.
DELETE FROM app_user WHERE user_id = @user_id;
