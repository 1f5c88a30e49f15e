package listquery

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
)

// ViewDefinition is a stored View as lists apply it (view=): its columns are computed for every item,
// the related entities they read are included and the fields they read selected, its Filter (resolved
// with it) applies, and GroupBy then OrderBy order the list. Hash binds continue tokens to the definition.
type ViewDefinition struct {
	ID               uuid.UUID
	Of               string
	Hash             string
	Columns          []ViewColumnSource
	GroupBy          string
	OrderBy          string
	OrderByDirection string
	Filter           *FilterDefinition
}

// ViewColumnSource is one column of a View as stored: its Name and exactly one of MetadataAttribute (a
// path over the item's fields) and DataPath (a path into a Unit's configuration data, optionally of one
// ResourceType).
type ViewColumnSource struct {
	Name              string
	MetadataAttribute string
	DataPath          string
	ResourceType      string
}

// MaxViewColumns bounds a View's columns.
const MaxViewColumns = 64

// CompiledView is a View checked against the entity its lists return: what each column reads, and what
// the list must include, select and order by for it.
type CompiledView struct {
	columns []compiledColumn
	// includes are the include names its columns read; fields the fields (Field.field for included ones).
	includes []string
	fields   []string
	// dataPaths are the SQL/JSON paths of its data columns, in column order; the list selects each over
	// the entity's DataColumn.
	dataPaths []string
	// groupBy and orderBy are the View's order, in order_by's form.
	groupBy, orderBy string
}

type compiledColumn struct {
	name string
	// field is the Extended form's field the path starts in: the entity's (its Name) or an included one's.
	field string
	path  []Segment
	// data is the index of the column's values among the row's data columns, or -1.
	data int
}

// ColumnValue is one value of a View's column for one item.
type ColumnValue struct {
	Name  string
	Value string
}

// CompileView checks a View's definition against e, the entity its lists return. A problem is 400
// Validation naming the field it is in (Columns[2].ColumnSource.MetadataAttribute, GroupBy, OrderBy).
func CompileView(e *Entity, def ViewDefinition) (*CompiledView, error) {
	if len(def.Columns) > MaxViewColumns {
		return nil, apierr.Validation(fmt.Sprintf("Columns: a View has at most %d columns", MaxViewColumns),
			apierr.Item{Item: "Columns", Description: "too many columns"})
	}
	cv := &CompiledView{}
	names := map[string]bool{}
	includes := map[string]bool{}
	for i, c := range def.Columns {
		at := fmt.Sprintf("Columns[%d]", i)
		if strings.TrimSpace(c.Name) == "" {
			return nil, apierr.Validation(at+".Name: a column needs a Name", apierr.Item{Item: at + ".Name", Description: "empty"})
		}
		if names[c.Name] {
			return nil, apierr.Validation(fmt.Sprintf("%s.Name: %q names two columns", at, c.Name), apierr.Item{Item: at + ".Name", Description: "duplicate"})
		}
		names[c.Name] = true
		source := at + ".ColumnSource"
		switch {
		case (c.MetadataAttribute == "") == (c.DataPath == ""):
			return nil, apierr.Validation(source+": give exactly one of MetadataAttribute and DataPath",
				apierr.Item{Item: source, Description: "exactly one of MetadataAttribute and DataPath"})
		case c.DataPath != "":
			if e.DataColumn == "" {
				return nil, apierr.Validation(fmt.Sprintf("%s.DataPath: %s have no configuration data; use MetadataAttribute", source, e.Name),
					apierr.Item{Item: source + ".DataPath", Description: "not for " + e.Name})
			}
			p, err := columnDataPath(c.DataPath, c.ResourceType)
			if err != nil {
				return nil, definitionError(source+".DataPath.Path", err)
			}
			cv.columns = append(cv.columns, compiledColumn{name: c.Name, data: len(cv.dataPaths)})
			cv.dataPaths = append(cv.dataPaths, p)
		default:
			col, include, field, err := metadataColumn(e, c.MetadataAttribute)
			if err != nil {
				return nil, definitionError(source+".MetadataAttribute", err)
			}
			col.name = c.Name
			cv.columns = append(cv.columns, col)
			if include != "" && !includes[include] {
				includes[include] = true
				cv.includes = append(cv.includes, include)
			}
			cv.fields = append(cv.fields, field)
		}
	}
	var err error
	if cv.groupBy, cv.orderBy, err = viewOrder(e, def); err != nil {
		return nil, err
	}
	return cv, nil
}

// metadataColumn reads a MetadataAttribute: a path whose first name is an attribute of e or the field
// an include of e fills (then followed by an attribute of the included entity).
func metadataColumn(e *Entity, src string) (compiledColumn, string, string, error) {
	segs, err := ParsePath(src)
	if err != nil {
		return compiledColumn{}, "", "", err
	}
	first := segs[0]
	if first.Quoted || first.Star || first.Match != nil {
		return compiledColumn{}, "", "", &SyntaxError{Pos: first.Pos, Msg: "the path starts with an attribute name"}
	}
	if e.Attr(first.Name) != nil {
		return compiledColumn{field: e.Name, path: segs, data: -1}, "", first.Name, nil
	}
	in := e.filledBy(first.Name)
	if in == nil {
		return compiledColumn{}, "", "", &SyntaxError{Pos: first.Pos, Msg: fmt.Sprintf("%q is neither a field of %s (%s) nor a related entity (%s)",
			first.Name, e.Name, e.names(func(*Attribute) bool { return true }), strings.Join(e.includeFields(), ", "))}
	}
	if len(segs) < 2 || segs[1].Star || segs[1].Match != nil {
		return compiledColumn{}, "", "", &SyntaxError{Pos: first.Pos, Msg: fmt.Sprintf("name a field of the related %s: %s.<Field>", first.Name, first.Name)}
	}
	if of := Lookup(in.EntityType()); of != nil && of.Attr(segs[1].Name) == nil {
		return compiledColumn{}, "", "", &SyntaxError{Pos: segs[1].Pos, Msg: fmt.Sprintf("%q is not a field of %s; use one of: %s",
			segs[1].Name, of.Name, of.names(func(*Attribute) bool { return true }))}
	}
	return compiledColumn{field: first.Name, path: segs[1:], data: -1}, in.Name, first.Name + "." + segs[1].Name, nil
}

func (e *Entity) includeFields() []string {
	out := make([]string, len(e.Includes))
	for i, in := range e.Includes {
		out[i] = in.Field
	}
	return out
}

// viewOrder checks a View's GroupBy, OrderBy and OrderByDirection and returns them in order_by's form.
func viewOrder(e *Entity, def ViewDefinition) (groupBy, orderBy string, err error) {
	if groupBy = strings.TrimSpace(def.GroupBy); groupBy != "" {
		if a := e.Attr(groupBy); a == nil || !a.Orderable {
			return "", "", apierr.Validation(fmt.Sprintf("GroupBy: %s lists cannot be grouped by %q; use one of: %s", e.Name, groupBy, strings.Join(e.OrderFields(), ", ")),
				apierr.Item{Item: "GroupBy", Description: "unknown order field " + groupBy})
		}
	}
	switch def.OrderByDirection {
	case "", "ASC", "DESC":
	default:
		return "", "", apierr.Validation("OrderByDirection must be ASC or DESC", apierr.Item{Item: "OrderByDirection", Description: "bad direction"})
	}
	var items []string
	for _, item := range splitList(def.OrderBy) {
		if !strings.Contains(item, ":") && def.OrderByDirection != "" {
			item = def.OrderByDirection + ":" + item
		}
		items = append(items, item)
	}
	orderBy = strings.Join(items, ",")
	if _, err := parseOrderBy(e, orderBy); err != nil {
		return "", "", definitionError("OrderBy", err)
	}
	return groupBy, orderBy, nil
}

// order is the order_by of a list using the View: the request's order_by, or the View's OrderBy when it
// gives none, after GroupBy (ascending, unless the order_by names it with a direction).
func (cv *CompiledView) order(requestOrder string) string {
	items := splitList(requestOrder)
	if len(items) == 0 {
		items = splitList(cv.orderBy)
	}
	if cv.groupBy == "" {
		return strings.Join(items, ",")
	}
	group := "ASC:" + cv.groupBy
	rest := make([]string, 0, len(items))
	for _, item := range items {
		_, name, ok := strings.Cut(item, ":")
		if !ok {
			name = item
		}
		if strings.TrimSpace(name) == cv.groupBy {
			group = item
			continue
		}
		rest = append(rest, item)
	}
	return strings.Join(append([]string{group}, rest...), ",")
}

// ParsePath parses a path alone, in the where language's form (Labels.tier, containers.*.image,
// containers.?name=main.image).
func ParsePath(src string) ([]Segment, error) {
	if len(src) > maxExprLength {
		return nil, &SyntaxError{Pos: 1, Msg: fmt.Sprintf("the path is longer than %d characters", maxExprLength)}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	segs, err := p.path()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, &SyntaxError{Pos: t.pos, Msg: "expected the end of the path, found " + t.describe()}
	}
	return segs, nil
}

// columnDataPath is the SQL/JSON path yielding the values a data column reads from a DataColumn (an
// array of {ResourceType, ResourceName, Value}).
func columnDataPath(path, resourceType string) (string, error) {
	segs, err := ParsePath(path)
	if err != nil {
		return "", err
	}
	base := "$[*]"
	if resourceType != "" {
		base += fmt.Sprintf(" ? (@.ResourceType == %s)", jsonString(resourceType))
	}
	var b strings.Builder
	b.WriteString(base + ".Value")
	if err := writeDataSegments(&b, segs); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Values computes the columns of one item: item is its Extended form (as JSON), data its data columns'
// values (each a JSON array, in order). A path through a * or over several resources yields several
// values; one that finds nothing, or null, yields none.
func (cv *CompiledView) Values(item map[string]json.RawMessage, data []json.RawMessage) []ColumnValue {
	out := []ColumnValue{}
	objects := map[string]map[string]json.RawMessage{} // the item's fields, each decoded once for all columns
	for _, c := range cv.columns {
		var found []json.RawMessage
		switch {
		case c.data >= 0:
			if c.data < len(data) {
				_ = json.Unmarshal(data[c.data], &found)
			}
		default:
			obj, ok := objects[c.field]
			if !ok {
				_ = json.Unmarshal(item[c.field], &obj) // null or a list (an included list) leaves obj nil
				objects[c.field] = obj
			}
			if obj != nil {
				found = walk(obj[c.path[0].Name], c.path[1:])
			} else {
				found = walk(item[c.field], c.path)
			}
		}
		for _, v := range found {
			if text, ok := columnText(v); ok {
				out = append(out, ColumnValue{Name: c.name, Value: text})
			}
		}
	}
	return out
}

// walk follows path from a JSON value: names step into objects (or index lists), * fans out over a
// list's elements or an object's values (by key order), ?Key=value keeps the list elements whose Key is
// value.
func walk(v json.RawMessage, path []Segment) []json.RawMessage {
	cur := []json.RawMessage{v}
	for _, seg := range path {
		var next []json.RawMessage
		for _, c := range cur {
			next = append(next, step(c, seg)...)
		}
		cur = next
	}
	return cur
}

func step(v json.RawMessage, seg Segment) []json.RawMessage {
	v = json.RawMessage(strings.TrimSpace(string(v)))
	if len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return nil
		}
		if seg.Star {
			keys := slices.Sorted(maps.Keys(obj))
			out := make([]json.RawMessage, len(keys))
			for i, k := range keys {
				out[i] = obj[k]
			}
			return out
		}
		if seg.Match != nil {
			return nil
		}
		if f, ok := obj[seg.Name]; ok {
			return []json.RawMessage{f}
		}
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil {
			return nil
		}
		switch {
		case seg.Star:
			return list
		case seg.Match != nil:
			var out []json.RawMessage
			want, _ := matchValue(seg.Match.Value)
			for _, el := range list {
				var obj map[string]json.RawMessage
				if json.Unmarshal(el, &obj) == nil && jsonEqual(obj[seg.Match.Key], json.RawMessage(want)) {
					out = append(out, el)
				}
			}
			return out
		case !seg.Quoted && isIndex(seg.Name):
			if i, _ := strconv.Atoi(seg.Name); i < len(list) {
				return []json.RawMessage{list[i]}
			}
		}
	}
	return nil
}

func jsonEqual(a, b json.RawMessage) bool {
	if a == nil {
		return false
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// columnText is a value as a column shows it: a string as it is, null as nothing, anything else as
// compact JSON.
func columnText(v json.RawMessage) (string, bool) {
	t := strings.TrimSpace(string(v))
	switch {
	case t == "" || t == "null":
		return "", false
	case t[0] == '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s, true
		}
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "", false
	}
	compact, _ := json.Marshal(x)
	return string(compact), true
}

// applyView puts the View view= names in force on plan p of entity e: it must be of e, and its Filter (if
// any) replaces filter=, which cannot be given with it.
func (q Query) applyView(e *Entity, p *plan) error {
	def := q.Params.ViewDefinition
	if def == nil {
		return apierr.Validation(fmt.Sprintf("view: no View %q in your organization", q.Params.View),
			apierr.Item{Item: "view", Description: "no such View"})
	}
	if def.Of != e.Name {
		return apierr.Validation(fmt.Sprintf("view: View %s is of %s, not %s", def.ID, def.Of, e.Name),
			apierr.Item{Item: "view", Description: "a View of " + def.Of})
	}
	cv, err := CompileView(e, *def)
	if err != nil {
		// Checked when the View was written; a registry change since can still refuse it.
		return apierr.Validation(fmt.Sprintf("view: View %s no longer applies: %v", def.ID, err),
			apierr.Item{Item: "view", Description: "no longer applies"})
	}
	if def.Filter != nil {
		if p.filter != nil {
			return apierr.Validation(fmt.Sprintf("view: View %s has its own Filter; it cannot be combined with filter=", def.ID),
				apierr.Item{Item: "view", Description: "a View with a Filter and filter="})
		}
		p.filter = def.Filter
	}
	p.view = cv
	return nil
}
