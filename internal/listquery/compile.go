package listquery

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// binder collects bind arguments; SQL refers to them only as $n placeholders.
type binder struct{ args []any }

func (b *binder) bind(v any) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("$%d", len(b.args))
}

// operatorsFor lists the comparison operators each type takes.
var operatorsFor = map[Type][]string{
	String: {"=", "!=", "<", ">", "<=", ">=", "LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE", "~~", "!~~", "~", "~*", "!~", "!~*", "IN", "NOT IN"},
	Int:    {"=", "!=", "<", ">", "<=", ">=", "IN", "NOT IN"},
	Time:   {"=", "!=", "<", ">", "<=", ">=", "IN", "NOT IN"},
	// UUIDs compare by = and !=; IN is how a where names several entities by ID.
	UUID: {"=", "!=", "IN", "NOT IN"},
	Bool: {"=", "!="},
}

// sqlOperator maps the language's operators to PostgreSQL's.
var sqlOperator = map[string]string{
	"=": "=", "!=": "<>", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
	"LIKE": "LIKE", "NOT LIKE": "NOT LIKE", "ILIKE": "ILIKE", "NOT ILIKE": "NOT ILIKE",
	"~~": "LIKE", "!~~": "NOT LIKE", "~": "~", "~*": "~*", "!~": "!~", "!~*": "!~*",
}

var sqlCast = map[Type]string{String: "text", Int: "bigint", UUID: "uuid", Bool: "boolean", Time: "timestamptz"}

// resolved is an operand after resolution: its SQL and type. wrap, when set, turns a condition on it
// into a condition on the row (EXISTS over a list's elements).
type resolved struct {
	sql      string
	typ      Type
	nullable bool
	// mapKey is set for Map.key operands: IS [NOT] NULL tests the key's presence.
	mapColumn, mapKey string
	wrap              func(cond string) string
}

// Compiled is a where expression turned into SQL.
type Compiled struct {
	SQL string
	// Attributes names every attribute the expression uses (select adds them).
	Attributes []string
	// NamesBySlugOrID reports a condition Slug/ID = or IN, or one on HiddenReason: hidden entities it
	// selects are returned without include_hidden.
	NamesBySlugOrID bool
}

// compileWhere compiles expr for entity e, binding its literals with b.
func compileWhere(e *Entity, expr *Expr, b *binder) (*Compiled, error) {
	out := &Compiled{}
	var parts []string
	for _, c := range expr.Conds {
		sql, err := compileCond(e, c, b, out)
		if err != nil {
			return nil, err
		}
		parts = append(parts, sql)
	}
	out.SQL = strings.Join(parts, " AND ")
	return out, nil
}

func compileCond(e *Entity, c Cond, b *binder, out *Compiled) (string, error) {
	if c.Left.Lit != nil {
		return "", &SyntaxError{Pos: c.Left.Pos, Msg: "a condition starts with an attribute name"}
	}
	if c.Op == "?" && len(c.Left.Path) == 1 && !c.Left.Len {
		// Map ? 'key': the key is present (Revision Tags ? '<tag_id>').
		if a := e.Attr(c.Left.Path[0].Name); a != nil && a.Filterable && (a.Type == StringMap || a.Type == BoolMap) {
			if c.Right == nil || c.Right.Lit == nil || c.Right.Lit.Kind != LitString {
				return "", &SyntaxError{Pos: c.Pos, Msg: "? takes a quoted key"}
			}
			out.Attributes = append(out.Attributes, a.Name)
			sql := fmt.Sprintf("(%s ? %s::text)", a.SQL, b.bind(c.Right.Lit.Str))
			if c.Truth != "" {
				sql = fmt.Sprintf("(%s %s)", sql, c.Truth)
			}
			return sql, nil
		}
	}
	left, err := resolve(e, c.Left, b, out)
	if err != nil {
		return "", err
	}
	// Only a plain lookup (Slug or ID = literal, or IN a list) or a condition on HiddenReason itself
	// returns hidden entities without include_hidden; a negated or attribute-to-attribute form does not.
	plain := c.Truth == "" && len(c.Left.Path) == 1 && !c.Left.Len
	switch top := c.Left.Path[0].Name; {
	case plain && (top == e.ID || top == e.Slug) && ((c.Op == "=" && c.Right != nil && c.Right.Lit != nil) || c.Op == "IN"):
		out.NamesBySlugOrID = true
	case plain && e.HiddenReason != "" && top == "HiddenReason" && ((c.Right != nil && c.Right.Lit != nil) || c.Op == "IN"):
		out.NamesBySlugOrID = true
	}
	var sql string
	switch c.Op {
	case "":
		if left.typ != Bool || c.Truth == "" {
			return "", &SyntaxError{Pos: c.Pos, Msg: "expected an operator after " + pathString(c.Left.Path)}
		}
		sql = left.sql
	case "IS NULL", "IS NOT NULL":
		switch {
		case left.mapKey != "":
			sql = fmt.Sprintf("(%s ? %s)", left.mapColumn, left.mapKey)
			if c.Op == "IS NULL" {
				sql = "NOT " + sql
			}
		case left.nullable:
			sql = fmt.Sprintf("(%s %s)", left.sql, c.Op)
		default:
			return "", &SyntaxError{Pos: c.Left.Pos, Msg: pathString(c.Left.Path) + " is never null; IS NULL applies to nullable attributes and map keys"}
		}
	case "?":
		if left.typ != UUIDList && left.typ != StringList {
			return "", &SyntaxError{Pos: c.Pos, Msg: "? tests the elements of a list; " + pathString(c.Left.Path) + " is a " + left.typ.String()}
		}
		elem := String
		if left.typ == UUIDList {
			elem = UUID
		}
		if c.Right == nil || c.Right.Lit == nil {
			return "", &SyntaxError{Pos: c.Pos, Msg: "? takes a literal"}
		}
		v, err := literalValue(*c.Right.Lit, elem)
		if err != nil {
			return "", err
		}
		// Containment, not = ANY: a GIN index on the array column serves @>.
		sql = fmt.Sprintf("(%s @> ARRAY[%s::%s])", left.sql, b.bind(v), sqlCast[elem])
	case "IN", "NOT IN":
		if !allowed(left.typ, c.Op) {
			return "", opError(c, left)
		}
		vals := make([]string, len(c.List))
		for i, lit := range c.List {
			v, err := literalValue(lit, left.typ)
			if err != nil {
				return "", err
			}
			vals[i] = b.bind(v) + "::" + sqlCast[left.typ]
		}
		sql = fmt.Sprintf("(%s %s (%s))", left.sql, c.Op, strings.Join(vals, ", "))
	default:
		if !allowed(left.typ, c.Op) {
			return "", opError(c, left)
		}
		var right string
		if c.Right.Lit != nil {
			v, err := literalValue(*c.Right.Lit, left.typ)
			if err != nil {
				return "", err
			}
			right = b.bind(v) + "::" + sqlCast[left.typ]
		} else {
			r, err := resolve(e, *c.Right, b, out)
			if err != nil {
				return "", err
			}
			if r.wrap != nil || left.wrap != nil {
				return "", &SyntaxError{Pos: c.Right.Pos, Msg: "attributes of list elements are compared to literals"}
			}
			if r.typ != left.typ {
				return "", &SyntaxError{Pos: c.Right.Pos, Msg: fmt.Sprintf("%s is a %s and %s a %s; compare attributes of one type",
					pathString(c.Left.Path), left.typ, pathString(c.Right.Path), r.typ)}
			}
			right = r.sql
		}
		if left.mapKey != "" && c.Op == "=" && c.Right.Lit != nil && c.Truth == "" {
			// Containment uses the map's GIN index. It is false, not null, for an absent key, so a
			// condition tested with IS TRUE/FALSE keeps the null-yielding form.
			sql = fmt.Sprintf("(%s @> jsonb_build_object(%s, %s))", left.mapColumn, left.mapKey, right)
		} else {
			sql = fmt.Sprintf("(%s %s %s)", left.sql, sqlOperator[c.Op], right)
		}
	}
	if left.wrap != nil {
		sql = left.wrap(sql)
	}
	if c.Truth != "" {
		sql = fmt.Sprintf("(%s %s)", sql, c.Truth)
	}
	return sql, nil
}

func allowed(t Type, op string) bool {
	for _, o := range operatorsFor[t] {
		if o == op {
			return true
		}
	}
	return false
}

func opError(c Cond, left resolved) error {
	ops := operatorsFor[left.typ]
	if len(ops) == 0 {
		return &SyntaxError{Pos: c.Pos, Msg: fmt.Sprintf("%s is a %s and cannot be compared with %s", pathString(c.Left.Path), left.typ, c.Op)}
	}
	return &SyntaxError{Pos: c.Pos, Msg: fmt.Sprintf("%s does not apply to %s (a %s); use one of %s",
		c.Op, pathString(c.Left.Path), left.typ, strings.Join(ops, ", "))}
}

// resolve turns an attribute path (or LEN of one) into SQL.
func resolve(e *Entity, op Operand, b *binder, out *Compiled) (resolved, error) {
	if op.Lit != nil {
		return resolved{}, &SyntaxError{Pos: op.Pos, Msg: "expected an attribute"}
	}
	first := op.Path[0]
	a := e.Attr(first.Name)
	if a == nil || !a.Filterable {
		return resolved{}, &SyntaxError{Pos: first.Pos, Msg: fmt.Sprintf("%q is not an attribute %s lists can be filtered by; use one of: %s",
			first.Name, e.Name, e.names(func(a *Attribute) bool { return a.Filterable }))}
	}
	if out != nil {
		out.Attributes = append(out.Attributes, a.Name)
	}
	rest := op.Path[1:]
	var r resolved
	switch a.Type {
	case StringMap, BoolMap:
		if len(rest) != 1 || rest[0].Star {
			return resolved{}, &SyntaxError{Pos: first.Pos, Msg: fmt.Sprintf("%s is a map: name one key, as %s.key", a.Name, a.Name)}
		}
		key := b.bind(rest[0].Name)
		r = resolved{typ: String, nullable: true, mapColumn: a.SQL, mapKey: key + "::text"}
		r.sql = fmt.Sprintf("(%s ->> %s::text)", a.SQL, key)
		if a.Type == BoolMap {
			r.typ = Bool
			r.sql = fmt.Sprintf("(%s -> %s::text)::boolean", a.SQL, key)
		}
	case Object:
		if len(rest) == 0 {
			return resolved{}, &SyntaxError{Pos: first.Pos, Msg: fmt.Sprintf("%s is an object: name one of its fields, as %s.<Field>", a.Name, a.Name)}
		}
		inner, err := resolve(a.Elem, Operand{Pos: op.Pos, Path: rest, Len: op.Len}, b, nil)
		if err != nil {
			return resolved{}, err
		}
		return substitute(inner, a.SQL), nil
	case EntityList:
		if len(rest) > 0 && !rest[0].Quoted && isIndex(rest[0].Name) {
			// List.N.Field: the element at index N.
			if len(rest) == 1 {
				return resolved{}, &SyntaxError{Pos: rest[0].Pos, Msg: fmt.Sprintf("name an attribute of the element, as %s.%s.<Attribute>", a.Name, rest[0].Name)}
			}
			inner, err := resolve(a.Elem, Operand{Pos: op.Pos, Path: rest[1:]}, b, nil)
			if err != nil {
				return resolved{}, err
			}
			idx, _ := strconv.Atoi(rest[0].Name)
			return substitute(inner, fmt.Sprintf("(%s -> %s::int)", a.SQL, b.bind(idx))), nil
		}
		if len(rest) == 0 || (!rest[0].Star && rest[0].Match == nil) {
			return resolved{}, &SyntaxError{Pos: first.Pos, Msg: fmt.Sprintf("%s is a list of entities: filter on their attributes with %s.*.<Attribute>", a.Name, a.Name)}
		}
		if op.Len {
			return resolved{}, &SyntaxError{Pos: op.Pos, Msg: "LEN takes the list itself: LEN(" + a.Name + ")"}
		}
		if len(rest) == 1 {
			return resolved{}, &SyntaxError{Pos: rest[0].Pos, Msg: fmt.Sprintf("name an attribute of the elements after *, as %s.*.<Attribute>", a.Name)}
		}
		inner, err := resolve(a.Elem, Operand{Pos: op.Pos, Path: rest[1:]}, b, nil)
		if err != nil {
			return resolved{}, err
		}
		inner = substitute(inner, "elem.value")
		column := a.SQL
		match := ""
		if m := rest[0].Match; m != nil {
			// ?Key=value: only elements whose Key field is value.
			v, err := matchValue(m.Value)
			if err != nil {
				return resolved{}, err
			}
			match = fmt.Sprintf("(elem.value -> %s::text) = %s::jsonb AND ", b.bind(m.Key), b.bind(v))
		}
		inner.wrap = func(cond string) string {
			return fmt.Sprintf("EXISTS (SELECT 1 FROM jsonb_array_elements(%s) AS elem WHERE %s%s)", column, match, cond)
		}
		return inner, nil
	default:
		if len(rest) > 0 {
			if rest[0].Star || rest[0].Match != nil {
				return resolved{}, &SyntaxError{Pos: rest[0].Pos, Msg: a.Name + " is not a list of entities; * does not apply"}
			}
			return resolved{}, &SyntaxError{Pos: rest[0].Pos, Msg: fmt.Sprintf("%s is a %s and has no member %q", a.Name, a.Type, rest[0].Name)}
		}
		r = resolved{sql: a.SQL, typ: a.Type, nullable: a.Nullable}
	}
	if op.Len {
		switch a.Type {
		case UUIDList, StringList:
			return resolved{sql: fmt.Sprintf("cardinality(%s)", a.SQL), typ: Int}, nil
		case StringMap, BoolMap:
			return resolved{}, &SyntaxError{Pos: op.Pos, Msg: "LEN takes a list, not a map key"}
		}
		return resolved{}, &SyntaxError{Pos: op.Pos, Msg: fmt.Sprintf("LEN takes a list; %s is a %s", a.Name, a.Type)}
	}
	return r, nil
}

// literalValue converts a literal to the Go value bound for type t.
func literalValue(l Literal, t Type) (any, error) {
	bad := func(want string) error {
		return &SyntaxError{Pos: l.Pos, Msg: "expected " + want}
	}
	switch t {
	case String:
		if l.Kind != LitString {
			return nil, bad("a quoted string")
		}
		return l.Str, nil
	case Int:
		if l.Kind != LitInt {
			return nil, bad("an integer (unquoted)")
		}
		return l.Int, nil
	case Bool:
		if l.Kind != LitBool {
			return nil, bad("TRUE or FALSE")
		}
		return l.Bool, nil
	case UUID:
		if l.Kind != LitString {
			return nil, bad("a quoted UUID")
		}
		id, err := uuid.Parse(l.Str)
		if err != nil {
			return nil, bad("a quoted UUID, found '" + l.Str + "'")
		}
		return id, nil
	case Time:
		if l.Kind != LitString {
			return nil, bad("a quoted time such as '2026-01-02T15:04:05Z'")
		}
		ts, err := time.Parse(time.RFC3339Nano, l.Str)
		if err != nil {
			return nil, bad("a quoted time such as '2026-01-02T15:04:05Z', found '" + l.Str + "'")
		}
		return ts, nil
	}
	return nil, bad("a value of a comparable type")
}

func pathString(p []Segment) string {
	parts := make([]string, len(p))
	for i, s := range p {
		if s.Star {
			parts[i] = "*"
		} else {
			parts[i] = s.Name
		}
	}
	return strings.Join(parts, ".")
}

// matchValue is a ?Key=value literal as the JSON it equals.
func matchValue(l Literal) (string, error) {
	switch l.Kind {
	case LitInt:
		return fmt.Sprint(l.Int), nil
	case LitBool:
		return fmt.Sprint(l.Bool), nil
	}
	b, err := json.Marshal(l.Str)
	return string(b), err
}

// substitute puts the element or object expression in place of {e} in a resolved operand, and in the
// conditions it wraps.
func substitute(r resolved, e string) resolved {
	r.sql = strings.ReplaceAll(r.sql, "{e}", e)
	r.mapColumn = strings.ReplaceAll(r.mapColumn, "{e}", e)
	if wrap := r.wrap; wrap != nil {
		r.wrap = func(cond string) string { return strings.ReplaceAll(wrap(cond), "{e}", e) }
	}
	return r
}
