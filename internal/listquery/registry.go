package listquery

import (
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Type is an attribute's type in the query language.
type Type int

// Attribute types.
const (
	String Type = iota + 1
	Int
	UUID
	Bool
	Time
	StringMap  // jsonb object of strings (Labels): Map.key is a String
	BoolMap    // jsonb object of booleans (DeleteGates): Map.key is a Bool
	UUIDList   // uuid[]: ? and LEN()
	StringList // text[]: ? and LEN()
	EntityList // jsonb array of objects: List.*.Field, List.0.Field, List.?Key=value.Field, with Elem describing the objects
	Object     // jsonb object: Object.Field, with Elem describing its fields
	Opaque     // selectable only (Permissions)
)

func (t Type) String() string {
	return map[Type]string{String: "string", Int: "integer", UUID: "UUID", Bool: "boolean", Time: "time",
		StringMap: "map of strings", BoolMap: "map of booleans", UUIDList: "list of UUIDs", StringList: "list of strings",
		EntityList: "list of entities", Object: "object", Opaque: "object"}[t]
}

// Attribute is one name the query language knows for an entity.
type Attribute struct {
	Name string
	Type Type
	// SQL is the column expression. For the attributes of an EntityList element or an Object it contains
	// {e}, the element or object (jsonb).
	SQL string
	// OrderSQL, when set, is the expression ordered by (a non-null form of a nullable column).
	OrderSQL   string
	Nullable   bool
	Filterable bool
	Orderable  bool
	// Always marks what select always returns: IDs, parent IDs and Slug.
	Always bool
	// Elem describes the objects of an EntityList, or the fields of an Object.
	Elem *Entity
}

// Include is a related entity a list can expand (include=OrganizationID fills Organization). select
// names fields of what it fills as Field.field (Organization.Slug).
type Include struct {
	Name  string // the include name, e.g. OrganizationID
	Field string // the Extended field it fills, e.g. Organization
	// Type is the entity type of what Field holds (an entity or a list of them), when it is not Field.
	Type string
	// Unserved marks a related family the service does not serve yet: include accepts the name (clients
	// written for the whole API send it) and Field is null, or [] for a list, until the family exists.
	Unserved bool
	// NamedBy marks the entities that name the listed one (a Revision's Attestations), rather than those
	// the listed one names by the attribute Name.
	NamedBy bool
}

// EntityType is the entity type the include expands to.
func (in Include) EntityType() string {
	if in.Type != "" {
		return in.Type
	}
	return in.Field
}

// Entity describes how one family is listed and queried. Every SQL fragment is a constant of the code,
// never client text.
type Entity struct {
	// Name is the entity type (Space); it is also the Extended form's field holding the entity.
	Name string
	// From is the FROM clause; Columns the select list yielding the row type the family scans into.
	From    string
	Columns string
	// Table is the family's own table in From (its alias when From joins others to it): what a read by
	// key locks (Get) and a delete removes from. Standard sets it.
	Table string
	// LockedColumns, when set, is what a locked read (a write's) selects instead of Columns: the columns
	// lists leave out that writes use (a Unit's data projection).
	LockedColumns string
	// ID names the ID attribute (ordering tie-break and keyset); Org the organization column.
	ID  string
	Org string
	// Contains is the text expression `contains` matches (case-insensitively); empty disables contains.
	// ContainsAttrs are the attributes that text is made of (select adds them when contains is used).
	Contains      string
	ContainsAttrs []string
	// HiddenReason is the column of the hidden reason, empty when the family cannot be hidden.
	HiddenReason string
	// DataColumn is the jsonb column of the configuration data's paths, for entities whose lists take
	// where_data and resource_type (Units); empty for the others.
	DataColumn string
	// Slug names the Slug attribute (for the where-by-Slug exception of include_hidden), if any.
	Slug       string
	Attributes []Attribute
	Includes   []Include
	// Visibility is how a list keeps to what a guest may view; nil lists nothing to guests.
	Visibility *Visibility

	byName map[string]*Attribute
}

// defined holds the top-level entities by Name, so a description of the API (an operation's
// x-hubd-entity) can be resolved to the registry that serves it.
var defined = map[string]*Entity{}

// Define indexes an entity description and registers it by Name; families declare theirs once, at
// package level. A second top-level entity of the same Name panics: Lookup must be unambiguous.
func Define(e *Entity) *Entity {
	index(e)
	if _, dup := defined[e.Name]; dup {
		panic("listquery: entity " + e.Name + " is defined twice")
	}
	defined[e.Name] = e
	return e
}

// index builds e's attribute index and those of its nested element entities (which are described
// under their attribute, not registered).
func index(e *Entity) {
	e.byName = make(map[string]*Attribute, len(e.Attributes))
	for i := range e.Attributes {
		a := &e.Attributes[i]
		e.byName[a.Name] = a
		if a.Elem != nil && a.Elem.byName == nil {
			index(a.Elem)
		}
	}
	if e.Attr(e.ID) == nil {
		panic("listquery: entity " + e.Name + " has no ID attribute " + e.ID)
	}
}

// Lookup returns the entity Define registered under name (an operation's x-hubd-entity), or nil.
func Lookup(name string) *Entity { return defined[name] }

// Names lists the registered entities' names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(defined))
}

// OrderFields lists the attributes order_by accepts, in declaration order.
func (e *Entity) OrderFields() []string {
	var out []string
	for i := range e.Attributes {
		if e.Attributes[i].Orderable {
			out = append(out, e.Attributes[i].Name)
		}
	}
	return out
}

// IncludeNames lists the names include accepts, in declaration order.
func (e *Entity) IncludeNames() []string {
	out := make([]string, len(e.Includes))
	for i, in := range e.Includes {
		out[i] = in.Name
	}
	return out
}

// SupportsContains reports whether the entity's lists take contains (else it is 400).
func (e *Entity) SupportsContains() bool { return e.Contains != "" }

// Attr returns the attribute called name.
func (e *Entity) Attr(name string) *Attribute { return e.byName[name] }

func (e *Entity) names(keep func(*Attribute) bool) string {
	var out []string
	for i := range e.Attributes {
		if keep(&e.Attributes[i]) {
			out = append(out, e.Attributes[i].Name)
		}
	}
	return strings.Join(out, ", ")
}

// filledBy returns the include that fills the Extended field called field.
func (e *Entity) filledBy(field string) *Include {
	for i := range e.Includes {
		if e.Includes[i].Field == field {
			return &e.Includes[i]
		}
	}
	return nil
}

func (e *Entity) include(name string) *Include {
	for i := range e.Includes {
		if e.Includes[i].Name == name {
			return &e.Includes[i]
		}
	}
	return nil
}

// ColumnsOf is a select list for the row type T (a generated model, columns named by its db tags) of
// table that reads NULL instead of the columns left out: a list selects them so that rows still scan
// into T, without reading, sending and decoding what no list answer shows (a Unit's data projection, the
// text behind contains).
func ColumnsOf[T any](table string, leftOut ...string) string {
	t := reflect.TypeFor[T]()
	cols := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("db")
		if slices.Contains(leftOut, name) {
			cols = append(cols, "NULL AS "+name)
			continue
		}
		cols = append(cols, table+"."+name)
	}
	return strings.Join(cols, ", ")
}

// NullableUUID is a filterable, orderable nullable UUID column, ordered as the nil UUID (its index must
// use the same expression).
func NullableUUID(name, sql string) Attribute {
	return Attribute{Name: name, Type: UUID, SQL: sql, Nullable: true, Filterable: true, Orderable: true,
		OrderSQL: "COALESCE(" + sql + ", '00000000-0000-0000-0000-000000000000'::uuid)"}
}
