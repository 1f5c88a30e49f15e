package bridgeworker

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/store"
)

// A woken poll claims the events it read by moving its cursor past them. A claim is a compare and set:
// it moves a cursor only from the position its poll read, so of the polls sharing a Name exactly one
// takes each range of events. Claims of the polls a commit woke go to the database together
// (store.Batcher), a few statements however many polls wait; the poll that began the read they share
// has claimed in the read's statement already (CursorClaim).

// CursorClaim is a claim an EventReader makes in its read: it moves the worker's cursor Name from the
// read's position past the entries read, if it is still there. Tried reports the reader made it, Won
// that the cursor moved.
type CursorClaim struct {
	Worker     uuid.UUID
	Name       string
	Tried, Won bool
}

type claim struct {
	worker   uuid.UUID
	name     string
	from, to int64
	won      bool
	err      error
}

// claimTimeout bounds a statement of claims, which runs on for every poll that joined it.
const claimTimeout = 30 * time.Second

func newClaims(st *store.Store) *store.Batcher[claim] {
	return &store.Batcher[claim]{Run: func(ctx context.Context, batch []*claim) { settleClaims(ctx, st, batch) }}
}

// advance moves the worker's cursor name from from to to, reporting false when it was no longer at
// from (another poll of the Name moved it).
func (s *Service) advance(ctx context.Context, worker uuid.UUID, name string, from, to int64) (bool, error) {
	cl := &claim{worker: worker, name: name, from: from, to: to}
	s.claims.Do(ctx, cl)
	return cl.won, cl.err
}

type claimKey struct {
	worker uuid.UUID
	name   string
	from   int64
}

// settleClaims settles a batch of claims in one statement. Of claims on the same cursor from the same
// position the first is sent and the others lose; the statement moves each cursor still where its
// claim read it.
func settleClaims(ctx context.Context, st *store.Store, batch []*claim) {
	sent := map[claimKey]*claim{}
	var p db.BridgeWorkerCursorsAdvanceParams
	for _, cl := range batch {
		k := claimKey{cl.worker, cl.name, cl.from}
		if _, dup := sent[k]; dup {
			continue
		}
		sent[k] = cl
		p.BridgeWorkerIds, p.Names = append(p.BridgeWorkerIds, cl.worker), append(p.Names, cl.name)
		p.FromCursors, p.ToCursors = append(p.FromCursors, cl.from), append(p.ToCursors, cl.to)
	}
	ctx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	var rows []*db.BridgeWorkerCursorsAdvanceRow
	var err error
	// Replicas moving shared cursors may lock them in different orders; PostgreSQL then aborts one
	// statement, which is run again.
	for attempt := 0; attempt < 3; attempt++ {
		if rows, err = st.Q().BridgeWorkerCursorsAdvance(ctx, p); !store.Retryable(err) {
			break
		}
	}
	for _, r := range rows {
		if cl, ok := sent[claimKey{r.BridgeWorkerID, r.Name, r.FromCursor}]; ok {
			cl.won = true
		}
	}
	for _, cl := range batch {
		cl.err = err
	}
}
