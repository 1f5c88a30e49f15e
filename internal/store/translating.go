package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hubd/hubd/gen/db"
)

// translating runs the generated queries and translates every error they return where it arises
// (Translate): a query a family forgot to translate can no longer reach a client as a raw database
// error (500). Translated errors keep the database error as their cause, so errors.Is(err, pgx.ErrNoRows), TranslateDelete
// and the retry of serialization failures still see it.
type translating struct{ db db.DBTX }

// queries returns the generated queries over conn, with errors translated.
func queries(conn db.DBTX) *db.Queries { return db.New(translating{db: conn}) }

func (t translating) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.db.Exec(ctx, sql, args...)
	return tag, Translate(err)
}

func (t translating) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, Translate(err)
	}
	return translatedRows{rows}, nil
}

func (t translating) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return translatedRow{t.db.QueryRow(ctx, sql, args...)}
}

type translatedRow struct{ pgx.Row }

func (r translatedRow) Scan(dest ...any) error { return Translate(r.Row.Scan(dest...)) }

type translatedRows struct{ pgx.Rows }

func (r translatedRows) Scan(dest ...any) error { return Translate(r.Rows.Scan(dest...)) }
func (r translatedRows) Err() error             { return Translate(r.Rows.Err()) }
