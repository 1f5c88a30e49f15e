package space

import "github.com/hubd/hubd/internal/listquery"

// ListEntity is how Spaces are listed and filtered: every attribute where, order_by and select accept.
// Each filterable or orderable attribute is served by an index (migration 000002).
var ListEntity = listquery.Standard{Table: "space", ID: "SpaceID", Permissions: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "HiddenReason", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		listquery.After("DeleteGates"),
		{Name: "Permissions", Type: listquery.Opaque},
		listquery.NullableUUID("ComponentID", "space.component_id"),
	},
	// The Component family declares itself apart (Components read Spaces): named here by its type name.
	Includes: []listquery.Include{{Name: "ComponentID", Field: "Component"}},
})
