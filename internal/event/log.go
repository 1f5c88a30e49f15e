package event

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubd/hubd/gen/db"
)

// Entry is one event of the log (the API's EventLogEntry).
type Entry struct {
	CursorID          int64
	EventType         string
	SpaceID           *uuid.UUID
	TargetID          *uuid.UUID
	SubjectEntityType string
	SubjectEntityID   uuid.UUID
	Payload           json.RawMessage
	CreatedAt         time.Time
}

// Log is the event log in PostgreSQL: the Sink every write transaction appends to, and what consumers
// read by cursor.
//
// Cursor order is commit order. A transaction takes a transaction-scoped advisory lock just before it
// inserts its events and holds it through its commit, so cursors are handed out one committing
// transaction at a time: when a reader sees cursor N, every transaction with a lower cursor has already
// committed. (Ordering by sequence alone is not enough: a transaction that took a lower cursor could
// commit after a reader passed a higher one.) The lock is held only for the insert and the commit.
type Log struct {
	Pool   *pgxpool.Pool
	Logger *slog.Logger
}

// Channel is the NOTIFY channel a commit of events signals (payload: the newest cursor).
const Channel = "hubd_events"

// Append writes a transaction's events, in its transaction, and signals them on commit.
func (l *Log) Append(ctx context.Context, tx pgx.Tx, events []Event) error {
	q := db.New(tx)
	if err := q.EventLogLock(ctx); err != nil {
		return fmt.Errorf("locking the event log: %w", err)
	}
	var last int64
	var orgs []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, e := range events {
		if !seen[e.OrganizationID] {
			seen[e.OrganizationID] = true
			orgs = append(orgs, e.OrganizationID)
		}
		payload, err := json.Marshal(e.Payload)
		if err != nil {
			return fmt.Errorf("encoding %s payload: %w", e.EventType, err)
		}
		if last, err = q.EventLogInsert(ctx, db.EventLogInsertParams{
			OrganizationID: e.OrganizationID, EventType: e.EventType, SpaceID: e.SpaceID, TargetID: e.TargetID,
			SubjectEntityType: e.SubjectEntityType, SubjectEntityID: e.SubjectEntityID, Payload: payload,
		}); err != nil {
			return fmt.Errorf("appending %s: %w", e.EventType, err)
		}
	}
	// NOTIFY is delivered only if the transaction commits.
	return q.EventLogNotify(ctx, notifyPayload(last, orgs))
}

// Read returns up to max events of an organization after the cursor, in order.
func (l *Log) Read(ctx context.Context, orgID uuid.UUID, after int64, max int) ([]Entry, error) {
	rows, err := db.New(l.Pool).EventLogRead(ctx, db.EventLogReadParams{OrganizationID: orgID, After: after, MaxEvents: int32(max)})
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		out[i] = Entry{CursorID: r.CursorID, EventType: r.EventType, SpaceID: r.SpaceID, TargetID: r.TargetID,
			SubjectEntityType: r.SubjectEntityType, SubjectEntityID: r.SubjectEntityID, Payload: r.Payload, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// Tail is the newest cursor: a new consumer starts after it.
func (l *Log) Tail(ctx context.Context) (int64, error) {
	return db.New(l.Pool).EventLogTail(ctx)
}

// pruneBatch bounds one delete, so pruning never holds many row locks or blocks writers for long.
const pruneBatch = 1000

// Prune deletes events older than retention and returns how many. It is safe to run on every replica
// at once: deletes of the same rows simply find them gone. It acts as no principal in any organization
// (retention, not a change to anyone's data), so it takes no Scope.
func (l *Log) Prune(ctx context.Context, retention time.Duration) (int64, error) {
	var total int64
	for {
		n, err := db.New(l.Pool).EventLogPrune(ctx, db.EventLogPruneParams{RetentionSeconds: int64(retention.Seconds()), Batch: pruneBatch})
		if err != nil {
			return total, err
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// RunPruner prunes every interval until ctx ends.
func (l *Log) RunPruner(ctx context.Context, retention, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := l.Prune(ctx, retention); err != nil && ctx.Err() == nil {
			l.Logger.Warn("pruning the event log", "err", err)
		} else if n > 0 {
			l.Logger.Info("pruned the event log", "events", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
