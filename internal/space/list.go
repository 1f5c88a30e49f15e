package space

import "github.com/hubd/hubd/internal/listquery"

// ListEntity is how Spaces are listed and filtered: every attribute where, order_by and select accept.
// Each filterable or orderable attribute is served by an index (migration 000002).
var ListEntity = listquery.Define(&listquery.Entity{
	Name: EntityType, From: "space", Columns: "space.*",
	ID: "SpaceID", Org: "space.organization_id", Slug: "Slug",
	Contains: "space.search_text", HiddenReason: "space.hidden_reason",
	Visibility:    &listquery.Visibility{Grants: "space.permissions"},
	ContainsAttrs: []string{"Slug", "DisplayName", "HiddenReason", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "SpaceID", Type: listquery.UUID, SQL: "space.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "space.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "space.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "space.display_name", Filterable: true, Orderable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "space.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "space.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "space.delete_gates", Filterable: true},
		{Name: "Permissions", Type: listquery.Opaque},
		{Name: "ComponentID", Type: listquery.UUID, SQL: "space.component_id", Nullable: true, Filterable: true, Orderable: true,
			OrderSQL: "COALESCE(space.component_id, '00000000-0000-0000-0000-000000000000'::uuid)"},
		{Name: "HiddenReason", Type: listquery.String, SQL: "space.hidden_reason", Filterable: true, Orderable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "space.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "space.updated_at", Filterable: true, Orderable: true},
		{Name: "Version", Type: listquery.Opaque},
		{Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}},
})
