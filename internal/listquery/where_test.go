package listquery

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testEntity exercises every attribute type, including an entity list.
var testEntity = Define(&Entity{
	Name: "Thing", From: "thing", Columns: "thing.*", ID: "ThingID", Org: "thing.organization_id", Slug: "Slug",
	HiddenReason: "thing.hidden_reason",
	Attributes: []Attribute{
		{Name: "ThingID", Type: UUID, SQL: "thing.thing_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: String, SQL: "thing.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "Count", Type: Int, SQL: "thing.count", Filterable: true, Orderable: true},
		{Name: "Enabled", Type: Bool, SQL: "thing.enabled", Filterable: true, Orderable: true},
		{Name: "CreatedAt", Type: Time, SQL: "thing.created_at", Filterable: true, Orderable: true},
		{Name: "ParentID", Type: UUID, SQL: "thing.parent_id", Nullable: true, Filterable: true},
		{Name: "Labels", Type: StringMap, SQL: "thing.labels", Filterable: true},
		{Name: "Gates", Type: BoolMap, SQL: "thing.gates", Filterable: true},
		{Name: "Tags", Type: UUIDList, SQL: "thing.tags", Filterable: true},
		{Name: "HiddenReason", Type: String, SQL: "thing.hidden_reason", Filterable: true},
		{Name: "Secret", Type: Opaque},
		{Name: "Invocation", Type: Object, SQL: "thing.invocation", Filterable: true, Elem: &Entity{
			Name: "Invocation", ID: "FunctionName",
			Attributes: []Attribute{
				{Name: "FunctionName", Type: String, SQL: "({e} ->> 'FunctionName')", Filterable: true},
				{Name: "Guards", Type: StringMap, SQL: "({e} -> 'Guards')", Filterable: true},
				{Name: "Arguments", Type: EntityList, SQL: "({e} -> 'Arguments')", Filterable: true, Elem: &Entity{
					Name: "Argument", ID: "Value",
					Attributes: []Attribute{
						{Name: "ParameterName", Type: String, SQL: "({e} ->> 'ParameterName')", Filterable: true},
						{Name: "Value", Type: String, SQL: "({e} ->> 'Value')", Filterable: true},
					},
				}},
			},
		}},
		{Name: "Arguments", Type: EntityList, SQL: "thing.arguments", Filterable: true, Elem: &Entity{
			Name: "Argument", ID: "ParameterName",
			Attributes: []Attribute{
				{Name: "ParameterName", Type: String, SQL: "({e} ->> 'ParameterName')", Filterable: true},
				{Name: "Value", Type: String, SQL: "({e} ->> 'Value')", Filterable: true},
			},
		}},
	},
})

func compile(t *testing.T, where string) (*Compiled, []any, error) {
	t.Helper()
	expr, err := Parse(where)
	if err != nil {
		return nil, nil, err
	}
	b := &binder{}
	c, err := compileWhere(testEntity, expr, b)
	return c, b.args, err
}

func TestCompileOperators(t *testing.T) {
	cases := map[string]string{
		`Slug = 'a'`:                         `(thing.slug = $1::text)`,
		`Slug != 'a'`:                        `(thing.slug <> $1::text)`,
		`Slug <> 'a'`:                        `(thing.slug <> $1::text)`,
		`Slug < 'a'`:                         `(thing.slug < $1::text)`,
		`Slug >= 'a'`:                        `(thing.slug >= $1::text)`,
		`Slug LIKE 'a%'`:                     `(thing.slug LIKE $1::text)`,
		`Slug NOT LIKE 'a%'`:                 `(thing.slug NOT LIKE $1::text)`,
		`Slug ILIKE 'a%'`:                    `(thing.slug ILIKE $1::text)`,
		`Slug ~~ 'a%'`:                       `(thing.slug LIKE $1::text)`,
		`Slug !~~ 'a%'`:                      `(thing.slug NOT LIKE $1::text)`,
		`Slug ~ '^a'`:                        `(thing.slug ~ $1::text)`,
		`Slug ~* '^a'`:                       `(thing.slug ~* $1::text)`,
		`Slug !~ '^a'`:                       `(thing.slug !~ $1::text)`,
		`Slug !~* '^a'`:                      `(thing.slug !~* $1::text)`,
		`Slug IN ('a', 'b')`:                 `(thing.slug IN ($1::text, $2::text))`,
		`Slug NOT IN ('a')`:                  `(thing.slug NOT IN ($1::text))`,
		`Count > 3`:                          `(thing.count > $1::bigint)`,
		`Count IN (1, -2)`:                   `(thing.count IN ($1::bigint, $2::bigint))`,
		`Enabled = true`:                     `(thing.enabled = $1::boolean)`,
		`Enabled IS TRUE`:                    `(thing.enabled IS TRUE)`,
		`CreatedAt < '2026-01-02T03:04:05Z'`: `(thing.created_at < $1::timestamptz)`,
		`ThingID = '6f1c1a2e-1111-4222-8333-444455556666'`: `(thing.thing_id = $1::uuid)`,
		`ParentID IS NULL`:                                         `(thing.parent_id IS NULL)`,
		`ParentID IS NOT NULL`:                                     `(thing.parent_id IS NOT NULL)`,
		`Labels.tier = 'prod'`:                                     `(thing.labels @> jsonb_build_object($1::text, $2::text))`,
		`Labels.tier != 'prod'`:                                    `((thing.labels ->> $1::text) <> $2::text)`,
		`Labels.tier IS NULL`:                                      `NOT (thing.labels ? $1::text)`,
		`Labels.tier IS NOT NULL`:                                  `(thing.labels ? $1::text)`,
		`Labels.'app.kubernetes.io/name' = 'x'`:                    `(thing.labels @> jsonb_build_object($1::text, $2::text))`,
		`Gates.keep = true`:                                        `(thing.gates @> jsonb_build_object($1::text, $2::boolean))`,
		`Gates.keep != true`:                                       `((thing.gates -> $1::text)::boolean <> $2::boolean)`,
		`Tags ? '6f1c1a2e-1111-4222-8333-444455556666'`:            `(thing.tags @> ARRAY[$1::uuid])`,
		`LEN(Tags) > 1`:                                            `(cardinality(thing.tags) > $1::bigint)`,
		`(Labels.tier = 'prod') IS NOT TRUE`:                       `(((thing.labels ->> $1::text) = $2::text) IS NOT TRUE)`,
		`Slug = 'a' IS FALSE`:                                      `((thing.slug = $1::text) IS FALSE)`,
		`Slug = HiddenReason`:                                      `(thing.slug = thing.hidden_reason)`,
		`Arguments.*.Value = 'x'`:                                  `EXISTS (SELECT 1 FROM jsonb_array_elements(thing.arguments) AS elem WHERE ((elem.value ->> 'Value') = $1::text))`,
		`Slug = 'a' AND Count = 1 and Enabled = false`:             `(thing.slug = $1::text) AND (thing.count = $2::bigint) AND (thing.enabled = $3::boolean)`,
		`Invocation.FunctionName = 'set-replicas'`:                 `((thing.invocation ->> 'FunctionName') = $1::text)`,
		`Invocation.Guards.owner IS NOT NULL`:                      `((thing.invocation -> 'Guards') ? $1::text)`,
		`Invocation.Arguments.0.Value = '3'`:                       `((((thing.invocation -> 'Arguments') -> $1::int) ->> 'Value') = $2::text)`,
		`Invocation.Arguments.*.Value = '3'`:                       `EXISTS (SELECT 1 FROM jsonb_array_elements((thing.invocation -> 'Arguments')) AS elem WHERE ((elem.value ->> 'Value') = $1::text))`,
		`Invocation.Arguments.?ParameterName=replicas.Value = '3'`: `EXISTS (SELECT 1 FROM jsonb_array_elements((thing.invocation -> 'Arguments')) AS elem WHERE (elem.value -> $1::text) = $2::jsonb AND ((elem.value ->> 'Value') = $3::text))`,
	}
	for where, want := range cases {
		c, _, err := compile(t, where)
		require.NoError(t, err, where)
		require.Equal(t, want, c.SQL, where)
	}
}

func TestCompileErrors(t *testing.T) {
	cases := map[string]struct {
		pos  int
		frag string
	}{
		`Nope = 'a'`:                   {1, `"Nope" is not an attribute`},
		`Slug = 'a`:                    {8, "not closed"},
		`Slug = 'a' OR Count = 1`:      {12, "OR is not supported"},
		`Slug == 'a'`:                  {7, "expected"},
		`ThingID LIKE 'a'`:             {1, "LIKE does not apply"},
		`Enabled > true`:               {1, "> does not apply"},
		`Count = '3'`:                  {9, "an integer"},
		`Slug = 3`:                     {8, "a quoted string"},
		`ThingID = 'not-a-uuid'`:       {11, "a quoted UUID"},
		`CreatedAt > 'yesterday'`:      {13, "a quoted time"},
		`Arguments.Value = 'x'`:        {1, "list of entities"},
		`Arguments = 'x'`:              {1, "list of entities"},
		`Slug.*.x = 'a'`:               {6, "not a list of entities"},
		`Labels = 'x'`:                 {1, "is a map"},
		`Slug IS NULL`:                 {1, "never null"},
		`Slug ? 'a'`:                   {1, "? tests the elements of a list"},
		`LEN(Slug) > 1`:                {1, "LEN takes a list"},
		`Secret = 'x'`:                 {1, `"Secret" is not an attribute`},
		`Slug = Count`:                 {8, "compare attributes of one type"},
		`Slug IN ()`:                   {10, "expected a literal"},
		`Slug = 'a' AND`:               {15, "expected an attribute"},
		`Slug = 'a' extra`:             {12, "expected AND"},
		`'a' = Slug`:                   {1, "starts with an attribute"},
		`Slug @ 'a'`:                   {6, "unexpected character"},
		`Count = 99999999999999999999`: {9, "out of range"},
		``:                             {1, "expected an attribute"},
	}
	for where, want := range cases {
		_, _, err := compile(t, where)
		require.Error(t, err, where)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), where)
		require.Equal(t, want.pos, se.Pos, "%s: %s", where, se.Msg)
		require.Contains(t, se.Msg, want.frag, where)
	}
}

func TestNamesBySlugOrID(t *testing.T) {
	for where, want := range map[string]bool{
		`Slug = 'a'`: true, `Slug IN ('a','b')`: true, `ThingID = '6f1c1a2e-1111-4222-8333-444455556666'`: true,
		`HiddenReason = 'BackingUnit'`: true, `Slug LIKE 'a'`: false, `Count = 1`: false,
	} {
		c, _, err := compile(t, where)
		require.NoError(t, err)
		require.Equal(t, want, c.NamesBySlugOrID, where)
	}
}

// sqlVocabulary is what compiled SQL may consist of besides the registry's own fragments.
var sqlVocabulary = regexp.MustCompile(`^(\s|\(|\)|,|\$\d+|::(text|bigint|uuid|boolean|timestamptz)|=|<>|<=|>=|<|>|~\*?|!~\*?|\?|@>|->>?|::int|::jsonb|AND|NOT|LIKE|ILIKE|IN|IS|NULL|TRUE|FALSE|EXISTS|SELECT|1|FROM|AS|WHERE|ANY|ARRAY\[|\]|cardinality|jsonb_build_object|jsonb_array_elements|elem(\.value)?|'ParameterName'|'Value'|'FunctionName'|'Guards'|'Arguments')+$`)

// noClientText checks that compiled SQL holds nothing but registry fragments, operators, keywords and
// placeholders: client text can only be a bind argument.
func noClientText(t testing.TB, sql string) {
	rest := sql
	var strip func(e *Entity)
	strip = func(e *Entity) {
		for _, a := range e.Attributes {
			if a.SQL != "" && !strings.Contains(a.SQL, "{e}") {
				rest = strings.ReplaceAll(rest, a.SQL, " ")
			}
			if a.Elem != nil {
				strip(a.Elem)
			}
		}
	}
	strip(testEntity)
	if rest = strings.TrimSpace(rest); rest != "" && !sqlVocabulary.MatchString(rest) {
		t.Fatalf("compiled SQL holds text that is neither registry SQL nor syntax: %q (from %q)", rest, sql)
	}
}

// TestNoClientTextInSQL: hostile literals, keys and names never reach the SQL text.
func TestNoClientTextInSQL(t *testing.T) {
	for _, where := range []string{
		`Slug = 'x''; DROP TABLE thing; --'`,
		`Labels.'a'') OR 1=1 --' = 'x'`,
		`Labels.DROP_TABLE IS NULL`,
		`Slug IN ('1) OR (1=1', 'y')`,
		`Slug ~ '(.*'`,
		`Arguments.*.Value = 'pg_sleep(10)'`,
	} {
		c, args, err := compile(t, where)
		require.NoError(t, err, where)
		noClientText(t, c.SQL)
		require.NotEmpty(t, args)
		require.NotContains(t, c.SQL, "DROP")
		require.NotContains(t, c.SQL, "pg_sleep")
	}
}

// FuzzWhere: no input panics the parser or compiler, and what compiles holds no client text.
func FuzzWhere(f *testing.F) {
	for _, seed := range []string{
		`Slug = 'a'`, `Count IN (1,2,3) AND Enabled = true`, `Labels.tier IS NOT NULL`, `LEN(Tags) > 0`,
		`(Slug LIKE 'a%') IS NOT TRUE`, `Arguments.*.Value ~* 'x'`, `CreatedAt < '2026-01-02T03:04:05Z'`,
		`Tags ? '6f1c1a2e-1111-4222-8333-444455556666'`, `Slug = 'it''s'`, `ParentID IS NULL AND Gates.g = false`,
		`Slug NOT IN ('a') AND Labels.'a.b/c' != 'd'`, `Slug = HiddenReason`, `'`, `(((`, `Slug = 'a' OR`,
		`Invocation.Arguments.0.Value = 'x'`, `Invocation.Arguments.?ParameterName=n.Value != 'y'`, `Invocation.Guards.g IS NULL`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, where string) {
		expr, err := Parse(where)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 1 {
				t.Fatalf("parse error without a position: %v", err)
			}
			return
		}
		b := &binder{}
		c, err := compileWhere(testEntity, expr, b)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("compile error of the wrong kind: %v", err)
			}
			return
		}
		noClientText(t, c.SQL)
		if strings.Count(c.SQL, "$") > len(b.args) {
			t.Fatalf("more placeholders than arguments: %s", c.SQL)
		}
	})
}
