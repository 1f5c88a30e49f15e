package listquery

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Attributes are the values a where expression is matched against in memory: string, int64 or bool
// per attribute name. Functions' signatures and the resources of configuration data (for WhereResource)
// are matched this way: they are not rows.
type Attributes map[string]any

// Matcher is a where expression checked against Attributes of known types.
type Matcher struct {
	conds []Cond
	types map[string]Type
}

// CompileMatcher parses where for attributes of the given types: names must be known and operators
// fit their type, as in lists.
func CompileMatcher(where string, types map[string]Type) (*Matcher, error) {
	m := &Matcher{types: types}
	if strings.TrimSpace(where) == "" {
		return m, nil
	}
	expr, err := Parse(where)
	if err != nil {
		return nil, err
	}
	for _, c := range expr.Conds {
		if len(c.Left.Path) != 1 || c.Left.Len || c.Truth != "" || c.Op == "" || c.Op == "?" || c.Op == "IS NULL" || c.Op == "IS NOT NULL" {
			return nil, &SyntaxError{Pos: c.Pos, Msg: "here a condition compares one attribute with a literal or an IN list"}
		}
		name := c.Left.Path[0].Name
		typ, ok := types[name]
		if !ok {
			return nil, &SyntaxError{Pos: c.Left.Pos, Msg: fmt.Sprintf("unknown attribute %q; known: %s", name, knownNames(types))}
		}
		if !allowed(typ, c.Op) {
			return nil, &SyntaxError{Pos: c.Pos, Msg: fmt.Sprintf("%s does not take %s", name, c.Op)}
		}
		lits := c.List
		if c.Right != nil {
			if c.Right.Lit == nil {
				return nil, &SyntaxError{Pos: c.Right.Pos, Msg: "compare with a literal"}
			}
			lits = []Literal{*c.Right.Lit}
		}
		for _, l := range lits {
			if literalType(l) != typ {
				return nil, &SyntaxError{Pos: l.Pos, Msg: fmt.Sprintf("%s is compared with a literal of another type", name)}
			}
		}
		switch c.Op {
		case "~", "~*", "!~", "!~*":
			if _, err := regexp.Compile(lits[0].Str); err != nil {
				return nil, &SyntaxError{Pos: lits[0].Pos, Msg: "not a regular expression: " + err.Error()}
			}
		}
		m.conds = append(m.conds, c)
	}
	return m, nil
}

func knownNames(types map[string]Type) string {
	return strings.Join(slices.Sorted(maps.Keys(types)), ", ")
}

func literalType(l Literal) Type {
	switch l.Kind {
	case LitInt:
		return Int
	case LitBool:
		return Bool
	}
	return String
}

// Match reports whether attrs satisfy every condition. An absent attribute satisfies none.
func (m *Matcher) Match(attrs Attributes) bool {
	for _, c := range m.conds {
		v, ok := attrs[c.Left.Path[0].Name]
		if !ok || !holds(c, v) {
			return false
		}
	}
	return true
}

func holds(c Cond, v any) bool {
	value := func(l Literal) any {
		switch l.Kind {
		case LitInt:
			return l.Int
		case LitBool:
			return l.Bool
		}
		return l.Str
	}
	switch c.Op {
	case "IN", "NOT IN":
		in := false
		for _, l := range c.List {
			in = in || value(l) == v
		}
		return in == (c.Op == "IN")
	}
	lit := value(*c.Right.Lit)
	switch c.Op {
	case "=":
		return v == lit
	case "!=":
		return v != lit
	}
	if r, ok := compare(v, lit); ok {
		switch c.Op {
		case "<":
			return r < 0
		case ">":
			return r > 0
		case "<=":
			return r <= 0
		case ">=":
			return r >= 0
		}
	}
	if a, ok := v.(string); ok {
		b := lit.(string)
		switch c.Op {
		case "LIKE", "~~", "NOT LIKE", "!~~":
			ok, _ := regexp.MatchString("(?s)"+likeToRegex(b), a)
			return ok == (c.Op == "LIKE" || c.Op == "~~")
		case "ILIKE", "NOT ILIKE":
			ok, _ := regexp.MatchString("(?is)"+likeToRegex(b), a)
			return ok == (c.Op == "ILIKE")
		case "~", "!~":
			ok, _ := regexp.MatchString(b, a)
			return ok == (c.Op == "~")
		case "~*", "!~*":
			ok, _ := regexp.MatchString("(?i)"+b, a)
			return ok == (c.Op == "~*")
		}
	}
	return false
}

// compare orders two values of one ordered type (integers, strings).
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		return cmp.Compare(x, y), ok
	case string:
		y, ok := b.(string)
		return cmp.Compare(x, y), ok
	}
	return 0, false
}
