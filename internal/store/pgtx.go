package store

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgTx is a write transaction on one pooled connection. It keeps the transaction's state itself, rather
// than in a pgx.Tx, so that its first statement can carry the BEGIN and its last one the COMMIT, each
// in the same round trip (a pgx.Batch): a transaction costs as many round trips as it has statements.
type pgTx struct {
	conn       *pgx.Conn
	begun      bool // BEGIN has been sent
	ended      bool // the transaction has committed or rolled back
	savepoints int
}

// first sends BEGIN and the transaction's first statement together; the statement's result is the next
// one of the batch, which must be closed once it has been read.
func (t *pgTx) first(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue("begin")
	b.Queue(sql, args...)
	t.begun = true
	br := t.conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, err
	}
	return br, nil
}

func (t *pgTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.begun {
		return t.conn.Exec(ctx, sql, args...)
	}
	br, err := t.first(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (t *pgTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.begun {
		return t.conn.Query(ctx, sql, args...)
	}
	br, err := t.first(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, close: br.Close}, nil
}

func (t *pgTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.begun {
		return t.conn.QueryRow(ctx, sql, args...)
	}
	br, err := t.first(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), close: br.Close}
}

// savepoint starts a savepoint (and the transaction, if no statement has).
func (t *pgTx) savepoint(ctx context.Context) (string, error) {
	if !t.begun {
		t.begun = true
		if _, err := t.conn.Exec(ctx, "begin"); err != nil {
			return "", err
		}
	}
	t.savepoints++
	name := "sp_" + strconv.Itoa(t.savepoints)
	_, err := t.conn.Exec(ctx, "savepoint "+name)
	return name, err
}

// endSavepoint keeps what was done since the savepoint name, or undoes it.
func (t *pgTx) endSavepoint(ctx context.Context, name string, keep bool) error {
	sql := "rollback to savepoint " + name
	if keep {
		sql = "release savepoint " + name
	}
	_, err := t.conn.Exec(ctx, sql)
	return err
}

// commit commits the transaction, if a statement began one.
func (t *pgTx) commit(ctx context.Context) error {
	if !t.begun {
		t.ended = true
		return nil
	}
	tag, err := t.conn.Exec(ctx, "commit")
	t.ended = t.conn.PgConn().TxStatus() == 'I'
	if err == nil && tag.String() == "ROLLBACK" {
		err = pgx.ErrTxCommitRollback
	}
	return err
}

// rollback rolls the transaction back, if a statement began one and it has not ended. The pool closes a
// connection that is still in a transaction when it is released (when this fails).
func (t *pgTx) rollback(ctx context.Context) {
	if t.begun && !t.ended {
		_, _ = t.conn.Exec(ctx, "rollback")
		t.ended = true
	}
}

// committing runs one statement, the transaction's last, and the commit in one round trip: Append's
// statement.
func (t *pgTx) committing() lastStatement { return lastStatement{t} }

type lastStatement struct{ t *pgTx }

var errNotLast = errors.New("store: only a QueryRow statement can be sent with the commit")

func (l lastStatement) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errNotLast
}

func (l lastStatement) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errNotLast
}

func (l lastStatement) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	t := l.t
	b := &pgx.Batch{}
	begins := !t.begun
	if begins {
		b.Queue("begin")
	}
	b.Queue(sql, args...)
	b.Queue("commit")
	t.begun = true
	return committedRow{t: t, br: t.conn.SendBatch(ctx, b), begins: begins}
}

// committedRow is the row of a statement sent with the commit: scanning it reads the commit's outcome too.
type committedRow struct {
	t      *pgTx
	br     pgx.BatchResults
	begins bool
}

func (r committedRow) Scan(dest ...any) error {
	var err error
	if r.begins {
		_, err = r.br.Exec()
	}
	if err == nil {
		err = r.br.QueryRow().Scan(dest...)
	}
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = r.br.Exec()
	}
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	// Committed, or rolled back by a failed commit; a failed statement leaves it to be rolled back.
	r.t.ended = r.t.conn.PgConn().TxStatus() == 'I'
	if err == nil && tag.String() == "ROLLBACK" {
		err = pgx.ErrTxCommitRollback
	}
	return err
}

// batchRows are the rows of a transaction's first statement: closing them closes the batch.
type batchRows struct {
	pgx.Rows
	close  func() error
	closed bool
	err    error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.err = r.close()
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
	row   pgx.Row
	close func() error
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.close(); err == nil {
		err = cerr
	}
	return err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
