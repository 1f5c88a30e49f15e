// Package listquery builds the SQL of every list operation from a per-entity description, so all lists
// share one path: scoped to the caller's organization (and parent), ordered by ID. The query language,
// projections and keyset pagination extend this path; they are the only place dynamic SQL is built, and
// user text reaches it only as bind parameters.
package listquery

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/store"
)

// Entity describes how one family is listed. Every field is a constant of the code, never client text.
type Entity struct {
	// Name is the entity type (Space).
	Name string
	// From is the FROM clause (a table, or a join for families read with their related rows).
	From string
	// Columns is the select list; it must yield the columns of the row type the family scans into.
	Columns string
	// IDColumn orders the list and breaks ties.
	IDColumn string
	// OrgColumn scopes the list to one organization.
	OrgColumn string
}

// Condition restricts a list to one parent (a Space, a Unit...): Column = Value.
type Condition struct {
	Column string
	Value  any
}

// Query is one list request.
type Query struct {
	Entity         *Entity
	OrganizationID uuid.UUID
	Scope          []Condition
}

// SQL returns the statement and its bind arguments.
func (q Query) SQL() (string, []any) {
	args := []any{q.OrganizationID}
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s FROM %s WHERE %s = $1", q.Entity.Columns, q.Entity.From, q.Entity.OrgColumn)
	for _, c := range q.Scope {
		args = append(args, c.Value)
		fmt.Fprintf(&b, " AND %s = $%d", c.Column, len(args))
	}
	fmt.Fprintf(&b, " ORDER BY %s", q.Entity.IDColumn)
	return b.String(), args
}

// Run executes q and scans each row into T by column name (T is a gen/db row type).
func Run[T any](ctx context.Context, conn db.DBTX, q Query) ([]T, error) {
	sql, args := q.SQL()
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, store.Translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[T])
	if err != nil {
		return nil, store.Translate(err)
	}
	return out, nil
}
