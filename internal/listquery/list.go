// Package listquery is the one list path of every family: the where language (parsed and compiled to
// parameterized SQL through a per-entity attribute registry), contains, select, include,
// include_hidden, order_by, limit with keyset continue tokens, and the deprecated offset. It is the only
// place dynamic SQL is built; client text reaches the database only as bind parameters.
package listquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// MaxLimit is the largest page a client may ask for (above it is 400).
const MaxLimit = 1000

// Params are a list request's query parameters, as the client sent them.
type Params struct {
	Where         string
	Contains      string
	Select        string
	Include       string
	IncludeHidden string
	OrderBy       string
	Continue      string
	// Filter and View name a stored Filter and View (by ID, Slug or Space/Slug), as the request did.
	Filter string
	View   string
	Limit  *int
	Offset *int
	// FilterDefinition and ViewDefinition are the Filter and View in force, resolved by the caller (in the
	// caller's organization, visible to it). A Filter or View named without its definition is 400
	// Validation; a definition is in force without a name when the caller selects by a stored Filter itself.
	FilterDefinition *FilterDefinition
	ViewDefinition   *ViewDefinition
	// ViewLimits bound what a View's data columns read into the page: the server's settings (zero fields:
	// the defaults).
	ViewLimits ViewLimits
}

// Condition restricts a list to one parent (a Space, a Unit...): Column = Value. Column is a constant.
type Condition struct {
	Column string
	Value  any
}

// Query is one list request of an entity, by a caller (in its organization), under a parent.
type Query struct {
	Entity *Entity
	// Caller is who lists: the list holds only what it may view, and only its organization's rows.
	Caller authz.Scope
	Scope  []Condition
	Params Params
	// Path identifies the listed collection (the request path); continue tokens are bound to it.
	Path string
	// Distinct, when set, keeps one row per Partition: the one with the greatest Latest among those
	// the filters select (Revision lists' distinct_on=Unit). Both are constant SQL expressions.
	Distinct *Distinct
	// Extra adds conditions a family compiles itself (where_data), binding their values with bind.
	Extra []func(bind func(any) string) string
}

// Distinct keeps the latest row of each partition.
type Distinct struct {
	Partition string
	Latest    string
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T
	PageInfo
}

// PageInfo is what a page says besides its items.
type PageInfo struct {
	// Continue is the token of the next page, empty on the last one.
	Continue string
	// Fields are the fields to return when select was given (nil: all).
	Fields map[string]bool
	// Includes are the related entities to expand.
	Includes map[string]bool
	// View is the View view= names, nil without one; ViewData holds, per item, the values of its data
	// columns (one JSON array each).
	View     *CompiledView
	ViewData [][]json.RawMessage
}

// MapPage converts a page's items, keeping its continuation and projection.
func MapPage[R, T any](page Page[R], convert func(*R) (T, error)) (Page[T], error) {
	out := Page[T]{Items: make([]T, 0, len(page.Items)), PageInfo: page.PageInfo}
	for i := range page.Items {
		v, err := convert(&page.Items[i])
		if err != nil {
			return Page[T]{}, err
		}
		out.Items = append(out.Items, v)
	}
	return out, nil
}

// plan is a validated Query.
type plan struct {
	where     *Compiled
	order     []orderItem
	fields    map[string]bool
	includes  map[string]bool
	hidden    []string // reasons to include; nil = none, ["*"] = all
	limit     int      // 0 = all
	offset    int
	after     []any // keyset of the previous page
	signature string
	// extra are the data conditions of the Filter in force (Units' WhereData, ResourceType).
	extra []func(bind func(any) string) string
	// filter is the Filter in force: filter='s, or the View's; view is the View view= names.
	filter *FilterDefinition
	view   *CompiledView
	// viewLimits bound what view's data columns read.
	viewLimits ViewLimits
}

type orderItem struct {
	attr *Attribute
	desc bool
}

// Run lists one page: it validates the parameters, builds the statement and scans rows into T (a gen/db
// row type, matched by column name).
func Run[T any](ctx context.Context, conn db.DBTX, tokens *TokenCodec, q Query) (Page[T], error) {
	p, b, err := q.plan(tokens)
	if err != nil {
		return Page[T]{}, err
	}
	p.viewLimits = q.Params.ViewLimits.WithDefaults()
	sql := q.sql(p, b)
	rows, err := conn.Query(ctx, sql, b.args...)
	if err != nil {
		return Page[T]{}, q.translate(err)
	}
	budget := &viewBudget{limits: p.viewLimits}
	if p.view != nil {
		budget.names = p.view.dataColumnNames()
	}
	items, data, keys, over, err := collect[T](rows, p.limit+1, len(budget.names), budget)
	if err != nil {
		return Page[T]{}, q.translate(err)
	}
	more := p.limit > 0 && len(items) > p.limit
	if over != nil && p.limit > 0 && over.row == p.limit {
		over, more = nil, true // the row past the page only tells that more follow
	}
	if over != nil && (over.column >= 0 || over.row == 0) {
		return Page[T]{}, q.overflowError(p, over, keyID(p, q.Entity, keys[over.row]))
	}
	page := Page[T]{Items: items, PageInfo: PageInfo{Fields: p.fields, Includes: p.includes, View: p.view, ViewData: data}}
	switch {
	case over != nil:
		// Cut short by the page's budget of View data: the rest follows on the next page.
		page.Items, page.ViewData = items[:over.row], data[:over.row]
		page.Continue = tokens.encode(p.signature, keys[over.row-1])
	case more:
		page.Items = items[:p.limit]
		if data != nil {
			page.ViewData = data[:p.limit]
		}
		if p.offset == 0 {
			page.Continue = tokens.encode(p.signature, keys[p.limit-1])
		}
	}
	return page, nil
}

// collect scans every row into T (a generated row type: columns matched to fields by their db tags), the
// values of a View's dataColumns data columns that follow them (nil without any) and the row's
// keyset (the last column). Columns are matched to fields once per page, not once per row, and rows are
// scanned in place into a slice sized for expected rows. A row whose data columns pass budget's limits ends
// the scan: the rows before it are returned, with the overflow; the rest are not read.
func collect[T any](rows pgx.Rows, expected, dataColumns int, budget *viewBudget) ([]T, [][]json.RawMessage, []json.RawMessage, *viewOverflow, error) {
	defer rows.Close()
	fds := rows.FieldDescriptions()
	if len(fds) == 0 {
		rows.Close()
		return nil, nil, nil, nil, rows.Err()
	}
	fields, err := fieldIndexes[T](fds[:len(fds)-1-dataColumns])
	if err != nil {
		return nil, nil, nil, nil, err
	}
	items := make([]T, 0, max(expected, 0))
	keys := make([]json.RawMessage, 0, max(expected, 0))
	var data [][]json.RawMessage
	dest := make([]any, len(fds))
	for rows.Next() {
		var zero T
		items, keys = append(items, zero), append(keys, nil)
		v := reflect.ValueOf(&items[len(items)-1]).Elem()
		for i, f := range fields {
			dest[i] = v.Field(f).Addr().Interface()
		}
		var values []json.RawMessage
		if dataColumns > 0 {
			values = make([]json.RawMessage, dataColumns)
			for i := range values {
				dest[len(fields)+i] = &values[i]
			}
		}
		dest[len(fds)-1] = &keys[len(keys)-1]
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, nil, nil, err
		}
		if dataColumns > 0 {
			if over := budget.add(len(data), values); over != nil {
				return items[:over.row], data, keys, over, nil
			}
			data = append(data, values)
		}
	}
	return items, data, keys, nil, rows.Err()
}

// fieldIndexes returns, for each column, the index of T's field whose db tag names it; every field must
// have its column.
func fieldIndexes[T any](fds []pgconn.FieldDescription) ([]int, error) {
	t := reflect.TypeFor[T]()
	byName := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if name := t.Field(i).Tag.Get("db"); name != "" {
			byName[name] = i
		}
	}
	out := make([]int, len(fds))
	for i, fd := range fds {
		f, ok := byName[fd.Name]
		if !ok {
			return nil, fmt.Errorf("listquery: column %q has no field in %s", fd.Name, t)
		}
		out[i] = f
		delete(byName, fd.Name)
	}
	if len(byName) > 0 {
		return nil, fmt.Errorf("listquery: no column for %d fields of %s", len(byName), t)
	}
	return out, nil
}

// translate reports the database's refusal of a client-supplied pattern as the client's error, naming
// the parameter it came from: a regular expression is in where (~) or else in a data condition
// (where_data).
func (q Query) translate(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "2201B":
			param := "where"
			if !strings.Contains(q.Params.Where, "~") && len(q.Extra) > 0 {
				param = "where_data"
			}
			return apierr.UserInput(param+": invalid regular expression: "+strings.TrimPrefix(pgErr.Message, "invalid regular expression: "),
				apierr.Item{Item: param, Description: "invalid regular expression"})
		case "22025", "22019": // invalid escape sequence / escape character in a LIKE pattern
			return apierr.UserInput("where: invalid LIKE pattern (a backslash escapes the next character and cannot end a pattern): "+pgErr.Message,
				apierr.Item{Item: "where", Description: "invalid LIKE pattern"})
		}
	}
	return store.Translate(err)
}

func (q Query) plan(tokens *TokenCodec) (*plan, *binder, error) {
	e, prm := q.Entity, q.Params
	p := &plan{}
	b := &binder{}
	if q.Caller.OrganizationID == uuid.Nil {
		return nil, nil, errors.New("listquery: a list needs its caller's Scope")
	}
	b.bind(q.Caller.OrganizationID)
	for _, c := range q.Scope {
		b.bind(c.Value)
	}
	if err := checkText(map[string]string{"where": prm.Where, "contains": prm.Contains, "order_by": prm.OrderBy,
		"select": prm.Select, "include": prm.Include, "include_hidden": prm.IncludeHidden}); err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(prm.Contains) != "" && e.Contains == "" {
		return nil, nil, apierr.UserInput(fmt.Sprintf("%s lists do not take contains; use where", e.Name),
			apierr.Item{Item: "contains", Description: "not supported by this list"})
	}
	if prm.Filter != "" && prm.FilterDefinition == nil {
		return nil, nil, apierr.Validation(fmt.Sprintf("filter: no Filter %q in your organization", prm.Filter),
			apierr.Item{Item: "filter", Description: "no such Filter"})
	}
	p.filter = prm.FilterDefinition
	if prm.View != "" || prm.ViewDefinition != nil {
		if err := q.applyView(e, p); err != nil {
			return nil, nil, err
		}
	}
	if strings.TrimSpace(prm.Where) != "" {
		expr, err := Parse(prm.Where)
		if err == nil {
			p.where, err = compileWhere(e, expr, b)
		}
		if err != nil {
			return nil, nil, paramError("where", err)
		}
	}
	if p.filter != nil {
		if err := applyFilter(e, p, b); err != nil {
			return nil, nil, err
		}
	}
	orderBy := prm.OrderBy
	if p.view != nil {
		orderBy = p.view.order(orderBy)
	}
	var err error
	if p.order, err = parseOrderBy(e, orderBy); err != nil {
		return nil, nil, err
	}
	if p.includes, err = parseIncludes(e, prm.Include); err != nil {
		return nil, nil, err
	}
	if p.view != nil {
		for _, in := range p.view.includes {
			p.includes[in] = true
		}
	}
	hidden := prm.IncludeHidden
	if hidden == "" && p.filter != nil {
		hidden = p.filter.IncludeHidden
	}
	if p.hidden, err = parseHidden(hidden); err != nil {
		return nil, nil, err
	}
	if prm.Limit != nil {
		if *prm.Limit < 1 || *prm.Limit > MaxLimit {
			return nil, nil, apierr.UserInput(fmt.Sprintf("limit must be between 1 and %d", MaxLimit), apierr.Item{Item: "limit", Description: "out of range"})
		}
		p.limit = *prm.Limit
	}
	if prm.Offset != nil {
		if prm.Continue != "" {
			return nil, nil, apierr.UserInput("offset cannot be combined with continue; continue alone resumes a list",
				apierr.Item{Item: "offset", Description: "not allowed with continue"})
		}
		if *prm.Offset < 0 {
			return nil, nil, apierr.UserInput("offset must not be negative", apierr.Item{Item: "offset", Description: "out of range"})
		}
		p.offset = *prm.Offset
	}
	if p.fields, err = parseSelect(e, prm.Select, p); err != nil {
		return nil, nil, err
	}
	if p.fields != nil && strings.TrimSpace(prm.Contains) != "" {
		for _, n := range e.ContainsAttrs {
			p.fields[n] = true
		}
	}
	if p.fields != nil && p.view != nil {
		for _, n := range p.view.fields {
			p.fields[n] = true
		}
	}
	p.signature = q.signature(p)
	if prm.Continue != "" {
		keys, err := tokens.decode(prm.Continue, p.signature)
		if err != nil {
			return nil, nil, err
		}
		if p.after, err = keysetValues(p, keys); err != nil {
			return nil, nil, err
		}
	}
	return p, b, nil
}

// checkText refuses parameter text PostgreSQL cannot take (NUL) or that is not UTF-8, naming the parameter.
func checkText(params map[string]string) error {
	names := slices.Sorted(maps.Keys(params))
	for _, n := range names {
		v := params[n]
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return apierr.UserInput(n+": the value must be UTF-8 text without NUL characters", apierr.Item{Item: n, Description: "invalid text"})
		}
	}
	return nil
}

func paramError(param string, err error) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		return apierr.UserInput(param+": "+se.Error(), apierr.Item{Item: param, Description: se.Error()})
	}
	return err
}

// sql builds the statement: filters, keyset, order, limit. Every value is a bind parameter.
func (q Query) sql(p *plan, b *binder) string {
	e := q.Entity
	keyCols := make([]string, 0, len(p.order))
	orderBy := make([]string, 0, len(p.order))
	for _, o := range p.order {
		keyCols = append(keyCols, o.expr())
		dir := "ASC"
		if o.desc {
			dir = "DESC"
		}
		orderBy = append(orderBy, o.expr()+" "+dir)
	}
	var f strings.Builder // the filters: organization, scope, where, contains, hidden
	fmt.Fprintf(&f, "%s = $1", e.Org)
	for i, c := range q.Scope {
		fmt.Fprintf(&f, " AND %s = $%d", c.Column, i+2)
	}
	if p.where != nil {
		f.WriteString(" AND " + p.where.SQL)
	}
	if c := strings.TrimSpace(q.Params.Contains); c != "" && e.Contains != "" {
		fmt.Fprintf(&f, " AND (%s ILIKE %s)", e.Contains, b.bind("%"+escapeLike(c)+"%"))
	}
	if !(p.where != nil && p.where.NamesBySlugOrID) {
		if hidden := hiddenCondition(e, p.hidden, b); hidden != "" {
			f.WriteString(" AND " + hidden)
		}
	}
	for _, extra := range append(append([]func(func(any) string) string{}, q.Extra...), p.extra...) {
		f.WriteString(" AND " + extra(b.bind))
	}
	if visible := visibleTo(e, q.Caller, b); visible != "" {
		f.WriteString(" AND " + visible)
	}
	var w strings.Builder
	fmt.Fprintf(&w, "SELECT %s, ", e.Columns)
	if p.view != nil {
		for i, path := range p.view.dataPaths {
			fmt.Fprintf(&w, "%s AS hubd_view_%d, ", dataColumnSQL(e.DataColumn, path, p.viewLimits, b), i)
		}
	}
	fmt.Fprintf(&w, "jsonb_build_array(%s) AS hubd_keyset FROM %s WHERE ", strings.Join(keyCols, ", "), e.From)
	if d := q.Distinct; d != nil {
		id := e.Attr(e.ID).SQL
		fmt.Fprintf(&w, "%s IN (SELECT DISTINCT ON (%s) %s FROM %s WHERE %s ORDER BY %s, %s DESC)",
			id, d.Partition, id, e.From, f.String(), d.Partition, d.Latest)
	} else {
		w.WriteString(f.String())
	}
	if p.after != nil {
		w.WriteString(" AND " + keysetCondition(p, b))
	}
	w.WriteString(" ORDER BY " + strings.Join(orderBy, ", "))
	if p.limit > 0 {
		fmt.Fprintf(&w, " LIMIT %s", b.bind(p.limit+1))
	}
	if p.offset > 0 {
		fmt.Fprintf(&w, " OFFSET %s", b.bind(p.offset))
	}
	return w.String()
}

// hiddenCondition keeps the hidden entities of e out but those of the reasons named (nil: none, ["*"]:
// all); empty when nothing is kept out.
func hiddenCondition(e *Entity, reasons []string, b *binder) string {
	switch {
	case e.HiddenReason == "" || (len(reasons) == 1 && reasons[0] == "*"):
		return ""
	case len(reasons) > 0:
		return fmt.Sprintf("(%s = '' OR %s = ANY(%s::text[]))", e.HiddenReason, e.HiddenReason, b.bind(reasons))
	}
	return e.HiddenReason + " = ''"
}

func (o orderItem) expr() string {
	if o.attr.OrderSQL != "" {
		return o.attr.OrderSQL
	}
	return o.attr.SQL
}

// keysetCondition selects the rows after the previous page's last row. With one direction it is a row
// comparison the (org, key..., id) index serves; mixed directions expand to the equivalent OR chain.
func keysetCondition(p *plan, b *binder) string {
	vals := make([]string, len(p.order))
	for i, o := range p.order {
		vals[i] = b.bind(p.after[i]) + "::" + sqlCast[o.attr.Type]
	}
	same := true
	for _, o := range p.order {
		same = same && o.desc == p.order[0].desc
	}
	if same {
		cols := make([]string, len(p.order))
		for i, o := range p.order {
			cols[i] = o.expr()
		}
		op := ">"
		if p.order[0].desc {
			op = "<"
		}
		return fmt.Sprintf("(%s) %s (%s)", strings.Join(cols, ", "), op, strings.Join(vals, ", "))
	}
	var ors []string
	for i := range p.order {
		var ands []string
		for j := 0; j < i; j++ {
			ands = append(ands, fmt.Sprintf("%s = %s", p.order[j].expr(), vals[j]))
		}
		op := ">"
		if p.order[i].desc {
			op = "<"
		}
		ands = append(ands, fmt.Sprintf("%s %s %s", p.order[i].expr(), op, vals[i]))
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")"
}

// parseOrderBy reads 'Field', 'ASC:Field' or 'DESC:Field' items and appends the ID tie-break.
func parseOrderBy(e *Entity, s string) ([]orderItem, error) {
	var out []orderItem
	seen := map[string]bool{}
	if strings.TrimSpace(s) != "" {
		for _, item := range strings.Split(s, ",") {
			item = strings.TrimSpace(item)
			name, desc := item, false
			if dir, field, ok := strings.Cut(item, ":"); ok {
				name = field
				switch strings.ToUpper(dir) {
				case "ASC":
				case "DESC":
					desc = true
				default:
					return nil, apierr.UserInput(fmt.Sprintf("order_by: %q must be Field, ASC:Field or DESC:Field", item), apierr.Item{Item: "order_by", Description: "bad direction"})
				}
			}
			a := e.Attr(name)
			if a == nil || !a.Orderable {
				return nil, apierr.UserInput(fmt.Sprintf("order_by: %s lists cannot be ordered by %q; use one of: %s", e.Name, name,
					strings.Join(e.OrderFields(), ", ")), apierr.Item{Item: "order_by", Description: "unknown field " + name})
			}
			if seen[name] {
				return nil, apierr.UserInput("order_by: "+name+" is named twice", apierr.Item{Item: "order_by", Description: "duplicate"})
			}
			seen[name] = true
			out = append(out, orderItem{attr: a, desc: desc})
		}
	}
	if !seen[e.ID] {
		desc := len(out) > 0 && out[len(out)-1].desc
		out = append(out, orderItem{attr: e.Attr(e.ID), desc: desc})
	}
	return out, nil
}

func parseIncludes(e *Entity, s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, name := range splitList(s) {
		if e.include(name) == nil {
			return nil, apierr.UserInput(fmt.Sprintf("include: %q is not a related entity of %s; use one of: %s", name, e.Name, strings.Join(e.IncludeNames(), ", ")),
				apierr.Item{Item: "include", Description: "unknown name " + name})
		}
		out[name] = true
	}
	return out, nil
}

func parseHidden(s string) ([]string, error) {
	reasons := splitList(s)
	for _, r := range reasons {
		if r == "*" && len(reasons) > 1 {
			return nil, apierr.UserInput("include_hidden: * stands alone", apierr.Item{Item: "include_hidden", Description: "* with other reasons"})
		}
	}
	return reasons, nil
}

// parseSelect validates select and returns the fields to return: those named, the ones always returned
// (IDs, parent IDs, Slug) and those the where, contains and order_by use. nil means all fields.
func parseSelect(e *Entity, s string, p *plan) (map[string]bool, error) {
	names := splitList(s)
	if len(names) == 0 {
		return nil, nil
	}
	out := map[string]bool{}
	for _, n := range names {
		if !e.knowsSelectName(n) {
			return nil, unknownSelectName(e, n)
		}
		if n == "Data" {
			return nil, apierr.UserInput("select: Data is not a field; configuration data is read from the data endpoints",
				apierr.Item{Item: "select", Description: "Data cannot be selected"})
		}
		if field, _, dotted := strings.Cut(n, "."); dotted {
			if in := e.filledBy(field); !p.includes[in.Name] {
				return nil, apierr.UserInput(fmt.Sprintf("select: %s is a field of the %s that include=%s expands; add %s to include", n, field, in.Name, in.Name),
					apierr.Item{Item: "select", Description: n + " without include " + in.Name})
			}
		}
		out[n] = true
	}
	for _, a := range e.Attributes {
		if a.Always {
			out[a.Name] = true
		}
	}
	if p.where != nil {
		for _, n := range p.where.Attributes {
			out[n] = true
		}
	}
	for _, o := range p.order {
		out[o.attr.Name] = true
	}
	return out, nil
}

// Projection validates the select and include of a read of one entity (lists validate theirs in Run):
// the fields to return (nil: all) and the related entities to expand.
func Projection(e *Entity, sel, include string) (fields, includes map[string]bool, err error) {
	if includes, err = parseIncludes(e, include); err != nil {
		return nil, nil, err
	}
	if fields, err = parseSelect(e, sel, &plan{includes: includes}); err != nil {
		return nil, nil, err
	}
	return fields, includes, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// signature identifies the query a continue token belongs to: the collection and every parameter but
// limit and continue.
func (q Query) signature(p *plan) string {
	prm := q.Params
	parts := map[string]string{
		"path": q.Path, "where": prm.Where, "contains": prm.Contains, "select": prm.Select, "include": prm.Include,
		"include_hidden": prm.IncludeHidden, "order_by": prm.OrderBy, "org": q.Caller.OrganizationID.String(),
	}
	if prm.Filter != "" {
		parts["filter"] = prm.Filter
	}
	if p.filter != nil {
		parts["filter_hash"] = p.filter.Hash // a changed Filter ends the pages of the old one
	}
	if prm.View != "" {
		parts["view"] = prm.View
	}
	if prm.ViewDefinition != nil {
		parts["view_hash"] = prm.ViewDefinition.Hash // as does a changed View
	}
	keys := slices.Sorted(maps.Keys(parts))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q;", k, parts[k])
	}
	return b.String()
}
