package listquery

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hubd/hubd/internal/apierr"
)

// ViewLimits bound what a View's data columns read into one list page, so that a View of broad paths
// over large configuration data costs a bounded answer. Zero fields take the defaults below.
type ViewLimits struct {
	// CellValues is the most values one data column may yield for one item (the database stops selecting
	// past it); more is 400 Validation naming the column and the item.
	CellValues int
	// CellBytes bounds one data column's values for one item, as the JSON text the database sends; more
	// is 400 Validation naming the column and the item.
	CellBytes int
	// PageBytes bounds the data columns' values of one page, counted as the ViewColumns entries they make
	// (viewBudget.add): the page ends before the item that would pass it, with a continue token; an item
	// passing it alone is 400 Validation.
	PageBytes int
}

// The defaults of ViewLimits: far more than a table's cell shows, small enough that a page of the
// largest cells stays a few megabytes.
const (
	DefaultViewCellValues = 1000
	DefaultViewCellBytes  = 256 << 10
	DefaultViewPageBytes  = 8 << 20
)

// WithDefaults fills the zero (or negative) fields with the defaults.
func (l ViewLimits) WithDefaults() ViewLimits {
	l.CellValues = cmp.Or(max(l.CellValues, 0), DefaultViewCellValues)
	l.CellBytes = cmp.Or(max(l.CellBytes, 0), DefaultViewCellBytes)
	l.PageBytes = cmp.Or(max(l.PageBytes, 0), DefaultViewPageBytes)
	return l
}

// The values a data column's cell holds instead of its values when they pass a limit (the values
// themselves are JSON arrays).
const (
	overValues = `"values"`
	overBytes  = `"bytes"`
)

// dataColumnSQL selects the values of a data column over column: at most limits.CellValues+1 of them (one
// more tells that there are more), as a JSON array, or overValues or overBytes in its place when they pass
// limits.
func dataColumnSQL(column, path string, limits ViewLimits, b *binder) string {
	return fmt.Sprintf(`(SELECT CASE WHEN jsonb_array_length(a) > %s THEN '%s'::jsonb WHEN octet_length(a::text) > %s THEN '%s'::jsonb ELSE a END`+
		` FROM (SELECT COALESCE(jsonb_agg(v), '[]') AS a FROM (SELECT v FROM jsonb_path_query(%s, %s::jsonpath) AS v LIMIT %s) s) t)`,
		b.bind(limits.CellValues), overValues, b.bind(limits.CellBytes), overBytes, column, b.bind(path), b.bind(limits.CellValues+1))
}

// viewBudget checks the data columns' values of the rows of a page as they are read against limits.
type viewBudget struct {
	limits ViewLimits
	// names are the data columns' Names, each written with every value of its column.
	names []string
	used  int
}

// viewOverflow is a row whose data columns pass a limit: the row's index in the page, the column's index
// among the data columns (-1 for the page budget), and the limit's marker.
type viewOverflow struct {
	row, column int
	over        string
}

// entryBytes is what a ViewColumns entry adds to its value and its column's Name: {"Name":"","Value":""},
const entryBytes = 23

// add counts the values of row i, reporting the limit they pass, if any. A value costs what the answer
// writes for it: its JSON text, its column's Name and the entry around them.
func (v *viewBudget) add(i int, values []json.RawMessage) *viewOverflow {
	size := 0
	for c, val := range values {
		if len(val) > 0 && val[0] == '"' {
			return &viewOverflow{row: i, column: c, over: string(val)}
		}
		size += len(val) + arrayLength(val)*(len(v.names[c])+entryBytes)
	}
	if v.used+size > v.limits.PageBytes {
		return &viewOverflow{row: i, column: -1}
	}
	v.used += size
	return nil
}

// arrayLength counts the elements of a JSON array's text without decoding it.
func arrayLength(text json.RawMessage) int {
	n, depth, inString, escaped, empty := 0, 0, false, false, true
	for _, c := range text {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 1:
			n++
		}
		if depth >= 1 && c != '[' && c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			empty = false
		}
	}
	if empty {
		return 0
	}
	return n + 1
}

// overflowError is the refusal of a page whose item id passes a View limit.
func (q Query) overflowError(p *plan, o *viewOverflow, id string) error {
	view := "View " + q.Params.ViewDefinition.ID.String()
	var msg string
	switch o.over {
	case overValues:
		msg = fmt.Sprintf("view: column %q of %s selects more than %d values of %s %s (the limit of values per column and item); narrow its DataPath",
			p.view.dataColumnNames()[o.column], view, p.viewLimits.CellValues, q.Entity.Name, id)
	case overBytes:
		msg = fmt.Sprintf("view: column %q of %s selects more than %d bytes of %s %s (the limit of bytes per column and item); narrow its DataPath",
			p.view.dataColumnNames()[o.column], view, p.viewLimits.CellBytes, q.Entity.Name, id)
	default:
		msg = fmt.Sprintf("view: the data columns of %s select more than %d bytes of %s %s (the limit of bytes per page); narrow their DataPaths",
			view, p.viewLimits.PageBytes, q.Entity.Name, id)
	}
	return apierr.Validation(msg, apierr.Item{Item: "view", Description: "over a limit of View data"}).WithEntity(q.Entity.Name, id, "")
}

// keyID is the ID in a row's keyset (order_by always holds the ID), as text.
func keyID(p *plan, e *Entity, keyset json.RawMessage) string {
	var keys []json.RawMessage
	if json.Unmarshal(keyset, &keys) != nil {
		return ""
	}
	for i, o := range p.order {
		if o.attr.Name == e.ID && i < len(keys) {
			var id string
			if json.Unmarshal(keys[i], &id) == nil {
				return id
			}
			return strings.Trim(string(keys[i]), `"`)
		}
	}
	return ""
}

// dataColumnNames are the Names of the data columns, in their order.
func (cv *CompiledView) dataColumnNames() []string {
	out := make([]string, len(cv.dataPaths))
	for _, c := range cv.columns {
		if c.data >= 0 {
			out[c.data] = c.name
		}
	}
	return out
}
