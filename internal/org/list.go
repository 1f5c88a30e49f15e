package org

import "github.com/hubd/hubd/internal/listquery"

// OrganizationList lists the caller's organization (a token names one).
var OrganizationList = listquery.Define(&listquery.Entity{
	Name: OrganizationType, From: "organization", Columns: "organization.*",
	ID: "OrganizationID", Org: "organization.organization_id", Slug: "Slug",
	Contains:      "(organization.slug || ' ' || organization.display_name || ' ' || organization.email_domain || ' ' || hubd_map_text(organization.labels) || ' ' || hubd_map_text(organization.annotations))",
	HiddenReason:  "organization.hidden_reason",
	ContainsAttrs: []string{"Slug", "DisplayName", "EmailDomain", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "organization.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "organization.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "organization.display_name", Filterable: true, Orderable: true},
		{Name: "EmailDomain", Type: listquery.String, SQL: "organization.email_domain", Filterable: true, Orderable: true},
		{Name: "ExternalID", Type: listquery.String, SQL: "organization.external_id", Filterable: true, Orderable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "organization.hidden_reason", Filterable: true, Orderable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "organization.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "organization.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "organization.delete_gates", Filterable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "organization.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "organization.updated_at", Filterable: true, Orderable: true},
		{Name: "Version", Type: listquery.Opaque},
		{Name: "EntityType", Type: listquery.Opaque},
	},
})

// MemberList lists an organization's members with their Users' fields. The membership primary key and
// the users' unique username and slug indexes serve it.
var MemberList = listquery.Define(&listquery.Entity{
	Name: MemberType,
	From: "organization_member m JOIN app_user u USING (user_id)",
	Columns: "m.organization_id, m.user_id, m.org_role, m.external_organization_id, " +
		"u.username, u.slug, u.display_name, u.external_id, u.profile_picture_url",
	ID: "UserID", Org: "m.organization_id", Slug: "Slug",
	Contains:      "(u.username || ' ' || u.slug || ' ' || u.display_name)",
	ContainsAttrs: []string{"Username", "Slug", "DisplayName"},
	Attributes: []listquery.Attribute{
		{Name: "UserID", Type: listquery.UUID, SQL: "m.user_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "m.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "u.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "Username", Type: listquery.String, SQL: "u.username", Filterable: true, Orderable: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "u.display_name", Filterable: true, Orderable: true},
		{Name: "ExternalID", Type: listquery.String, SQL: "u.external_id", Filterable: true, Orderable: true},
		{Name: "OrgRole", Type: listquery.String, SQL: "m.org_role", Filterable: true, Orderable: true},
		{Name: "ExternalOrganizationID", Type: listquery.Opaque},
		{Name: "ProfilePictureURL", Type: listquery.Opaque},
	},
})

// UserList lists the Users that are members of the caller's organization.
var UserList = listquery.Define(&listquery.Entity{
	Name: UserType, From: "app_user u JOIN organization_member m USING (user_id)", Columns: "u.*",
	ID: "UserID", Org: "m.organization_id", Slug: "Slug",
	Contains:     "(u.username || ' ' || u.slug || ' ' || u.display_name || ' ' || u.external_id)",
	HiddenReason: "u.hidden_reason",
	// A guest sees itself among the organization's Users.
	Visibility:    &listquery.Visibility{Members: "ARRAY[u.user_id]"},
	ContainsAttrs: []string{"Username", "Slug", "DisplayName", "ExternalID"},
	Attributes: []listquery.Attribute{
		{Name: "UserID", Type: listquery.UUID, SQL: "u.user_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "u.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "Username", Type: listquery.String, SQL: "u.username", Filterable: true, Orderable: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "u.display_name", Filterable: true, Orderable: true},
		{Name: "ExternalID", Type: listquery.String, SQL: "u.external_id", Filterable: true, Orderable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "u.hidden_reason", Filterable: true, Orderable: true},
		// A User's Groups in the listed organization (GIN on user_group.user_ids).
		{Name: "GroupIDs", Type: listquery.UUIDList, SQL: "ARRAY(SELECT g.group_id FROM user_group g WHERE g.organization_id = m.organization_id AND g.user_ids @> ARRAY[u.user_id])", Filterable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "u.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "u.updated_at", Filterable: true, Orderable: true},
		{Name: "ProfilePictureURL", Type: listquery.Opaque},
		{Name: "Version", Type: listquery.Opaque},
		{Name: "EntityType", Type: listquery.Opaque},
	},
})
