package listquery

import (
	"slices"
	"strings"
	"unicode"
)

// Standard describes a family's table so that its listing is declared with only what is its own:
// Define fills in the rest the same way for every family (the table's From, Columns, organization,
// Slug, hidden-reason and contains columns, the standard attributes, the Organization and Space
// includes, and the Visibility of what its entities carry).
//
// The standard attributes, in the order lists name them: the ID, SpaceID (InSpace), OrganizationID,
// Slug, DisplayName, Labels, Annotations, DeleteGates, HiddenReason, CreatedAt, UpdatedAt, Permissions
// (selectable only, with Permissions), Version and EntityType (selectable only); a Record family's are
// only the ID, SpaceID, OrganizationID, HiddenReason, CreatedAt, Permissions and EntityType. The family's
// own attributes follow DisplayName (a Record's: OrganizationID), or the standard attribute named by the
// After before them; one of its own named as a standard attribute takes that one's place.
type Standard struct {
	// Table is the family's table: its name, or its alias when From joins others to it.
	Table string
	// ID names the ID attribute (TagID); its column is <Table>.tag_id.
	ID string
	// InSpace: the family's entities live in a Space (SpaceID, include=SpaceID, visible through the
	// Space's grants).
	InSpace bool
	// Permissions: the family's entities carry Permissions (selectable, and visible through them).
	Permissions bool
	// Record: the family's entities are immutable records (Attestations): no Slug, DisplayName, Labels,
	// Annotations, DeleteGates, UpdatedAt or Version. They are named by ID only.
	Record bool
	// Unordered names standard attributes the family's lists cannot order by (no index serves them).
	Unordered []string
}

// after is the Type of the markers After puts among a family's own attributes.
const after Type = -1

// After places the family's own attributes that follow it after the standard attribute name.
func After(name string) Attribute { return Attribute{Name: name, Type: after} }

// Define completes e with the standard parts of a family's listing (what e sets itself is kept) and
// registers it (the package-level Define).
func (s Standard) Define(e *Entity) *Entity {
	col := func(name string) string { return s.Table + "." + name }
	e.Table = s.Table
	setDefault(&e.From, s.Table)
	setDefault(&e.Columns, col("*"))
	setDefault(&e.Org, col("organization_id"))
	if !s.Record {
		setDefault(&e.Slug, "Slug")
	}
	setDefault(&e.HiddenReason, col("hidden_reason"))
	setDefault(&e.Contains, col("search_text"))
	if e.ContainsAttrs == nil && !s.Record {
		e.ContainsAttrs = []string{"Slug", "DisplayName", "Labels", "Annotations"}
	}
	if e.Visibility == nil {
		e.Visibility = &Visibility{}
		if s.Permissions {
			e.Visibility.Grants = col("permissions")
		}
		if s.InSpace {
			e.Visibility.Space = col("space_id")
		}
	}
	e.ID = s.ID
	e.Attributes = s.attributes(e.Attributes)
	var includes []Include
	if !slices.ContainsFunc(e.Includes, func(in Include) bool { return in.Name == "OrganizationID" }) {
		includes = append(includes, Include{Name: "OrganizationID", Field: "Organization"})
	}
	if s.InSpace && !slices.ContainsFunc(e.Includes, func(in Include) bool { return in.Name == "SpaceID" }) {
		includes = append(includes, Include{Name: "SpaceID", Field: "Space"})
	}
	e.Includes = append(includes, e.Includes...)
	return Define(e)
}

// attributes merges the standard attributes with the family's own (placed as After says).
func (s Standard) attributes(own []Attribute) []Attribute {
	col := func(name string) string { return s.Table + "." + name }
	ordered := func(name string) bool { return !slices.Contains(s.Unordered, name) }
	key := func(name string, t Type, sql string) Attribute {
		return Attribute{Name: name, Type: t, SQL: sql, Filterable: true, Orderable: true, Always: true}
	}
	std := []Attribute{key(s.ID, UUID, col(snake(s.ID)))}
	if s.InSpace {
		std = append(std, key("SpaceID", UUID, col("space_id")))
	}
	std = append(std, key("OrganizationID", UUID, col("organization_id")))
	if !s.Record {
		std = append(std, key("Slug", String, col("slug")),
			Attribute{Name: "DisplayName", Type: String, SQL: col("display_name"), Filterable: true, Orderable: ordered("DisplayName")},
			Attribute{Name: "Labels", Type: StringMap, SQL: col("labels"), Filterable: true},
			Attribute{Name: "Annotations", Type: StringMap, SQL: col("annotations"), Filterable: true},
			Attribute{Name: "DeleteGates", Type: BoolMap, SQL: col("delete_gates"), Filterable: true})
	}
	std = append(std,
		Attribute{Name: "HiddenReason", Type: String, SQL: col("hidden_reason"), Filterable: true, Orderable: ordered("HiddenReason")},
		Attribute{Name: "CreatedAt", Type: Time, SQL: col("created_at"), Filterable: true, Orderable: ordered("CreatedAt")})
	if !s.Record {
		std = append(std, Attribute{Name: "UpdatedAt", Type: Time, SQL: col("updated_at"), Filterable: true, Orderable: ordered("UpdatedAt")})
	}
	if s.Permissions {
		std = append(std, Attribute{Name: "Permissions", Type: Opaque})
	}
	if !s.Record {
		std = append(std, Attribute{Name: "Version", Type: Opaque})
	}
	std = append(std, Attribute{Name: "EntityType", Type: Opaque})

	// The family's own attributes, by the standard attribute they follow.
	placed := map[string][]Attribute{}
	anchor := "DisplayName"
	if s.Record {
		anchor = "OrganizationID"
	}
	for _, a := range own {
		if a.Type == after {
			anchor = a.Name
			continue
		}
		placed[anchor] = append(placed[anchor], a)
	}
	overridden := func(name string) bool {
		return slices.ContainsFunc(own, func(a Attribute) bool { return a.Type != after && a.Name == name })
	}
	out := make([]Attribute, 0, len(std)+len(own))
	for _, a := range std {
		if !overridden(a.Name) {
			out = append(out, a)
		}
		out = append(out, placed[a.Name]...)
		delete(placed, a.Name)
	}
	for name := range placed {
		panic("listquery: " + s.ID + ": After(" + name + ") names no standard attribute")
	}
	return out
}

func setDefault(field *string, value string) {
	if *field == "" {
		*field = value
	}
}

// snake is the column name of an attribute name: TagID is tag_id, ServiceAccountID service_account_id.
func snake(name string) string {
	base, isID := strings.CutSuffix(name, "ID")
	var b strings.Builder
	for i, r := range base {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	if isID {
		b.WriteString("_id")
	}
	return b.String()
}
