-- name: OrganizationMemberGet :one
SELECT m.organization_id, m.user_id, m.org_role, m.external_organization_id,
       u.username, u.slug, u.display_name, u.external_id, u.profile_picture_url
FROM organization_member m JOIN app_user u USING (user_id)
WHERE m.organization_id = @organization_id AND m.user_id = @user_id;

-- name: OrganizationMemberInsert :exec
INSERT INTO organization_member (organization_id, user_id, org_role)
VALUES (@organization_id, @user_id, @org_role);

-- name: OrganizationMemberSetRole :exec
UPDATE organization_member SET org_role = @org_role
WHERE organization_id = @organization_id AND user_id = @user_id;

-- name: OrganizationMemberDelete :execrows
DELETE FROM organization_member WHERE organization_id = @organization_id AND user_id = @user_id;

-- name: OrganizationMemberCountAdmins :one
-- Counted under a lock on the organization row, so two removals cannot both leave it without an admin.
SELECT count(*) FROM organization_member
WHERE organization_id = @organization_id AND org_role = 'admin';

-- name: OrganizationLockForMembership :exec
SELECT 1 FROM organization WHERE organization_id = @organization_id FOR UPDATE;

-- name: UserBackingKind :one
-- What a bot User backs ('ServiceAccount', 'BridgeWorker'), or '' for a person: a bot's membership is
-- managed through that entity, never removed on its own.
SELECT CASE
    WHEN EXISTS (SELECT 1 FROM service_account sa WHERE sa.user_id = @bot_user_id::uuid) THEN 'ServiceAccount'
    WHEN EXISTS (SELECT 1 FROM bridge_worker bw WHERE bw.user_id = @bot_user_id::uuid) THEN 'BridgeWorker'
    ELSE '' END::text;

-- name: OrganizationMembersAmong :many
-- Which of the given Users are members of the organization (Permissions may grant only to members).
SELECT user_id FROM organization_member WHERE organization_id = @organization_id AND user_id = ANY(@user_ids::uuid[]);

-- name: OrganizationMemberListByUser :many
-- The organizations a User belongs to, for the embedded provider's login page.
SELECT m.organization_id, o.slug, o.display_name, m.org_role
FROM organization_member m JOIN organization o USING (organization_id)
WHERE m.user_id = @user_id ORDER BY o.slug;
