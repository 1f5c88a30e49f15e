package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// txConn is what a write transaction runs its statements on: the transaction (lazyTx) or a savepoint in it.
type txConn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	// Begin starts a savepoint.
	Begin(ctx context.Context) (pgx.Tx, error)
}

// lazyTx begins its transaction with its first statement, sent together with the BEGIN in one round trip
// (pgx.Batch.BeginTx) instead of two: every write transaction is a round trip shorter. Until then tx is
// nil and nothing has reached the server.
type lazyTx struct {
	conn *pgx.Conn
	tx   pgx.Tx
}

// begin sends BEGIN and the first statement; the statement's result is the next one of the batch, and
// the batch must be closed once it has been read.
func (l *lazyTx) begin(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue(sql, args...)
	br := l.conn.SendBatch(ctx, b)
	l.tx = br.Tx()
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	return br, nil
}

func (l *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if l.tx != nil {
		return l.tx.Exec(ctx, sql, args...)
	}
	br, err := l.begin(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (l *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if l.tx != nil {
		return l.tx.Query(ctx, sql, args...)
	}
	br, err := l.begin(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (l *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if l.tx != nil {
		return l.tx.QueryRow(ctx, sql, args...)
	}
	br, err := l.begin(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

// Begin starts a savepoint, beginning the transaction first if no statement has.
func (l *lazyTx) Begin(ctx context.Context) (pgx.Tx, error) {
	if l.tx == nil {
		tx, err := l.conn.Begin(ctx)
		if err != nil {
			return nil, err
		}
		l.tx = tx
	}
	return l.tx.Begin(ctx)
}

// commit commits the transaction, if a statement began one.
func (l *lazyTx) commit(ctx context.Context) error {
	if l.tx == nil {
		return nil
	}
	return l.tx.Commit(ctx)
}

// rollback rolls the transaction back, if a statement began one and it has not ended.
func (l *lazyTx) rollback(ctx context.Context) {
	if l.tx != nil {
		_ = l.tx.Rollback(ctx)
	}
}

// batchRows are the rows of a transaction's first statement: closing them closes the batch.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.err = r.br.Close()
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// batchRow is the row of a transaction's first statement: scanning it closes the batch.
type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
