package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/event"
)

// Store holds the pool and the event log every transaction appends its events to.
type Store struct {
	Pool   *pgxpool.Pool
	Events *event.Log
	log    *slog.Logger
	// statements counts the statements sent through the pool (Statements).
	statements *statementCounter
}

// statementCounter is a pgx tracer that counts statements, for tests that bound the database work of an
// operation (how many statements one commit costs however many polls wait).
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Statements sent in a batch (a transaction's BEGIN and first statement) count one each.
func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.n.Add(1)
}

func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Statements is how many statements this Store has sent so far.
func (s *Store) Statements() int64 { return s.statements.n.Load() }

// DefaultMaxConns is the pool size when neither the configuration nor the URL (pool_max_conns) sets one:
// four connections per core, at least 16. Requests spend most of their time waiting on the database
// (round trips, commits), not computing, so a pool the size of the cores (pgxpool's default) leaves
// them queueing for a connection while PostgreSQL idles; and commits of concurrent transactions are
// flushed together only when there are concurrent transactions.
func DefaultMaxConns() int32 { return int32(max(16, 4*runtime.NumCPU())) }

// Open connects to PostgreSQL. It does not wait for the server: Ping reports reachability. maxConns
// sizes the pool (0: pool_max_conns of the URL, else DefaultMaxConns).
func Open(ctx context.Context, url string, maxConns int32, log *slog.Logger) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing database URL: %w", err)
	}
	switch {
	case maxConns > 0:
		cfg.MaxConns = maxConns
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns()
	}
	cfg.AfterConnect = registerTypes
	counter := &statementCounter{}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("creating database pool: %w", err)
	}
	return &Store{Pool: pool, Events: &event.Log{Pool: pool, Logger: log}, log: log, statements: counter}, nil
}

// registerTypes makes jsonb read into json.RawMessage a copy of the bytes PostgreSQL sent (always valid
// JSON) instead of a validating decode (a list page reads several jsonb columns of every row), and
// uuid.UUID travel as 16 binary bytes rather than through its text form.
func registerTypes(_ context.Context, conn *pgx.Conn) error {
	pgxuuid.Register(conn.TypeMap())
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
	conn.TypeMap().RegisterType(&pgtype.Type{Name: "jsonb", OID: pgtype.JSONBOID, Codec: &pgtype.JSONBCodec{
		Marshal: json.Marshal,
		Unmarshal: func(data []byte, v any) error {
			if raw, ok := v.(*json.RawMessage); ok {
				*raw = append((*raw)[:0:0], data...)
				return nil
			}
			return json.Unmarshal(data, v)
		},
	}})
	return nil
}

// uuidCodec is pgx's uuid codec, reading straight into uuid.UUID. pgx plans a scan into a sql.Scanner
// (uuid.UUID is one) before it tries the wrappers pgxuuid registers, so without it every UUID read would
// go through its text form: formatted by pgx, parsed again by uuid.Scan, two allocations each.
type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		if next := c.UUIDCodec.PlanScan(m, oid, format, (*pgxuuid.UUID)(nil)); next != nil {
			return uuidScan{next}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

// uuidScan scans into a uuid.UUID as into the pgxuuid.UUID it is the same bytes of.
type uuidScan struct{ next pgtype.ScanPlan }

func (p uuidScan) Scan(src []byte, dst any) error {
	return p.next.Scan(src, (*pgxuuid.UUID)(dst.(*uuid.UUID)))
}

// Close stops the event sequencer and closes the pool.
func (s *Store) Close() {
	s.Events.Close()
	s.Pool.Close()
}

// Q returns the queries bound to the pool, for reads outside a transaction. Their errors are translated.
func (s *Store) Q() *db.Queries { return queries(s.Pool) }

// Conn is where a read runs: the pool (Store.Conn) or a write's transaction (a *Tx). Its own statements
// are the list language's (errors untranslated); Queries runs the generated ones on it, translated.
type Conn interface {
	db.DBTX
	Queries() *db.Queries
}

// Conn is the pool as a Conn, for reads outside a transaction.
func (s *Store) Conn() Conn { return poolConn{s.Pool} }

type poolConn struct{ *pgxpool.Pool }

func (p poolConn) Queries() *db.Queries { return queries(p.Pool) }

// Tx is a write transaction. Q runs the generated queries in it (errors translated); its own Exec, Query
// and QueryRow run raw statements (errors untranslated, for the list language); Emit collects the events
// it causes.
type Tx struct {
	*pgTx
	Q      *db.Queries
	DryRun bool
	events []event.Event
}

// Queries are the generated queries in the transaction (Q), so a Tx is a Conn.
func (t *Tx) Queries() *db.Queries { return t.Q }

// Emit records an event the change causes. It is written with the change or not at all.
func (t *Tx) Emit(e event.Event) { t.events = append(t.events, e) }

// TxOptions choose how WithTx ends.
type TxOptions struct {
	// DryRun runs fn and every deferred check, then rolls back: nothing is stored and no event is
	// emitted, but IDs handed out are never reused (they are random UUIDs).
	DryRun bool
}

// maxAttempts bounds retries of transactions that lost a serialization or deadlock race.
const maxAttempts = 3

// WithTx runs fn in a transaction and commits it (or, for a dry run, checks and rolls back). A
// serialization failure or deadlock is retried; fn must therefore do nothing outside the database.
func (s *Store) WithTx(ctx context.Context, opts TxOptions, fn func(*Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		err = s.runTx(ctx, opts, fn)
		if !Retryable(err) {
			break
		}
		s.log.DebugContext(ctx, "retrying transaction", "attempt", attempt, "err", err)
	}
	return TranslateIn(ctx, err)
}

func (s *Store) runTx(ctx context.Context, opts TxOptions, fn func(*Tx) error) error {
	appended, events, err := s.commitTx(ctx, opts, fn)
	if err != nil || !events {
		return err
	}
	// The change is stored; its events have their cursors before the caller answers (a client that reads
	// the log after a write finds the write's events). The connection is back in the pool by now: the
	// pass this may wait for needs one.
	s.Events.Committed(ctx, appended)
	return nil
}

// commitTx runs fn in a transaction on a connection of its own and commits it, reporting whether it
// appended events.
func (s *Store) commitTx(ctx context.Context, opts TxOptions, fn func(*Tx) error) (appended event.Appended, events bool, err error) {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return appended, false, fmt.Errorf("beginning transaction: %w", err)
	}
	ptx := &pgTx{conn: conn.Conn()}
	defer func() {
		// Roll back even when the request's context has ended (a no-op after the commit). The pool does
		// not take back a connection still in a transaction: it closes it.
		ptx.rollback(context.WithoutCancel(ctx))
		conn.Release()
	}()

	tx := &Tx{pgTx: ptx, Q: queries(ptx), DryRun: opts.DryRun}
	if err := fn(tx); err != nil {
		return appended, false, err
	}
	if opts.DryRun {
		// Deferred constraints fire now, so a dry run fails where the real write would.
		_, err := ptx.Exec(ctx, "SET CONSTRAINTS ALL IMMEDIATE")
		return appended, false, err
	}
	if len(tx.events) == 0 {
		if err := ptx.commit(ctx); err != nil {
			return appended, false, fmt.Errorf("committing: %w", err)
		}
		return appended, false, nil
	}
	// The events' statement goes with the commit, in one round trip.
	if appended, err = s.Events.Append(ctx, ptx.committing(), tx.events); err != nil {
		return appended, false, fmt.Errorf("committing: %w", err)
	}
	return appended, true, nil
}

// Retryable reports a serialization failure or deadlock: running the statement or transaction again may succeed.
func Retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// Savepoint runs fn in a savepoint of t: when fn succeeds its changes and events join the transaction,
// when it fails they are undone and the transaction goes on. Bulk operations run each item this way.
func (t *Tx) Savepoint(ctx context.Context, fn func(*Tx) error) error {
	name, err := t.savepoint(ctx)
	if err != nil {
		return fmt.Errorf("creating savepoint: %w", err)
	}
	inner := &Tx{pgTx: t.pgTx, Q: t.Q, DryRun: t.DryRun}
	if err := fn(inner); err != nil {
		if rerr := t.endSavepoint(ctx, name, false); rerr != nil {
			return TranslateIn(ctx, fmt.Errorf("rolling back savepoint: %w", rerr))
		}
		return TranslateIn(ctx, err)
	}
	if err := t.endSavepoint(ctx, name, true); err != nil {
		return fmt.Errorf("releasing savepoint: %w", err)
	}
	t.events = append(t.events, inner.events...)
	return nil
}
