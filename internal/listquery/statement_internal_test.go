package listquery

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
)

// widget is a listed entity with everything a list can use: contains, hidden entities, guest visibility
// and includes. It is indexed but not registered (Define), so it stays out of the registry.
var widget = func() *Entity {
	e := &Entity{
		Name: "Widget", From: "widget", Columns: "widget.*", ID: "WidgetID", Org: "widget.organization_id", Slug: "Slug",
		Contains: "widget.search_text", ContainsAttrs: []string{"Slug", "DisplayName"}, HiddenReason: "widget.hidden_reason",
		Visibility: &Visibility{Grants: "widget.permissions", Space: "widget.space_id"},
		Attributes: []Attribute{
			{Name: "WidgetID", Type: UUID, SQL: "widget.widget_id", Filterable: true, Orderable: true, Always: true},
			{Name: "SpaceID", Type: UUID, SQL: "widget.space_id", Filterable: true, Orderable: true, Always: true},
			{Name: "Slug", Type: String, SQL: "widget.slug", Filterable: true, Orderable: true, Always: true},
			{Name: "DisplayName", Type: String, SQL: "widget.display_name", Filterable: true, Orderable: true},
			{Name: "Size", Type: Int, SQL: "widget.size", Filterable: true, Orderable: true},
			{Name: "Enabled", Type: Bool, SQL: "widget.enabled", Filterable: true, Orderable: true},
			{Name: "CreatedAt", Type: Time, SQL: "widget.created_at", Filterable: true, Orderable: true},
			NullableUUID("ParentID", "widget.parent_id"),
			{Name: "HiddenReason", Type: String, SQL: "widget.hidden_reason", Filterable: true},
			{Name: "Permissions", Type: Opaque},
		},
		Includes: []Include{{Name: "ParentID", Field: "Parent", Type: "Thing"}, {Name: "SpaceID", Field: "Space"}},
	}
	index(e)
	return e
}()

var (
	widgetOrg   = uuid.New()
	widgetAdmin = authz.RequestScope(auth.Principal{UserID: uuid.New(), OrganizationID: widgetOrg, Role: auth.RoleAdmin})
	widgetCodec = NewTokenCodec([]byte("test key"))
)

// statement is the SQL and bind arguments of a list of q.Entity (widget when unset) by q.Caller (an
// admin when unset), as Run would send them.
func statement(t *testing.T, q Query) (string, []any, error) {
	t.Helper()
	if q.Entity == nil {
		q.Entity = widget
	}
	if q.Caller.OrganizationID == uuid.Nil {
		q.Caller = widgetAdmin
	}
	if q.Path == "" {
		q.Path = "/widget"
	}
	p, b, err := q.plan(widgetCodec)
	if err != nil {
		return "", nil, err
	}
	return q.sql(p, b), b.args, nil
}

func intp(n int) *int { return &n }

// TestListStatement: each list parameter's part of the statement, every value bound.
func TestListStatement(t *testing.T) {
	t.Parallel()
	space := uuid.New()
	const head = "SELECT widget.*, jsonb_build_array(widget.widget_id) AS hubd_keyset FROM widget WHERE widget.organization_id = $1"
	tests := []struct {
		name string
		q    Query
		sql  string
		args []any
	}{
		{"no parameters: visible entities, by ID", Query{},
			head + " AND widget.hidden_reason = '' ORDER BY widget.widget_id ASC", []any{widgetOrg}},
		{"a parent scope and a where", Query{Scope: []Condition{{Column: "widget.space_id", Value: space}}, Params: Params{Where: "Size > 3 AND Enabled = true"}},
			head + " AND widget.space_id = $2 AND (widget.size > $3::bigint) AND (widget.enabled = $4::boolean) AND widget.hidden_reason = ''" +
				" ORDER BY widget.widget_id ASC",
			[]any{widgetOrg, space, int64(3), true}},
		{"contains escapes LIKE's wildcards", Query{Params: Params{Contains: ` 50%_off\ `}},
			head + ` AND (widget.search_text ILIKE $2) AND widget.hidden_reason = '' ORDER BY widget.widget_id ASC`,
			[]any{widgetOrg, `%50\%\_off\\%`}},
		{"naming by Slug returns hidden entities", Query{Params: Params{Where: "Slug = 'a'"}},
			head + " AND (widget.slug = $2::text) ORDER BY widget.widget_id ASC", []any{widgetOrg, "a"}},
		{"a pattern on Slug does not", Query{Params: Params{Where: "Slug LIKE 'a%'"}},
			head + " AND (widget.slug LIKE $2::text) AND widget.hidden_reason = '' ORDER BY widget.widget_id ASC", []any{widgetOrg, "a%"}},
		{"include_hidden names reasons", Query{Params: Params{IncludeHidden: "BackingUnit, Archived"}},
			head + " AND (widget.hidden_reason = '' OR widget.hidden_reason = ANY($2::text[])) ORDER BY widget.widget_id ASC",
			[]any{widgetOrg, []string{"BackingUnit", "Archived"}}},
		{"include_hidden=* keeps every one", Query{Params: Params{IncludeHidden: "*"}},
			head + " ORDER BY widget.widget_id ASC", []any{widgetOrg}},
		{"limit reads one more row, to know whether a page follows", Query{Params: Params{Limit: intp(10)}},
			head + " AND widget.hidden_reason = '' ORDER BY widget.widget_id ASC LIMIT $2", []any{widgetOrg, 11}},
		{"offset", Query{Params: Params{Limit: intp(5), Offset: intp(20)}},
			head + " AND widget.hidden_reason = '' ORDER BY widget.widget_id ASC LIMIT $2 OFFSET $3", []any{widgetOrg, 6, 20}},
		{"a family's own condition binds its values", Query{Extra: []func(func(any) string) string{
			func(bind func(any) string) string { return "widget.size % " + bind(7) + " = 0" }}},
			head + " AND widget.hidden_reason = '' AND widget.size % $2 = 0 ORDER BY widget.widget_id ASC", []any{widgetOrg, 7}},
		{"the latest of each partition", Query{Distinct: &Distinct{Partition: "widget.space_id", Latest: "widget.size"}},
			"SELECT widget.*, jsonb_build_array(widget.widget_id) AS hubd_keyset FROM widget WHERE widget.widget_id IN " +
				"(SELECT DISTINCT ON (widget.space_id) widget.widget_id FROM widget WHERE widget.organization_id = $1 AND widget.hidden_reason = ''" +
				" ORDER BY widget.space_id, widget.size DESC) ORDER BY widget.widget_id ASC", []any{widgetOrg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql, args, err := statement(t, tt.q)
			require.NoError(t, err)
			require.Equal(t, tt.sql, sql)
			require.Equal(t, tt.args, args)
		})
	}
}

// TestListOrder: order_by items, their direction, the ID tie-break that follows the last direction, and
// the non-null form of a nullable column.
func TestListOrder(t *testing.T) {
	t.Parallel()
	tests := []struct{ orderBy, keyset, order string }{
		{"", "widget.widget_id", "widget.widget_id ASC"},
		{"Size", "widget.size, widget.widget_id", "widget.size ASC, widget.widget_id ASC"},
		{"DESC:Size", "widget.size, widget.widget_id", "widget.size DESC, widget.widget_id DESC"},
		{" desc:Size , asc:Slug ", "widget.size, widget.slug, widget.widget_id", "widget.size DESC, widget.slug ASC, widget.widget_id ASC"},
		{"DESC:WidgetID", "widget.widget_id", "widget.widget_id DESC"},
		{"WidgetID, Size", "widget.widget_id, widget.size", "widget.widget_id ASC, widget.size ASC"},
		{"ParentID", "COALESCE(widget.parent_id, '00000000-0000-0000-0000-000000000000'::uuid), widget.widget_id",
			"COALESCE(widget.parent_id, '00000000-0000-0000-0000-000000000000'::uuid) ASC, widget.widget_id ASC"},
	}
	for _, tt := range tests {
		sql, _, err := statement(t, Query{Params: Params{OrderBy: tt.orderBy, IncludeHidden: "*"}})
		require.NoError(t, err, tt.orderBy)
		require.Equal(t, "SELECT widget.*, jsonb_build_array("+tt.keyset+") AS hubd_keyset FROM widget WHERE widget.organization_id = $1 ORDER BY "+tt.order, sql, tt.orderBy)
	}
}

// TestListVisibility: a caller whose role does not view the whole organization lists what its grants
// reach, in the statement; a list without Visibility holds nothing for it.
func TestListVisibility(t *testing.T) {
	t.Parallel()
	space, group := uuid.New(), uuid.New()
	guest := auth.Principal{UserID: uuid.New(), OrganizationID: widgetOrg, Role: auth.RoleGuest, GroupIDs: []uuid.UUID{group},
		SpacePermissions: map[uuid.UUID]map[string]bool{space: {"ViewChildren": true}, uuid.New(): {"Edit": true}}}
	sql, args, err := statement(t, Query{Caller: authz.RequestScope(guest), Params: Params{IncludeHidden: "*"}})
	require.NoError(t, err)
	require.Equal(t, "SELECT widget.*, jsonb_build_array(widget.widget_id) AS hubd_keyset FROM widget WHERE widget.organization_id = $1"+
		" AND (widget.permissions @> ANY($2::jsonb[]) OR widget.space_id = ANY($3::uuid[])) ORDER BY widget.widget_id ASC", sql)
	require.Equal(t, authz.Containing(guest, authz.View), args[1])
	require.Equal(t, []uuid.UUID{space}, args[2], "only the Spaces whose grants reach the rows")

	guest.SpacePermissions = nil
	sql, _, err = statement(t, Query{Caller: authz.RequestScope(guest), Params: Params{IncludeHidden: "*"}})
	require.NoError(t, err)
	require.Contains(t, sql, " AND (widget.permissions @> ANY($2::jsonb[])) ORDER BY")

	sql, _, err = statement(t, Query{Entity: testEntity, Caller: authz.RequestScope(guest)})
	require.NoError(t, err)
	require.Contains(t, sql, " AND FALSE ORDER BY", "an entity without Visibility lists nothing to a guest")

	viewer := authz.RequestScope(auth.Principal{UserID: uuid.New(), OrganizationID: widgetOrg, Role: auth.RoleViewer})
	sql, _, err = statement(t, Query{Entity: testEntity, Caller: viewer})
	require.NoError(t, err)
	require.NotContains(t, sql, "FALSE", "a viewer views the whole organization")
}

// TestListParameterErrors: a parameter the list cannot take is 400 naming it.
func TestListParameterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		q      Query
		typ    apierr.Type
		item   string
		inText string
	}{
		{"contains where the family has none", Query{Entity: testEntity, Params: Params{Contains: "x"}}, apierr.TypeUserInput, "contains", "Thing lists do not take contains"},
		{"a where that does not parse", Query{Params: Params{Where: "Size >"}}, apierr.TypeUserInput, "where", "where: at position 7"},
		{"a where that does not compile", Query{Params: Params{Where: "Nope = 1"}}, apierr.TypeUserInput, "where", `"Nope" is not an attribute Widget lists can be filtered by`},
		{"limit 0", Query{Params: Params{Limit: intp(0)}}, apierr.TypeUserInput, "limit", "between 1 and 1000"},
		{"limit above the maximum", Query{Params: Params{Limit: intp(1001)}}, apierr.TypeUserInput, "limit", "between 1 and 1000"},
		{"a negative offset", Query{Params: Params{Offset: intp(-1)}}, apierr.TypeUserInput, "offset", "must not be negative"},
		{"offset with continue", Query{Params: Params{Offset: intp(1), Continue: "x"}}, apierr.TypeUserInput, "offset", "cannot be combined with continue"},
		{"order_by a field that is not orderable", Query{Params: Params{OrderBy: "Enabled, HiddenReason"}}, apierr.TypeUserInput, "order_by", `cannot be ordered by "HiddenReason"`},
		{"order_by a direction that does not exist", Query{Params: Params{OrderBy: "UP:Size"}}, apierr.TypeUserInput, "order_by", `"UP:Size" must be Field, ASC:Field or DESC:Field`},
		{"order_by a field twice", Query{Params: Params{OrderBy: "Size, DESC:Size"}}, apierr.TypeUserInput, "order_by", "Size is named twice"},
		{"include_hidden=* with reasons", Query{Params: Params{IncludeHidden: "*,BackingUnit"}}, apierr.TypeUserInput, "include_hidden", "* stands alone"},
		{"a NUL in where", Query{Params: Params{Where: "Slug = 'a\x00'"}}, apierr.TypeUserInput, "where", "without NUL"},
		{"bytes that are not UTF-8", Query{Params: Params{OrderBy: "Size\xff"}}, apierr.TypeUserInput, "order_by", "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := statement(t, tt.q)
			e := apierr.From(err)
			require.Equal(t, tt.typ, e.Type, e.Message)
			require.Len(t, e.Items, 1, e.Message)
			require.Equal(t, tt.item, e.Items[0].Item)
			require.Contains(t, e.Message, tt.inText)
		})
	}
	_, _, err := (Query{Entity: widget, Path: "/widget"}).plan(widgetCodec)
	require.Error(t, err, "a list without its caller's organization is a bug, refused")
	_, _, err = statement(t, Query{Params: Params{Limit: intp(1000), Offset: intp(0)}})
	require.NoError(t, err, "the largest page")
}

// TestBindArguments: every literal of a where reaches the database as a typed bind argument, in order.
func TestBindArguments(t *testing.T) {
	t.Parallel()
	id := uuid.MustParse("6f1c1a2e-1111-4222-8333-444455556666")
	tests := []struct {
		where string
		args  []any
		attrs []string
	}{
		{`Slug IN ('a', 'b') AND Count >= -3`, []any{"a", "b", int64(-3)}, []string{"Slug", "Count"}},
		{`ThingID = '6f1c1a2e-1111-4222-8333-444455556666'`, []any{id}, []string{"ThingID"}},
		{`Tags ? '6f1c1a2e-1111-4222-8333-444455556666'`, []any{id}, []string{"Tags"}},
		{`Labels.tier = 'prod' AND Gates.keep != true`, []any{"tier", "prod", "keep", true}, []string{"Labels", "Gates"}},
		{`Labels ? 'tier'`, []any{"tier"}, []string{"Labels"}},
		{`Invocation.Arguments.2.Value = '3'`, []any{2, "3"}, []string{"Invocation"}},
		{`Invocation.Arguments.?ParameterName=replicas.Value = '3'`, []any{"ParameterName", `"replicas"`, "3"}, []string{"Invocation"}},
		{`Arguments.?Value=3.ParameterName = 'n'`, []any{"Value", "3", "n"}, []string{"Arguments"}},
		{`Slug = HiddenReason`, nil, []string{"Slug", "HiddenReason"}},
	}
	for _, tt := range tests {
		c, args, err := compile(t, tt.where)
		require.NoError(t, err, tt.where)
		require.Equal(t, tt.args, args, tt.where)
		require.Equal(t, tt.attrs, c.Attributes, tt.where)
	}
	c, args, err := compile(t, `CreatedAt < '2026-01-02T03:04:05.5+02:00'`)
	require.NoError(t, err)
	require.Equal(t, []string{"CreatedAt"}, c.Attributes)
	require.Len(t, args, 1)
	ts, ok := args[0].(time.Time)
	require.True(t, ok, "a time is bound as a time, not as text: %T", args[0])
	require.Equal(t, "2026-01-02T01:04:05.5Z", ts.UTC().Format(time.RFC3339Nano))
}
