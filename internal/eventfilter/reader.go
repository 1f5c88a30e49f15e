package eventfilter

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/store"
)

// Reader shares the reads of the event log among the long polls of a replica: the polls of one
// organization that read after the same cursor, at most the same number of entries, since the same
// notification (event.Generation) get one Batch from one read (three statements), however many they are.
// A commit then costs one read per distinct cursor position, not one per waiting poll.
type Reader struct {
	Store    *store.Store
	Notifier *event.Notifier

	mu    sync.Mutex
	reads map[readKey]*sharedRead
	// sweepAt is the size of reads at which stale reads are dropped next.
	sweepAt int
}

type readKey struct {
	org   uuid.UUID
	after int64
	max   int32
}

// sharedRead is one read in progress or done; done is closed when batch or err is set.
type sharedRead struct {
	gen   event.Generation
	at    time.Time
	done  chan struct{}
	batch *Batch
	err   error
}

// readTimeout bounds a shared read, which runs on after the poll that started it has gone.
const readTimeout = 30 * time.Second

// NewReader returns a Reader of the store's log, its reads renewed at the notifier's notifications.
func NewReader(st *store.Store, n *event.Notifier) *Reader {
	return &Reader{Store: st, Notifier: n, reads: map[readKey]*sharedRead{}, sweepAt: 1024}
}

// Read returns at most max entries of org after cursor after, in cursor order, with their grants: the
// Batch of a read that began since the organization's latest notification, or of a new one.
func (r *Reader) Read(ctx context.Context, org uuid.UUID, after int64, max int) (*Batch, error) {
	key := readKey{org: org, after: after, max: int32(max)}
	gen, shared := r.Notifier.Generation(org)
	if !shared {
		return r.read(ctx, key)
	}
	r.mu.Lock()
	sr, ok := r.reads[key]
	if !ok || sr.gen != gen {
		sr = &sharedRead{gen: gen, at: time.Now(), done: make(chan struct{})}
		r.reads[key] = sr
		r.sweep()
		r.mu.Unlock()
		// The read serves every poll that joins it, so it outlives a client that goes away.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		sr.batch, sr.err = r.read(rctx, key)
		cancel()
		if sr.err != nil {
			// The polls waiting for this read get its error; later ones read again.
			r.mu.Lock()
			if r.reads[key] == sr {
				delete(r.reads, key)
			}
			r.mu.Unlock()
		}
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

// WorkerEvents is Read for worker event-cursor polls (bridgeworker.EventReader).
func (r *Reader) WorkerEvents(ctx context.Context, org uuid.UUID, after int64, max int) (bridgeworker.EventBatch, error) {
	b, err := r.Read(ctx, org, after, max)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (r *Reader) read(ctx context.Context, key readKey) (*Batch, error) {
	q := r.Store.Q()
	entries, err := q.EventLogRead(ctx, db.EventLogReadParams{OrganizationID: key.org, After: key.after, MaxEvents: key.max})
	if err != nil {
		return nil, err
	}
	return load(ctx, q, key.org, entries)
}

// sweep drops the reads older than a minute once there are many (r.mu held): a later notification has
// made them stale, and nothing reads them again.
func (r *Reader) sweep() {
	if len(r.reads) < r.sweepAt {
		return
	}
	old := time.Now().Add(-time.Minute)
	for k, sr := range r.reads {
		if sr.at.Before(old) {
			delete(r.reads, k)
		}
	}
	r.sweepAt = max(1024, 2*len(r.reads))
}
