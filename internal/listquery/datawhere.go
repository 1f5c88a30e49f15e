package listquery

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// DataCondition compiles where_data (conditions on configuration content) and resource_type into a
// condition on a jsonb projection column: an array of {ResourceType, ResourceName, Value}. Each
// condition becomes one SQL/JSON path, bound as a parameter and tested with @? (which the column's GIN
// jsonb_path_ops index serves for equality); client text is escaped inside the path as JSON string
// literals and never reaches SQL text.
func DataCondition(column, whereData, resourceType string) (func(bind func(any) string) string, error) {
	base := "$[*]"
	if resourceType != "" {
		base += fmt.Sprintf(" ? (@.ResourceType == %s)", jsonString(resourceType))
	}
	base += ".Value"
	var paths []string
	if strings.TrimSpace(whereData) == "" {
		if resourceType == "" {
			return nil, nil
		}
		paths = append(paths, "$[*] ? (@.ResourceType == "+jsonString(resourceType)+")")
	} else {
		expr, err := Parse(whereData)
		if err != nil {
			return nil, paramError("where_data", err)
		}
		for _, c := range expr.Conds {
			p, err := dataPath(base, c)
			if err != nil {
				return nil, paramError("where_data", err)
			}
			paths = append(paths, p)
		}
	}
	return func(bind func(any) string) string {
		parts := make([]string, len(paths))
		for i, p := range paths {
			parts[i] = fmt.Sprintf("(%s @? %s::jsonpath)", column, bind(p))
		}
		return strings.Join(parts, " AND ")
	}, nil
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// dataPath turns one condition into a path that yields an item exactly when the condition holds for
// some value at the condition's path.
func dataPath(base string, c Cond) (string, error) {
	if c.Left.Lit != nil || c.Left.Len {
		return "", &SyntaxError{Pos: c.Left.Pos, Msg: "a where_data condition starts with a path into the data"}
	}
	if c.Truth != "" {
		return "", &SyntaxError{Pos: c.Pos, Msg: "IS TRUE/FALSE does not apply to where_data"}
	}
	var b strings.Builder
	b.WriteString(base)
	if err := writeDataSegments(&b, c.Left.Path); err != nil {
		return "", err
	}
	cond, err := dataTest(c)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, " ? (%s)", cond)
	return b.String(), nil
}

// writeDataSegments writes the SQL/JSON path steps of a data path: * is every element of a list, ?Key=value
// the elements whose Key is value, a number an index, any other name an object member (as a JSON string, so
// client text stays a literal).
func writeDataSegments(b *strings.Builder, path []Segment) error {
	for _, seg := range path {
		switch {
		case seg.Star:
			b.WriteString("[*]")
		case seg.Match != nil:
			v, err := jsonLiteral(seg.Match.Value)
			if err != nil {
				return err
			}
			fmt.Fprintf(b, "[*] ? (@.%s == %s)", jsonString(seg.Match.Key), v)
		case !seg.Quoted && isIndex(seg.Name):
			fmt.Fprintf(b, "[%s]", seg.Name)
		default:
			b.WriteString("." + jsonString(seg.Name))
		}
	}
	return nil
}

func isIndex(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// dataTest is the filter applied to the values at the path.
func dataTest(c Cond) (string, error) {
	switch c.Op {
	case "IN", "NOT IN":
		ors := make([]string, len(c.List))
		for i, l := range c.List {
			v, err := jsonLiteral(l)
			if err != nil {
				return "", err
			}
			ors[i] = "@ == " + v
		}
		t := "(" + strings.Join(ors, " || ") + ")"
		if c.Op == "NOT IN" {
			t = "!" + t
		}
		return t, nil
	case "", "IS NULL", "IS NOT NULL", "?":
		return "", &SyntaxError{Pos: c.Pos, Msg: "where_data compares a path with a literal (=, !=, <, >, <=, >=, LIKE, ILIKE, ~~, !~~, ~, ~*, !~, !~*, IN, NOT IN)"}
	}
	if c.Right == nil || c.Right.Lit == nil {
		return "", &SyntaxError{Pos: c.Pos, Msg: "where_data compares a path with a literal"}
	}
	lit := *c.Right.Lit
	switch c.Op {
	case "=", "!=", "<", ">", "<=", ">=":
		v, err := jsonLiteral(lit)
		if err != nil {
			return "", err
		}
		op := c.Op
		if op == "=" {
			op = "=="
		}
		return "@ " + op + " " + v, nil
	}
	if lit.Kind != LitString {
		return "", &SyntaxError{Pos: lit.Pos, Msg: c.Op + " takes a quoted pattern"}
	}
	var pattern, flags string
	negate := false
	switch c.Op {
	case "LIKE", "~~":
		pattern = likeToRegex(lit.Str)
	case "NOT LIKE", "!~~":
		pattern, negate = likeToRegex(lit.Str), true
	case "ILIKE":
		pattern, flags = likeToRegex(lit.Str), "i"
	case "NOT ILIKE":
		pattern, flags, negate = likeToRegex(lit.Str), "i", true
	case "~":
		pattern = lit.Str
	case "~*":
		pattern, flags = lit.Str, "i"
	case "!~":
		pattern, negate = lit.Str, true
	case "!~*":
		pattern, flags, negate = lit.Str, "i", true
	default:
		return "", &SyntaxError{Pos: c.Pos, Msg: c.Op + " does not apply to where_data"}
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return "", &SyntaxError{Pos: lit.Pos, Msg: "invalid regular expression: " + err.Error()}
	}
	t := "@ like_regex " + jsonString(pattern)
	if flags != "" {
		t += " flag " + jsonString(flags)
	}
	if negate {
		t = "!(" + t + ")"
	}
	return t, nil
}

func jsonLiteral(l Literal) (string, error) {
	switch l.Kind {
	case LitInt:
		return fmt.Sprint(l.Int), nil
	case LitBool:
		return fmt.Sprint(l.Bool), nil
	}
	return jsonString(l.Str), nil
}

// likeToRegex turns a LIKE pattern (% any run, _ any one character) into an anchored regular expression.
func likeToRegex(p string) string {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range p {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return b.String()
}
