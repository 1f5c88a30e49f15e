package listquery

import (
	"context"
	"reflect"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/store"
)

// Reads and deletes by key: how the entity kit reads a family's rows by ID, Slug or IDs and deletes one,
// with the statements built, like lists, from the Entity's constant SQL (values bound), so no family
// writes these queries. Rows scan into T, the family's generated row type, by its db tags. Every read
// keeps to the organization org; scope adds the family's own conditions (the Space of a Space-resident
// family).

// Get reads the row whose attribute attr (the ID or the Slug attribute) is value; lock holds it FOR
// UPDATE (of the family's own table) until conn's transaction ends. None is NotFound.
func Get[T any](ctx context.Context, conn db.DBTX, e *Entity, org uuid.UUID, scope []Condition, attr string, value any, lock bool) (*T, error) {
	columns := e.Columns
	if lock && e.LockedColumns != "" {
		columns = e.LockedColumns
	}
	b := &binder{}
	sql := "SELECT " + columns + " FROM " + e.From + " WHERE " + e.keyed(b, org, scope) + " AND " + e.Attr(attr).SQL + " = " + b.bind(value)
	if lock {
		sql += " FOR UPDATE OF " + e.Table
	}
	items, err := scanned[T](conn.Query(ctx, sql, b.args...))
	if err == nil && len(items) == 0 {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return nil, store.Translate(err)
	}
	return &items[0], nil
}

// GetAll reads the rows among ids (by the ID attribute), in no particular order.
func GetAll[T any](ctx context.Context, conn db.DBTX, e *Entity, org uuid.UUID, ids []uuid.UUID) ([]*T, error) {
	b := &binder{}
	sql := "SELECT " + e.Columns + " FROM " + e.From + " WHERE " + e.keyed(b, org, nil) + " AND " + e.Attr(e.ID).SQL + " = ANY(" + b.bind(ids) + "::uuid[])"
	items, err := scanned[T](conn.Query(ctx, sql, b.args...))
	if err != nil {
		return nil, store.Translate(err)
	}
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out, nil
}

// Delete deletes the row of ID id from the family's table (From must be that table alone) and reports
// how many rows went. Its error is the database's, for store.TranslateDelete.
func Delete(ctx context.Context, conn db.DBTX, e *Entity, org uuid.UUID, scope []Condition, id uuid.UUID) (int64, error) {
	if e.From != e.Table {
		panic("listquery: " + e.Name + " rows are not deleted from " + e.From + " alone")
	}
	b := &binder{}
	tag, err := conn.Exec(ctx, "DELETE FROM "+e.Table+" WHERE "+e.keyed(b, org, scope)+" AND "+e.Attr(e.ID).SQL+" = "+b.bind(id), b.args...)
	return tag.RowsAffected(), err
}

// keyed is the condition keeping a read to org and scope.
func (e *Entity) keyed(b *binder, org uuid.UUID, scope []Condition) string {
	where := e.Org + " = " + b.bind(org)
	for _, c := range scope {
		where += " AND " + c.Column + " = " + b.bind(c.Value)
	}
	return where
}

// scanned reads every row into a T, matching columns to T's fields by their db tags once.
func scanned[T any](rows pgx.Rows, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var items []T
	var dest []any
	var fields []int
	for rows.Next() {
		if fields == nil {
			if fields, err = fieldIndexes[T](rows.FieldDescriptions()); err != nil {
				return nil, err
			}
			dest = make([]any, len(fields))
		}
		var zero T
		items = append(items, zero)
		v := reflect.ValueOf(&items[len(items)-1]).Elem()
		for i, f := range fields {
			dest[i] = v.Field(f).Addr().Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
	}
	return items, rows.Err()
}
