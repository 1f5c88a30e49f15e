package event

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
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
// Cursor order is commit order, without making commits wait for each other. A writer appends its events
// with no cursor (pending) inside its transaction, so they commit or vanish with the change. After the
// commit, a sequencer pass numbers the committed pending events: it takes the sequencer's advisory lock,
// gives each pending event the next cursor in the order they were written, records the last cursor in
// event_sequencer and commits, all under that lock. Passes therefore commit one at a time and each numbers after the
// previous one, so a reader that sees cursor N has seen every cursor below N that will ever exist: no
// event can later appear below a cursor a reader passed. (A cursor taken from a sequence inside the
// writer's transaction would not do: a transaction holding a lower cursor could commit after a reader
// passed a higher one. Holding a lock from the insert through the commit would make every commit of
// every organization wait for the one before it, so PostgreSQL could never flush commits together.)
//
// When the replica is quiet (its sequencer idle, none of its other writers numbering), a writer that
// finds the lock free numbers its events itself, with every other pending event, in its own transaction
// (Append), and holds the lock through its commit like a pass: its events are delivered at its commit,
// with no pass after it. Otherwise its events stay pending and it never waits for the lock: under load,
// writers holding the lock through their commits would hold up the passes that number many commits at
// once. A write whose events stayed pending waits for a pass that starts after its commit (Committed,
// Sequence), so its events are readable when the write's response is sent. Each replica runs one pass
// at a time for all its writers, so under load one pass numbers the events of many commits. Passes of
// several replicas serialize on the lock; any replica's pass numbers any replica's events, and every
// replica sweeps periodically, so events of a replica that stopped between its commit and its pass
// still get their cursors.
type Log struct {
	Pool   *pgxpool.Pool
	Logger *slog.Logger
	// Signal, when set, hears of every numbering this replica commits, a pass's or a writer's (its last
	// cursor and organizations), before the writers waiting for it go on: this replica's Notifier learns
	// of a change before the change's response is sent, without waiting for its own NOTIFY to come back.
	Signal func(Change)
	// QuietFamilies are the event families (the part of an event type before its dot) whose changes never
	// alter what authentication remembers of members: memberships, roles, Groups, Space grants. Passes
	// that number only their events leave it remembered; any other family ends it (Notifier.WatchAccess).
	QuietFamilies []string

	startOnce sync.Once
	stop      context.CancelFunc
	done      chan struct{}
	wake      chan struct{}
	mu        sync.Mutex
	waiting   chan struct{} // closed when a pass that started after its waiters arrived has finished
	passing   bool          // the sequencer is at work
	numbering bool          // a writer of this replica may hold the lock to number its events (Append)
}

// Channel is the NOTIFY channel a sequencer pass signals (payload: the newest cursor and the
// organizations whose events it numbered).
const Channel = "hubd_events"

// sequenceBatch bounds the events one pass numbers in one statement; a pass repeats until none are left.
const sequenceBatch = 5000

// sweepInterval is how often a replica looks for pending events nobody is waiting for (those of a replica
// that stopped after its commit, or written by other means).
const sweepInterval = time.Second

// Appended is what Append did with a transaction's events, for Committed or Abandoned.
type Appended struct {
	numbered int // -1: left pending
	payload  string
	holds    bool // the transaction holds this replica's numbering turn
}

// Append writes a transaction's events in its transaction, its last statement (q may send it with the
// commit, as store does; Append's error is then the commit's too). When this replica's sequencer is idle
// and no other of its writers is numbering, it asks to number them; they are numbered if the sequencer's
// lock is free at once (the lock is then held until the commit), else left pending. Once the transaction
// has ended, Committed or Abandoned must be called (Append calls Abandoned itself when it fails).
func (l *Log) Append(ctx context.Context, q db.DBTX, events []Event) (a Appended, err error) {
	l.mu.Lock()
	a.holds = !l.numbering && !l.passing && l.waiting == nil
	l.numbering = l.numbering || a.holds
	l.mu.Unlock()
	defer func() {
		if a.holds && (err != nil || a.numbered < 0) {
			l.release(a)
			a.holds = false
		}
	}()
	rows := make([]appendedEvent, len(events))
	for i, e := range events {
		rows[i] = appendedEvent{OrganizationID: e.OrganizationID, EventType: e.EventType, SpaceID: e.SpaceID, TargetID: e.TargetID,
			SubjectEntityType: e.SubjectEntityType, SubjectEntityID: e.SubjectEntityID, Payload: e.Payload}
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return a, fmt.Errorf("encoding events: %w", err)
	}
	r, err := db.New(q).EventLogAppend(ctx, db.EventLogAppendParams{Events: data, Number: a.holds, Batch: sequenceBatch, QuietFamilies: l.QuietFamilies, MaxOrgs: maxNotifiedOrgs})
	if err != nil {
		return a, fmt.Errorf("appending events: %w", err)
	}
	a.numbered, a.payload = int(r.Numbered), r.Payload
	return a, nil
}

// appendedEvent is an event as hubd_append_events reads it.
type appendedEvent struct {
	OrganizationID    uuid.UUID  `json:"organization_id"`
	EventType         string     `json:"event_type"`
	SpaceID           *uuid.UUID `json:"space_id"`
	TargetID          *uuid.UUID `json:"target_id"`
	SubjectEntityType string     `json:"subject_entity_type"`
	SubjectEntityID   uuid.UUID  `json:"subject_entity_id"`
	Payload           any        `json:"payload"`
}

// Committed returns once the events of a committed transaction have their cursors: at once when Append
// numbered them (this replica's Notifier hears of them now, before the write's response), else after a
// pass (Sequence). It also waits for a pass when Append numbered a full batch: more may be pending.
func (l *Log) Committed(ctx context.Context, a Appended) {
	l.release(a)
	if a.numbered > 0 && l.Signal != nil {
		l.Signal(parsePayload(a.payload))
	}
	if a.numbered < 0 || a.numbered >= sequenceBatch {
		l.Sequence(ctx)
	}
}

// Abandoned ends what Append began for a transaction that did not commit: the replica's numbering turn
// passes on (PostgreSQL released the lock with the transaction).
func (l *Log) Abandoned(a Appended) { l.release(a) }

// release passes this replica's numbering turn on, if the transaction held it.
func (l *Log) release(a Appended) {
	if a.holds {
		l.mu.Lock()
		l.numbering = false
		l.mu.Unlock()
	}
}

// Sequence returns once every event committed before the call has its cursor: it waits for a sequencer
// pass that starts after the call (or for ctx). Call it after committing events.
func (l *Log) Sequence(ctx context.Context) {
	l.startOnce.Do(l.start)
	l.mu.Lock()
	if l.waiting == nil {
		l.waiting = make(chan struct{})
	}
	ch := l.waiting
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // a wake-up is already due
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// Start starts this replica's sequencer (Sequence starts it too, when first called).
func (l *Log) Start() { l.startOnce.Do(l.start) }

func (l *Log) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.done, l.wake = cancel, make(chan struct{}), make(chan struct{}, 1)
	go l.runSequencer(ctx)
}

// Close stops the sequencer; events still pending are numbered by another replica's sweep or by this
// one's next start.
func (l *Log) Close() {
	l.startOnce.Do(func() {}) // never start after Close
	if l.stop != nil {
		l.stop()
		<-l.done
	}
}

func (l *Log) runSequencer(ctx context.Context) {
	defer close(l.done)
	sweep := time.NewTicker(sweepInterval)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-sweep.C:
		}
		// The waiters that arrived so far are served by the pass that starts now; later ones wait for
		// the next.
		l.mu.Lock()
		served := l.waiting
		l.waiting = nil
		l.passing = true
		l.mu.Unlock()
		if err := l.sequencePending(ctx, served != nil); err != nil && ctx.Err() == nil {
			l.Logger.Error("numbering committed events", "err", err)
		}
		l.mu.Lock()
		l.passing = false
		l.mu.Unlock()
		if served != nil {
			close(served)
		}
	}
}

// sequencePending runs passes until no committed event is pending. A sweep first looks whether any is,
// without locking, so that an idle replica's sweep writes nothing; a writer waiting has just committed.
func (l *Log) sequencePending(ctx context.Context, writerWaiting bool) error {
	for {
		if !writerWaiting {
			pending, err := db.New(l.Pool).EventLogHasPending(ctx)
			if err != nil || !pending {
				return err
			}
		}
		writerWaiting = false
		n, err := l.pass(ctx)
		if err != nil || n < sequenceBatch {
			return err
		}
	}
}

// pass numbers up to sequenceBatch pending events in one statement (its own transaction, one round trip)
// and signals them on commit.
func (l *Log) pass(ctx context.Context) (int, error) {
	r, err := db.New(l.Pool).EventLogSequencePass(ctx, db.EventLogSequencePassParams{Batch: sequenceBatch, QuietFamilies: l.QuietFamilies, MaxOrgs: maxNotifiedOrgs})
	if err != nil {
		return 0, fmt.Errorf("numbering events: %w", err)
	}
	if r.Numbered > 0 && l.Signal != nil {
		l.Signal(parsePayload(r.Payload))
	}
	return int(r.Numbered), nil
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
