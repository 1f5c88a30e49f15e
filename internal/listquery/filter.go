package listquery

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// FilterDefinition is a stored Filter as lists apply it (filter=): its Where is ANDed with the request's
// where, its WhereData and ResourceType with the data condition (Units), and its IncludeHidden applies when
// the request names none. Hash binds continue tokens to the definition.
type FilterDefinition struct {
	ID            uuid.UUID
	From          string
	Hash          string
	Where         string
	WhereData     string
	ResourceType  string
	IncludeHidden string
}

// applyFilter adds the Filter in force (p.filter) to plan p of entity e: its conditions, compiled apart
// from the request's where (so positions in an error of either stay right) and ANDed with it.
func applyFilter(e *Entity, p *plan, b *binder) error {
	def := p.filter
	if def.From != e.Name {
		return apierr.Validation(fmt.Sprintf("filter: Filter %s selects %s, not %s", def.ID, def.From, e.Name),
			apierr.Item{Item: "filter", Description: "a Filter of " + def.From})
	}
	where, data, err := def.compile(e, b)
	if err != nil {
		return err
	}
	p.where = and(p.where, where)
	if data != nil {
		p.extra = append(p.extra, data)
	}
	return nil
}

// compile compiles a Filter's Where (nil when it has none) and its data condition (nil when it has
// none) for entity e. Both were checked when the Filter was written; a registry change since can still
// refuse them.
func (def *FilterDefinition) compile(e *Entity, b *binder) (*Compiled, func(bind func(any) string) string, error) {
	var where *Compiled
	if def.Where != "" {
		expr, err := Parse(def.Where)
		if err == nil {
			where, err = compileWhere(e, expr, b)
		}
		if err != nil {
			return nil, nil, apierr.Validation(fmt.Sprintf("filter: the Where of Filter %s no longer applies: %v", def.ID, err),
				apierr.Item{Item: "filter", Description: "Where no longer applies"})
		}
	}
	if def.WhereData == "" && def.ResourceType == "" {
		return where, nil, nil
	}
	data, err := DataCondition(e.DataColumn, def.WhereData, def.ResourceType)
	if err != nil || e.DataColumn == "" {
		return nil, nil, apierr.Validation(fmt.Sprintf("filter: the WhereData of Filter %s does not apply to %s lists", def.ID, e.Name),
			apierr.Item{Item: "filter", Description: "WhereData does not apply"})
	}
	return where, data, nil
}

// and is the conjunction of two compiled expressions (either may be nil).
func and(a, b *Compiled) *Compiled {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &Compiled{SQL: "(" + a.SQL + ") AND (" + b.SQL + ")", Attributes: append(append([]string{}, a.Attributes...), b.Attributes...),
		NamesBySlugOrID: a.NamesBySlugOrID || b.NamesBySlugOrID}
}

// Selecting reports, in one statement, which of defs (Filters of e) select the entity id of e: its row
// of the caller's organization, visible to the caller, meets each one's Where, data condition and
// IncludeHidden. found is false when the caller has no such entity.
func Selecting(ctx context.Context, conn db.DBTX, e *Entity, caller authz.Scope, id uuid.UUID, defs []FilterDefinition) (selects []bool, found bool, err error) {
	b := &binder{}
	b.bind(caller.OrganizationID)
	idParam := b.bind(id)
	conds := make([]string, len(defs))
	for i, def := range defs {
		parts := []string{"true"}
		where, data, err := def.compile(e, b)
		if err != nil {
			return nil, false, err
		}
		if where != nil {
			parts = append(parts, "("+where.SQL+")")
		}
		if data != nil {
			parts = append(parts, "("+data(b.bind)+")")
		}
		hidden, _ := parseHidden(def.IncludeHidden) // checked when the Filter was written
		if cond := hiddenCondition(e, hidden, b); cond != "" {
			parts = append(parts, cond)
		}
		conds[i] = "(" + strings.Join(parts, " AND ") + ")"
	}
	sql := fmt.Sprintf("SELECT ARRAY[%s]::boolean[] FROM %s WHERE %s = $1 AND %s = %s", strings.Join(conds, ", "), e.From, e.Org, e.Attr(e.ID).SQL, idParam)
	if visible := visibleTo(e, caller, b); visible != "" {
		sql += " AND " + visible
	}
	err = conn.QueryRow(ctx, sql, b.args...).Scan(&selects)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, store.Translate(err)
	}
	return selects, true, nil
}
