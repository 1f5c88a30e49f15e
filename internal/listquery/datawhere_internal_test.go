package listquery

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
)

// dataCondition compiles where_data and resource_type and returns the SQL and the SQL/JSON paths bound.
func dataCondition(t *testing.T, whereData, resourceType string) (string, []any, error) {
	t.Helper()
	cond, err := DataCondition("unit.head_doc", whereData, resourceType)
	if err != nil || cond == nil {
		return "", nil, err
	}
	b := &binder{}
	return cond(b.bind), b.args, nil
}

// TestDataCondition: each where_data condition is one SQL/JSON path over the data's projection, bound as
// a parameter; client text is a JSON string inside the path.
func TestDataCondition(t *testing.T) {
	t.Parallel()
	const values = `$[*].Value`
	tests := []struct {
		whereData, resourceType string
		paths                   []any
	}{
		{`replicas = 3`, "", []any{values + `."replicas" ? (@ == 3)`}},
		{`spec.replicas >= 2 AND metadata.name != 'web'`, "", []any{
			values + `."spec"."replicas" ? (@ >= 2)`, values + `."metadata"."name" ? (@ != "web")`}},
		{`debug = true`, "", []any{values + `."debug" ? (@ == true)`}},
		{`a.0.b = 'x'`, "", []any{values + `."a"[0]."b" ? (@ == "x")`}},
		{`a.'0' = 'x'`, "", []any{values + `."a"."0" ? (@ == "x")`}},
		{`items.*.name IN ('a', 'b')`, "", []any{values + `."items"[*]."name" ? ((@ == "a" || @ == "b"))`}},
		{`tier NOT IN ('prod')`, "", []any{values + `."tier" ? (!(@ == "prod"))`}},
		{`spec.template.spec.containers.?name=main.image LIKE 'nginx:%'`, "", []any{
			values + `."spec"."template"."spec"."containers"[*] ? (@."name" == "main")."image" ? (@ like_regex "^nginx:.*$")`}},
		{`host ILIKE 'a_.example.com'`, "", []any{values + `."host" ? (@ like_regex "^a.\\.example\\.com$" flag "i")`}},
		{`host NOT LIKE 'x%'`, "", []any{values + `."host" ? (!(@ like_regex "^x.*$"))`}},
		{`image ~* '^NGINX'`, "", []any{values + `."image" ? (@ like_regex "^NGINX" flag "i")`}},
		{`image !~ 'v1$'`, "", []any{values + `."image" ? (!(@ like_regex "v1$"))`}},
		{`name = 'it"s'`, "", []any{values + `."name" ? (@ == "it\"s")`}},
		{`spec.replicas > 1`, "apps/v1/Deployment", []any{`$[*] ? (@.ResourceType == "apps/v1/Deployment").Value."spec"."replicas" ? (@ > 1)`}},
		{``, "v1/ConfigMap", []any{`$[*] ? (@.ResourceType == "v1/ConfigMap")`}},
	}
	for _, tt := range tests {
		sql, paths, err := dataCondition(t, tt.whereData, tt.resourceType)
		require.NoError(t, err, tt.whereData)
		require.Equal(t, tt.paths, paths, tt.whereData)
		want := ""
		for i := range tt.paths {
			if i > 0 {
				want += " AND "
			}
			want += fmt.Sprintf("(unit.head_doc @? $%d::jsonpath)", i+1)
		}
		require.Equal(t, want, sql, tt.whereData)
	}
	cond, err := DataCondition("unit.head_doc", "  ", "")
	require.NoError(t, err)
	require.Nil(t, cond, "no where_data and no resource_type: no condition")
}

func TestDataConditionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		whereData string
		pos       int
		msg       string
	}{
		{`'a' = 1`, 1, "starts with a path into the data"},
		{`LEN(a) = 1`, 1, "starts with a path into the data"},
		{`(a = 1) IS TRUE`, 2, "IS TRUE/FALSE does not apply to where_data"},
		{`a IS NULL`, 1, "compares a path with a literal"},
		{`a ? 'x'`, 1, "compares a path with a literal"},
		{`a = b`, 1, "compares a path with a literal"},
		{`a LIKE 3`, 8, "LIKE takes a quoted pattern"},
		{`a ~ '(x'`, 5, "invalid regular expression"},
		{`a = `, 5, "expected an attribute name"},
	}
	for _, tt := range tests {
		_, _, err := dataCondition(t, tt.whereData, "")
		e := apierr.From(err)
		require.Equal(t, apierr.TypeUserInput, e.Type, "%s: %v", tt.whereData, err)
		require.Equal(t, "where_data", e.Items[0].Item, tt.whereData)
		require.Contains(t, e.Message, fmt.Sprintf("where_data: at position %d: ", tt.pos), tt.whereData)
		require.Contains(t, e.Message, tt.msg, tt.whereData)
	}
}

// TestCheckDefinition: a stored selection is checked as the list would use it, and a problem is 400
// Validation naming the stored field (and the position, for expressions).
func TestCheckDefinition(t *testing.T) {
	t.Parallel()
	units := &Entity{Name: "Doc", ID: "DocID", DataColumn: "doc.data", Attributes: []Attribute{{Name: "DocID", Type: UUID, SQL: "doc.id", Filterable: true}}}
	index(units)
	require.NoError(t, CheckDefinition(widget, "Size > 1 AND Slug LIKE 'a%'", "", "", "BackingUnit"))
	require.NoError(t, CheckDefinition(units, "", "replicas > 1", "apps/v1/Deployment", "*"))

	tests := []struct {
		name                                     string
		e                                        *Entity
		where, whereData, resourceType, isHidden string
		item, msg                                string
	}{
		{"a Where that does not parse", widget, "Size >", "", "", "", "Where", "Where at position 7: expected an attribute name"},
		{"a Where over an unknown attribute", widget, "Bogus = 1", "", "", "", "Where", `Where at position 1: "Bogus" is not an attribute`},
		{"WhereData where the entity has no data", widget, "", "a = 1", "", "", "WhereData", "Widget lists take no where_data or resource_type"},
		{"ResourceType where the entity has no data", widget, "", "", "v1/Service", "", "WhereData", "Widget lists take no where_data or resource_type"},
		{"a WhereData that does not parse", units, "", "a = ", "", "", "WhereData", "WhereData: where_data: at position 5"},
		{"an IncludeHidden mixing * and reasons", widget, "", "", "", "*,BackingUnit", "IncludeHidden", "IncludeHidden: include_hidden: * stands alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDefinition(tt.e, tt.where, tt.whereData, tt.resourceType, tt.isHidden)
			var e *apierr.Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.Equal(t, apierr.TypeValidation, e.Type)
			require.Equal(t, tt.item, e.Items[0].Item)
			require.Contains(t, e.Message, tt.msg)
		})
	}
	require.NoError(t, CheckWhere(widget, "Where", ""))
	e := apierr.From(CheckWhere(widget, "WhereUnit", "Size = 'x'"))
	require.Equal(t, "WhereUnit", e.Items[0].Item)
}
