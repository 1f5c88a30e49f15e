package eventfilter

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/store"
)

// Reader shares the reads of the event log among the long polls of a replica: the polls of one
// organization that read after the same cursor, at most the same number of entries, since the same
// notification (event.Generation) get one Batch from one read (one statement: the log and the grants
// of its events' Spaces and Targets), however many they are. A commit then costs one read per distinct
// cursor position, not one per waiting poll.
type Reader struct {
	Store    *store.Store
	Notifier *event.Notifier

	mu    sync.Mutex
	reads map[readKey]*sharedRead
	// sweeper drops finished reads while there are any (sweep).
	sweeper *time.Timer
}

type readKey struct {
	org   uuid.UUID
	after int64
	max   int32
}

// sharedRead is one read in progress or done; done is closed when batch or err is set, at finished.
type sharedRead struct {
	gen      event.Generation
	finished time.Time
	done     chan struct{}
	batch    *Batch
	err      error
}

// readTimeout bounds a shared read, which runs on after the poll that started it has gone.
const readTimeout = 30 * time.Second

// readLife is how long a finished read is kept for polls to join: the polls one notification woke read
// within moments of each other. A poll that comes later reads again; keeping reads longer would hold
// the batches of every position polls have passed (a Channel catching up reads a new one each time).
const readLife = 2 * time.Second

// NewReader returns a Reader of the store's log, its reads renewed at the notifier's notifications.
func NewReader(st *store.Store, n *event.Notifier) *Reader {
	return &Reader{Store: st, Notifier: n, reads: map[readKey]*sharedRead{}}
}

// Read returns at most max entries of org after cursor after, in cursor order, with their grants: the
// Batch of a read that began since the organization's latest notification, or of a new one.
func (r *Reader) Read(ctx context.Context, org uuid.UUID, after int64, max int) (*Batch, error) {
	return r.shared(ctx, readKey{org: org, after: after, max: int32(max)}, nil)
}

// WorkerEvents is Read for worker event-cursor polls (bridgeworker.EventReader). A poll that begins a new
// read claims what it reads for its cursor in the read's statement (claim.Tried), so a poll woken on its
// own reads and claims in one round trip; a poll that joins another's read claims by itself.
func (r *Reader) WorkerEvents(ctx context.Context, org uuid.UUID, after int64, max int, claim *bridgeworker.CursorClaim) (bridgeworker.EventBatch, error) {
	b, err := r.shared(ctx, readKey{org: org, after: after, max: int32(max)}, claim)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// shared returns the Batch of the read of key that began since the organization's latest notification,
// or begins one, with claim when given.
func (r *Reader) shared(ctx context.Context, key readKey, claim *bridgeworker.CursorClaim) (*Batch, error) {
	gen, shared := r.Notifier.Generation(key.org)
	if !shared {
		return r.read(ctx, key, claim)
	}
	r.mu.Lock()
	sr, ok := r.reads[key]
	if !ok || sr.gen != gen {
		sr = &sharedRead{gen: gen, done: make(chan struct{})}
		r.reads[key] = sr
		r.mu.Unlock()
		// The read serves every poll that joins it, so it outlives a client that goes away (its claim
		// too: the events are then lost to that cursor, as when the client goes after a claim).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		batch, err := r.read(rctx, key, claim)
		cancel()
		r.mu.Lock()
		sr.batch, sr.err, sr.finished = batch, err, time.Now()
		if err != nil && r.reads[key] == sr {
			// The polls waiting for this read get its error; later ones read again.
			delete(r.reads, key)
		}
		if r.sweeper == nil {
			r.sweeper = time.AfterFunc(readLife, r.sweep)
		}
		r.mu.Unlock()
		close(sr.done)
	} else {
		r.mu.Unlock()
	}
	select {
	case <-sr.done:
		return sr.batch, sr.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *Reader) read(ctx context.Context, key readKey, claim *bridgeworker.CursorClaim) (*Batch, error) {
	return read(ctx, r.Store.Q(), key.org, key.after, int(key.max), claim)
}

// sweep drops the reads finished more than readLife ago, and comes again while reads are left.
func (r *Reader) sweep() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for k, sr := range r.reads {
		if !sr.finished.IsZero() && now.Sub(sr.finished) >= readLife {
			delete(r.reads, k)
		}
	}
	r.sweeper = nil
	if len(r.reads) > 0 {
		r.sweeper = time.AfterFunc(readLife, r.sweep)
	}
}
