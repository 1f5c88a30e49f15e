package listquery

import (
	"fmt"
	"strings"
	"unicode"
)

// tokenKind classifies the tokens of a where expression.
type tokenKind int

const (
	tokEOF tokenKind = iota
	tokIdent
	tokString
	tokNumber
	tokOp
	tokLParen
	tokRParen
	tokComma
	tokDot
	tokStar
)

type token struct {
	kind tokenKind
	text string // the token as written (strings: unquoted, escapes resolved)
	pos  int    // 1-based character position in the expression
}

func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the expression"
	case tokString:
		return fmt.Sprintf("'%s'", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// operators, longest first so that "!~~" wins over "!~".
var operators = []string{"!~~", "!~*", "<=", ">=", "!=", "<>", "~~", "~*", "!~", "<", ">", "=", "~", "?"}

// punctuation are the tokens of one rune (tokEOF is none of them).
var punctuation = map[rune]tokenKind{'(': tokLParen, ')': tokRParen, ',': tokComma, '.': tokDot, '*': tokStar}

// lex splits a where expression into tokens.
func lex(src string) ([]token, error) {
	var out []token
	runes := []rune(src)
	for i := 0; i < len(runes); {
		r := runes[i]
		pos := i + 1
		switch {
		case unicode.IsSpace(r):
			i++
		case punctuation[r] != tokEOF:
			out = append(out, token{punctuation[r], string(r), pos})
			i++
		case r == '\'':
			var b strings.Builder
			i++
			closed := false
			for i < len(runes) {
				if runes[i] == '\'' {
					if i+1 < len(runes) && runes[i+1] == '\'' { // '' is a quote inside a string
						b.WriteRune('\'')
						i += 2
						continue
					}
					closed = true
					i++
					break
				}
				b.WriteRune(runes[i])
				i++
			}
			if !closed {
				return nil, &SyntaxError{Pos: pos, Msg: "a string literal is not closed (strings use single quotes; write '' for a quote inside one)"}
			}
			out = append(out, token{tokString, b.String(), pos})
		case isDigit(r) || (r == '-' && i+1 < len(runes) && isDigit(runes[i+1])):
			j := i + 1
			for j < len(runes) && isDigit(runes[j]) {
				j++
			}
			out = append(out, token{tokNumber, string(runes[i:j]), pos})
			i = j
		case isIdentStart(r):
			j := i + 1
			for j < len(runes) && isIdentPart(runes[j]) {
				j++
			}
			out = append(out, token{tokIdent, string(runes[i:j]), pos})
			i = j
		default:
			matched := false
			for _, op := range operators {
				if strings.HasPrefix(string(runes[i:]), op) {
					out = append(out, token{tokOp, op, pos})
					i += len([]rune(op))
					matched = true
					break
				}
			}
			if !matched {
				return nil, &SyntaxError{Pos: pos, Msg: fmt.Sprintf("unexpected character %q", r)}
			}
		}
	}
	return append(out, token{tokEOF, "", len(runes) + 1}), nil
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isIdentStart(r rune) bool { return r == '_' || (r < 128 && unicode.IsLetter(r)) }

// isIdentPart allows what map keys (Labels.app-name, Labels.example_com/team) hold besides letters and digits.
func isIdentPart(r rune) bool {
	return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '/')
}
