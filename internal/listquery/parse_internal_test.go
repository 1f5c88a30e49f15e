package listquery

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseTree: what the parser makes of the language's forms (operators normalized, keywords in any
// case, string escapes, positions counted in characters).
func TestParseTree(t *testing.T) {
	t.Parallel()
	tests := []struct {
		where string
		want  []Cond
	}{
		{`Slug = 'a'`, []Cond{{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "Slug"}}}, Op: "=",
			Right: &Operand{Pos: 8, Lit: &Literal{Pos: 8, Kind: LitString, Str: "a"}}}}},
		{`Slug <> 'it''s'`, []Cond{{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "Slug"}}}, Op: "!=",
			Right: &Operand{Pos: 9, Lit: &Literal{Pos: 9, Kind: LitString, Str: "it's"}}}}},
		{`slug not like 'a%' and Count in (1, -2)`, []Cond{
			{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "slug"}}}, Op: "NOT LIKE",
				Right: &Operand{Pos: 15, Lit: &Literal{Pos: 15, Kind: LitString, Str: "a%"}}},
			{Pos: 24, Left: Operand{Pos: 24, Path: []Segment{{Pos: 24, Name: "Count"}}}, Op: "IN",
				List: []Literal{{Pos: 34, Kind: LitInt, Int: 1}, {Pos: 37, Kind: LitInt, Int: -2}}},
		}},
		{`Labels.'a.b' IS NOT NULL`, []Cond{{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "Labels"}, {Pos: 8, Name: "a.b", Quoted: true}}},
			Op: "IS NOT NULL"}}},
		{`Enabled IS NOT TRUE`, []Cond{{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "Enabled"}}}, Truth: "IS NOT TRUE"}}},
		{`(Slug = 'a') is false`, []Cond{{Pos: 2, Left: Operand{Pos: 2, Path: []Segment{{Pos: 2, Name: "Slug"}}}, Op: "=",
			Right: &Operand{Pos: 9, Lit: &Literal{Pos: 9, Kind: LitString, Str: "a"}}, Truth: "IS FALSE"}}},
		{`LEN(Tags) >= 2`, []Cond{{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 5, Name: "Tags"}}, Len: true}, Op: ">=",
			Right: &Operand{Pos: 14, Lit: &Literal{Pos: 14, Kind: LitInt, Int: 2}}}}},
		{`c.?name=main.image ~* 'x'`, []Cond{{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "c"},
			{Pos: 3, Match: &Match{Key: "name", Value: Literal{Pos: 9, Kind: LitString, Str: "main"}}}, {Pos: 14, Name: "image"}}},
			Op: "~*", Right: &Operand{Pos: 23, Lit: &Literal{Pos: 23, Kind: LitString, Str: "x"}}}}},
		{`a.*.b.0 = TRUE`, []Cond{{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "a"}, {Pos: 3, Star: true}, {Pos: 5, Name: "b"}, {Pos: 7, Name: "0"}}},
			Op: "=", Right: &Operand{Pos: 11, Lit: &Literal{Pos: 11, Kind: LitBool, Bool: true}}}}},
		// Positions count characters, not bytes.
		{`Slug = 'é' AND Count = 1`, []Cond{
			{Pos: 1, Left: Operand{Pos: 1, Path: []Segment{{Pos: 1, Name: "Slug"}}}, Op: "=", Right: &Operand{Pos: 8, Lit: &Literal{Pos: 8, Kind: LitString, Str: "é"}}},
			{Pos: 16, Left: Operand{Pos: 16, Path: []Segment{{Pos: 16, Name: "Count"}}}, Op: "=", Right: &Operand{Pos: 24, Lit: &Literal{Pos: 24, Kind: LitInt, Int: 1}}},
		}},
	}
	for _, tt := range tests {
		expr, err := Parse(tt.where)
		require.NoError(t, err, tt.where)
		require.Equal(t, tt.want, expr.Conds, tt.where)
	}
}

// TestParseErrors: every refusal of the parser names the 1-based character position of the token at
// fault and says what was expected there.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	longIn := "Count IN (" + strings.Repeat("1,", 1000) + "1)"
	tests := []struct {
		where string
		pos   int
		msg   string
	}{
		{`Slug = 'a' OR Slug = 'b'`, 12, "OR is not supported"},
		{`Slug NOT = 'a'`, 10, "expected LIKE, ILIKE or IN after NOT"},
		{`Enabled IS MAYBE`, 12, "expected TRUE or FALSE after IS"},
		{`(Enabled IS TRUE) IS TRUE`, 2, "tested with IS TRUE/FALSE only once"},
		{`(Slug = 'a'`, 12, "expected ')'"},
		{`Slug IN 'a'`, 9, "'(' to open the IN list"},
		{`Slug IN ('a' 'b')`, 14, "expected ',' or ')' in the IN list"},
		{`Slug IN ('a', Slug)`, 15, "expected a literal in the IN list"},
		{longIn, 2011, "at most 1000 values"},
		{`LEN(Tags > 1`, 10, "')' to close LEN("},
		{`Labels.( = 'a'`, 8, "expected a name, index or * after '.'"},
		{`a.< = 'a'`, 3, "expected a name, index, * or ?Key=value after '.'"},
		{`a.?(x) = 'a'`, 4, "expected a field name after ?"},
		{`a.?k 'v' = 'a'`, 6, "expected = in ?k=value"},
		{`a.?k=(.b = 'a'`, 6, "expected a value in ?k=value"},
		{`Slug = 'a' Count = 1`, 12, "expected AND or the end of the expression"},
		{`Slug = ;`, 8, "unexpected character ';'"},
		{`Slug = 'é' AND Count = "x"`, 24, "unexpected character '\"'"},
		{`Count = 9223372036854775808`, 9, "integer out of range"},
		{`Slug = 'a' AND`, 15, "expected an attribute name, found the end of the expression"},
		{strings.Repeat("x", maxExprLength+1), 1, "longer than 8192 characters"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.where)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%.40s: %v", tt.where, err)
		require.Equal(t, tt.pos, se.Pos, "%.40s: %s", tt.where, se.Msg)
		require.Contains(t, se.Msg, tt.msg, tt.where)
		require.True(t, strings.HasPrefix(se.Error(), "at position "), se.Error())
	}
	_, err := Parse(`Count = 9223372036854775807 AND Count = -9223372036854775808`)
	require.NoError(t, err, "the int64 range is accepted")
	_, err = Parse(strings.Repeat(" ", maxExprLength-len("Slug = 'a'")) + "Slug = 'a'")
	require.NoError(t, err, "an expression of the maximum length is accepted")
}
