package listquery

import (
	"fmt"
	"strconv"
	"strings"
)

// SyntaxError is a where expression that cannot be parsed or compiled, with the 1-based position of
// the offending token.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at position %d: %s", e.Pos, e.Msg) }

// Expr is a parsed where expression: conditions joined by AND.
type Expr struct {
	Conds []Cond
}

// Cond is one condition.
type Cond struct {
	Pos   int
	Left  Operand
	Op    string    // =, !=, <, >, <=, >=, LIKE, NOT LIKE, ILIKE, NOT ILIKE, ~~, !~~, ~, ~*, !~, !~*, ?, IN, NOT IN, IS NULL, IS NOT NULL, or "" for a bare boolean operand
	Right *Operand  // the compared operand (nil for IN lists, IS [NOT] NULL and bare operands)
	List  []Literal // for IN and NOT IN
	Truth string    // "", IS TRUE, IS NOT TRUE, IS FALSE, IS NOT FALSE
}

// Operand is an attribute path (possibly inside LEN()) or a literal.
type Operand struct {
	Pos  int
	Path []Segment
	Len  bool
	Lit  *Literal
}

// Segment is one step of an attribute path: a name (attribute or map key), an index, *, or
// ?Key=value (the elements of a list that are objects whose Key is value).
type Segment struct {
	Pos    int
	Name   string
	Star   bool
	Quoted bool
	Match  *Match
}

// Match selects list elements by one field.
type Match struct {
	Key   string
	Value Literal
}

// LiteralKind tells literals apart.
type LiteralKind int

// Literal kinds: quoted strings (also UUIDs and times), integers, booleans.
const (
	LitString LiteralKind = iota
	LitInt
	LitBool
)

// Literal is a constant of the expression.
type Literal struct {
	Pos  int
	Kind LiteralKind
	Str  string
	Int  int64
	Bool bool
}

// maxExprLength bounds what is parsed, so a pathological expression cannot cost much.
const maxExprLength = 8192

// Parse parses a where expression.
func Parse(src string) (*Expr, error) {
	if len(src) > maxExprLength {
		return nil, &SyntaxError{Pos: 1, Msg: fmt.Sprintf("the expression is longer than %d characters", maxExprLength)}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	expr := &Expr{}
	for {
		c, err := p.cond()
		if err != nil {
			return nil, err
		}
		expr.Conds = append(expr.Conds, c)
		if p.keyword("AND") {
			continue
		}
		if t := p.peek(); t.kind != tokEOF {
			if p.isKeyword(t, "OR") {
				return nil, &SyntaxError{Pos: t.pos, Msg: "only AND joins conditions; OR is not supported"}
			}
			return nil, &SyntaxError{Pos: t.pos, Msg: "expected AND or the end of the expression, found " + t.describe()}
		}
		return expr, nil
	}
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) isKeyword(t token, kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

// keyword consumes the keyword kw if it is next.
func (p *parser) keyword(kw string) bool {
	if p.isKeyword(p.peek(), kw) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(kind tokenKind, what string) (token, error) {
	t := p.next()
	if t.kind != kind {
		return t, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("expected %s, found %s", what, t.describe())}
	}
	return t, nil
}

// cond parses: operand op operand | operand [NOT] IN (...) | operand IS [NOT] NULL, each optionally
// followed by IS [NOT] TRUE|FALSE; a parenthesized condition may be tested the same way.
func (p *parser) cond() (Cond, error) {
	start := p.peek()
	if start.kind == tokLParen {
		p.next()
		c, err := p.cond()
		if err != nil {
			return c, err
		}
		if _, err := p.expect(tokRParen, "')'"); err != nil {
			return c, err
		}
		if c.Truth != "" {
			return c, &SyntaxError{Pos: c.Pos, Msg: "a condition can be tested with IS TRUE/FALSE only once"}
		}
		truth, err := p.truth()
		c.Truth = truth
		return c, err
	}
	left, err := p.operand()
	if err != nil {
		return Cond{}, err
	}
	c := Cond{Pos: start.pos, Left: left}
	t := p.peek()
	switch {
	case t.kind == tokOp:
		p.next()
		c.Op = t.text
		if c.Op == "<>" {
			c.Op = "!="
		}
	case p.isKeyword(t, "LIKE"), p.isKeyword(t, "ILIKE"):
		p.next()
		c.Op = strings.ToUpper(t.text)
	case p.isKeyword(t, "IN"):
		p.next()
		c.Op = "IN"
	case p.isKeyword(t, "NOT"):
		p.next()
		n := p.next()
		switch {
		case p.isKeyword(n, "LIKE"), p.isKeyword(n, "ILIKE"), p.isKeyword(n, "IN"):
			c.Op = "NOT " + strings.ToUpper(n.text)
		default:
			return c, &SyntaxError{Pos: n.pos, Msg: "expected LIKE, ILIKE or IN after NOT, found " + n.describe()}
		}
	case p.isKeyword(t, "IS"):
		// IS [NOT] NULL, or a bare boolean operand tested with IS [NOT] TRUE/FALSE.
		save := p.i
		p.next()
		not := p.keyword("NOT")
		if p.keyword("NULL") {
			c.Op = "IS NULL"
			if not {
				c.Op = "IS NOT NULL"
			}
			truth, err := p.truth()
			c.Truth = truth
			return c, err
		}
		p.i = save
		truth, err := p.truth()
		c.Truth = truth
		return c, err
	default:
		return c, &SyntaxError{Pos: t.pos, Msg: "expected an operator (=, !=, <, >, <=, >=, LIKE, ILIKE, ~~, ~, ?, IN, IS ...), found " + t.describe()}
	}
	if c.Op == "IN" || c.Op == "NOT IN" {
		list, err := p.list()
		if err != nil {
			return c, err
		}
		c.List = list
	} else {
		right, err := p.operand()
		if err != nil {
			return c, err
		}
		c.Right = &right
	}
	truth, err := p.truth()
	c.Truth = truth
	return c, err
}

// truth parses an optional IS [NOT] TRUE|FALSE.
func (p *parser) truth() (string, error) {
	if !p.isKeyword(p.peek(), "IS") {
		return "", nil
	}
	p.next()
	not := p.keyword("NOT")
	t := p.next()
	var v string
	switch {
	case p.isKeyword(t, "TRUE"):
		v = "TRUE"
	case p.isKeyword(t, "FALSE"):
		v = "FALSE"
	default:
		return "", &SyntaxError{Pos: t.pos, Msg: "expected TRUE or FALSE after IS, found " + t.describe()}
	}
	if not {
		return "IS NOT " + v, nil
	}
	return "IS " + v, nil
}

func (p *parser) list() ([]Literal, error) {
	if _, err := p.expect(tokLParen, "'(' to open the IN list"); err != nil {
		return nil, err
	}
	var out []Literal
	for {
		t := p.peek()
		lit, ok, err := p.literal()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &SyntaxError{Pos: t.pos, Msg: "expected a literal in the IN list, found " + t.describe()}
		}
		out = append(out, lit)
		if len(out) > 1000 {
			return nil, &SyntaxError{Pos: t.pos, Msg: "an IN list holds at most 1000 values"}
		}
		sep := p.next()
		if sep.kind == tokRParen {
			return out, nil
		}
		if sep.kind != tokComma {
			return nil, &SyntaxError{Pos: sep.pos, Msg: "expected ',' or ')' in the IN list, found " + sep.describe()}
		}
	}
}

// literal parses a string, integer or boolean if one is next.
func (p *parser) literal() (Literal, bool, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.next()
		return Literal{Pos: t.pos, Kind: LitString, Str: t.text}, true, nil
	case t.kind == tokNumber:
		p.next()
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return Literal{}, false, &SyntaxError{Pos: t.pos, Msg: "integer out of range: " + t.text}
		}
		return Literal{Pos: t.pos, Kind: LitInt, Int: n}, true, nil
	case p.isKeyword(t, "TRUE"), p.isKeyword(t, "FALSE"):
		p.next()
		return Literal{Pos: t.pos, Kind: LitBool, Bool: strings.EqualFold(t.text, "TRUE")}, true, nil
	}
	return Literal{}, false, nil
}

// operand parses a literal, LEN(path) or an attribute path.
func (p *parser) operand() (Operand, error) {
	t := p.peek()
	lit, ok, err := p.literal()
	if err != nil {
		return Operand{}, err
	}
	if ok {
		return Operand{Pos: t.pos, Lit: &lit}, nil
	}
	if p.isKeyword(t, "LEN") && p.toks[p.i+1].kind == tokLParen {
		p.next()
		p.next()
		path, err := p.path()
		if err != nil {
			return Operand{}, err
		}
		if _, err := p.expect(tokRParen, "')' to close LEN("); err != nil {
			return Operand{}, err
		}
		return Operand{Pos: t.pos, Path: path, Len: true}, nil
	}
	path, err := p.path()
	if err != nil {
		return Operand{}, err
	}
	return Operand{Pos: t.pos, Path: path}, nil
}

// path parses Attribute(.segment)*, where a segment is a name, an integer index, *, or a quoted key.
func (p *parser) path() ([]Segment, error) {
	t := p.next()
	if t.kind != tokIdent {
		return nil, &SyntaxError{Pos: t.pos, Msg: "expected an attribute name, found " + t.describe()}
	}
	segs := []Segment{{Pos: t.pos, Name: t.text}}
	for p.peek().kind == tokDot {
		p.next()
		s := p.next()
		switch s.kind {
		case tokIdent, tokNumber:
			segs = append(segs, Segment{Pos: s.pos, Name: s.text})
		case tokString:
			segs = append(segs, Segment{Pos: s.pos, Name: s.text, Quoted: true})
		case tokStar:
			segs = append(segs, Segment{Pos: s.pos, Star: true})
		case tokOp:
			if s.text != "?" {
				return nil, &SyntaxError{Pos: s.pos, Msg: "expected a name, index, * or ?Key=value after '.', found " + s.describe()}
			}
			key := p.next()
			if key.kind != tokIdent && key.kind != tokString {
				return nil, &SyntaxError{Pos: key.pos, Msg: "expected a field name after ?, found " + key.describe()}
			}
			if eq := p.next(); eq.kind != tokOp || eq.text != "=" {
				return nil, &SyntaxError{Pos: eq.pos, Msg: "expected = in ?" + key.text + "=value, found " + eq.describe()}
			}
			vt := p.peek()
			lit, ok, err := p.literal()
			if err != nil {
				return nil, err
			}
			if !ok {
				if vt.kind != tokIdent {
					return nil, &SyntaxError{Pos: vt.pos, Msg: "expected a value in ?" + key.text + "=value, found " + vt.describe()}
				}
				// A bare word is a string: containers.?name=main.image
				p.next()
				lit = Literal{Pos: vt.pos, Kind: LitString, Str: vt.text}
			}
			segs = append(segs, Segment{Pos: s.pos, Match: &Match{Key: key.text, Value: lit}})
		default:
			return nil, &SyntaxError{Pos: s.pos, Msg: "expected a name, index or * after '.', found " + s.describe()}
		}
	}
	return segs, nil
}
