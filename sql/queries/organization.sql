-- name: OrganizationGetByID :one
SELECT * FROM organization WHERE organization_id = @organization_id;

-- name: OrganizationGetBySlug :one
SELECT * FROM organization WHERE slug = @slug;

-- name: OrganizationInsert :one
INSERT INTO organization (organization_id, slug, display_name, labels, annotations, delete_gates, email_domain, sign_in_provision_role)
VALUES (@organization_id, @slug, @display_name, @labels, @annotations, @delete_gates, @email_domain, @sign_in_provision_role)
RETURNING *;

-- name: OrganizationUpdate :one
UPDATE organization
SET slug = @slug, display_name = @display_name, labels = @labels, annotations = @annotations,
    delete_gates = @delete_gates, email_domain = @email_domain, sign_in_provision_role = @sign_in_provision_role,
    version = version + 1, updated_at = now()
WHERE organization_id = @organization_id AND version = @version
RETURNING *;

-- name: OrganizationDelete :execrows
DELETE FROM organization WHERE organization_id = @organization_id;

-- name: OrganizationListByExternalID :many
-- The organizations an identity provider's organization claim names by ExternalID (token exchange); more
-- than one is ambiguous, so two are enough to tell.
SELECT * FROM organization WHERE external_id = @external_id AND external_id <> '' ORDER BY organization_id LIMIT 2;
