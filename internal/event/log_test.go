package event_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/store"
)

func TestWritesEmitEvents(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	log := env.App.Store.Events
	ctx := context.Background()
	start, err := log.Tail(ctx)
	require.NoError(t, err)

	var sp api.Space
	c.Post("/api/space", map[string]any{"Slug": "dev"}).Expect(http.StatusOK).JSON(&sp)
	c.Post("/api/space?dry_run=true", map[string]any{"Slug": "ghost"}).Expect(http.StatusOK)
	c.Post("/api/space", map[string]any{"Slug": "dev"}).Expect(http.StatusConflict)
	var res api.UnitCreateOrUpdateResponse
	c.Post("/api/space/"+sp.SpaceID.String()+"/unit", map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&res)
	c.Do(http.MethodPut, "/api/space/"+sp.SpaceID.String()+"/unit/"+res.Unit.UnitID.String()+"/data",
		apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)

	entries, err := log.Read(ctx, org, start, 100)
	require.NoError(t, err)
	var types []string
	for _, e := range entries {
		types = append(types, e.EventType)
	}
	require.Equal(t, []string{"space.created", "unit.created", "unit.updated"}, types, "dry runs and failed writes emit nothing")
	var payload map[string]any
	require.NoError(t, json.Unmarshal(entries[0].Payload, &payload))
	require.Equal(t, "dev", payload["SpaceSlug"])
	require.Equal(t, "Space", entries[0].SubjectEntityType)
	require.Equal(t, sp.SpaceID, entries[0].SubjectEntityID)
	require.Equal(t, sp.SpaceID, *entries[0].SpaceID)
	require.NoError(t, json.Unmarshal(entries[2].Payload, &payload))
	require.EqualValues(t, 1, payload["RevisionNum"])
	// Another organization's log holds none of it.
	other, err := log.Read(ctx, uuid.New(), 0, 100)
	require.NoError(t, err)
	require.Empty(t, other)
}

// TestCursorOrderIsCommitOrder: no event ever appears below a cursor a reader has passed. Events left
// pending (the sequencer's lock was busy) are numbered in the order their transactions commit, so an
// event written first but committed last gets the later cursor. A writer that found the lock free
// numbers its events in its transaction and holds the lock until its commit: the events of a writer
// that commits before it wait, pending, and get cursors after its own.
func TestCursorOrderIsCommitOrder(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	log := env.App.Store.Events
	pool := env.App.Store.Pool
	start, err := log.Tail(ctx)
	require.NoError(t, err)
	ev := func(name string) []event.Event {
		return []event.Event{{OrganizationID: org, EventType: name, SubjectEntityType: "Test", SubjectEntityID: uuid.New(), Payload: map[string]string{}}}
	}
	appendIn := func(name string) (pgx.Tx, event.Appended) {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		appended, err := log.Append(ctx, tx, ev(name))
		require.NoError(t, err)
		return tx, appended
	}
	readAfter := func(after int64) []event.Entry {
		seen, err := log.Read(ctx, org, after, 10)
		require.NoError(t, err)
		return seen
	}

	// The lock busy (a pass of another replica): both writers leave their events pending.
	busy, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = busy.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('hubd.event_sequencer'))")
	require.NoError(t, err)
	tx1, first := appendIn("written first, committed last")
	tx2, second := appendIn("written last, committed first")
	require.NoError(t, tx2.Commit(ctx)) // tx1 is still open: commits do not wait for each other
	require.NoError(t, busy.Commit(ctx))
	log.Committed(ctx, second)
	seen := readAfter(start)
	require.Len(t, seen, 1, "an uncommitted event is never read")
	require.Equal(t, "written last, committed first", seen[0].EventType)
	passed := seen[0].CursorID
	require.NoError(t, tx1.Commit(ctx))
	log.Committed(ctx, first)
	later := readAfter(passed)
	require.Len(t, later, 1, "a reader past the first commit's cursor still reads the later commit")
	require.Equal(t, "written first, committed last", later[0].EventType)

	// The lock free: the first writer numbers its event and holds the lock until it commits; the second
	// one's event, committed before, waits for it.
	tx3, own := appendIn("numbered by its writer")
	tx4, pending := appendIn("committed while the lock was held")
	require.NoError(t, tx4.Commit(ctx))
	sequenced := make(chan struct{})
	go func() { log.Committed(ctx, pending); close(sequenced) }()
	select {
	case <-sequenced:
		t.Fatal("a pass numbered events while a writer held the lock")
	case <-time.After(100 * time.Millisecond):
	}
	require.Empty(t, readAfter(later[0].CursorID), "nothing is readable until the lock holder commits")
	require.NoError(t, tx3.Commit(ctx))
	log.Committed(ctx, own)
	<-sequenced
	last := readAfter(later[0].CursorID)
	require.Len(t, last, 2)
	require.Equal(t, "numbered by its writer", last[0].EventType)
	require.Equal(t, "committed while the lock was held", last[1].EventType)
}

// TestPendingEventsAreSwept: events committed with nobody waiting for their cursors (a replica that
// stopped right after its commit, or rows written by other means) get them from the periodic sweep.
func TestPendingEventsAreSwept(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	start, err := env.App.Store.Events.Tail(ctx)
	require.NoError(t, err)
	_, err = env.App.Store.Pool.Exec(ctx, `INSERT INTO event_log (organization_id, event_type, subject_entity_type, subject_entity_id, payload)
		VALUES ($1, 'orphan', 'Test', gen_random_uuid(), '{}')`, org)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		seen, err := env.App.Store.Events.Read(ctx, org, start, 10)
		return err == nil && len(seen) == 1 && seen[0].EventType == "orphan"
	}, 10*time.Second, 50*time.Millisecond)
}

// TestConcurrentWritersAndTailingReader: many writers on two replicas commit events while a reader tails
// the log by cursor; the reader ends with exactly the events that were committed, none skipped, each
// writer's in the order it wrote them.
func TestConcurrentWritersAndTailingReader(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	other := apitest.New(t, apitest.Options{DatabaseURL: env.DBURL})
	replicas := []*store.Store{env.App.Store, other.App.Store}
	ctx := context.Background()
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	log := env.App.Store.Events
	start, err := log.Tail(ctx)
	require.NoError(t, err)

	const writers, perWriter = 6, 40
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				err := replicas[w%2].WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
					tx.Emit(event.Event{OrganizationID: org, EventType: fmt.Sprintf("w%d", w), SubjectEntityType: "Test",
						SubjectEntityID: uuid.New(), Payload: map[string]int{"i": i}})
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	var read []event.Entry
	after := start
	finished := false
	for !finished {
		select {
		case <-done:
			finished = true // one more read after the last commit
		default:
		}
		batch, err := log.Read(ctx, org, after, 50)
		require.NoError(t, err)
		for _, e := range batch {
			require.Greater(t, e.CursorID, after)
			after = e.CursorID
		}
		read = append(read, batch...)
		for len(batch) == 50 {
			batch, err = log.Read(ctx, org, after, 50)
			require.NoError(t, err)
			for _, e := range batch {
				after = e.CursorID
			}
			read = append(read, batch...)
		}
	}
	all, err := log.Read(ctx, org, start, writers*perWriter+10)
	require.NoError(t, err)
	require.Len(t, all, writers*perWriter)
	require.Equal(t, len(all), len(read), "the tailing reader missed events")
	next := map[string]int{}
	for i := range all {
		require.Equal(t, all[i].CursorID, read[i].CursorID)
		var p struct{ I int }
		require.NoError(t, json.Unmarshal(all[i].Payload, &p))
		require.Equal(t, next[all[i].EventType], p.I, "writer %s's events out of order", all[i].EventType)
		next[all[i].EventType]++
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	_, err := env.App.Store.Pool.Exec(ctx, `
		INSERT INTO event_log (organization_id, event_type, subject_entity_type, subject_entity_id, payload, created_at)
		SELECT $1, 'old', 'Test', gen_random_uuid(), '{}', now() - interval '30 hours' FROM generate_series(1, 2500)`, org)
	require.NoError(t, err)
	start, err := env.App.Store.Events.Tail(ctx)
	require.NoError(t, err)
	require.NoError(t, env.App.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		tx.Emit(event.Event{OrganizationID: org, EventType: "fresh", SubjectEntityType: "Test", SubjectEntityID: uuid.New(), Payload: map[string]string{}})
		return nil
	}))
	// 24 hours, not the server's 48: its own pruner, running meanwhile, must leave these rows to this call.
	n, err := env.App.Store.Events.Prune(ctx, 24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, int64(2500), n)
	left, err := env.App.Store.Events.Read(ctx, org, start, 10)
	require.NoError(t, err)
	require.Len(t, left, 1)
	require.Equal(t, "fresh", left[0].EventType)
	require.Greater(t, left[0].CursorID, start)
}

// TestNotifierWakesOtherReplicas: a commit on one replica wakes waiters on another.
func TestNotifierWakesOtherReplicas(t *testing.T) {
	t.Parallel()
	a := apitest.New(t)
	b := apitest.New(t, apitest.Options{DatabaseURL: a.DBURL})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := event.NewNotifier(b.DBURL, b.Config.Logger)
	org := a.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	go n.Run(ctx, event.Channel)
	// The first wake-up is the listener connecting.
	select {
	case <-n.Next(org).C():
	case <-time.After(10 * time.Second):
		t.Fatal("the notifier did not connect")
	}
	wait := n.Next(org).C()
	c := a.Client(a.Token("acme", "alice", auth.RoleAdmin))
	c.Post("/api/space", map[string]any{"Slug": "dev"}).Expect(http.StatusOK)
	select {
	case <-wait:
	case <-time.After(10 * time.Second):
		t.Fatal("a commit on replica A did not wake a waiter on replica B")
	}
	require.Positive(t, n.Latest())
}

// TestSequencerSignalsTheOrganizations: a pass's notification names the organizations whose events it
// numbered, and, when there are too many to name, wakes every waiter.
func TestSequencerSignalsTheOrganizations(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := event.NewNotifier(env.DBURL, env.Config.Logger)
	go n.Run(ctx, event.Channel)
	bystander := uuid.New()
	select {
	case <-n.Next(bystander).C(): // the first wake-up is the listener connecting
	case <-time.After(10 * time.Second):
		t.Fatal("the notifier did not connect")
	}
	emitTyped := func(eventType string, orgs ...uuid.UUID) {
		require.NoError(t, env.App.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
			for _, org := range orgs {
				tx.Emit(event.Event{OrganizationID: org, EventType: eventType, SubjectEntityType: "Test", SubjectEntityID: uuid.New(), Payload: map[string]string{}})
			}
			return nil
		}))
	}
	emit := func(orgs ...uuid.UUID) { emitTyped("test.updated", orgs...) }
	named := uuid.New()
	wait := n.Next(named).C()
	emit(named)
	select {
	case <-wait:
	case <-time.After(10 * time.Second):
		t.Fatal("an organization's waiter was not woken by its event")
	}

	// A quiet family's change (a Unit's) wakes the organization's polls but leaves what is remembered of
	// its members; any other family's ends that too.
	access, ok := n.WatchAccess(named)
	require.True(t, ok)
	wait = n.Next(named).C()
	emitTyped("unit.updated", named)
	select {
	case <-wait:
	case <-time.After(10 * time.Second):
		t.Fatal("a Unit's change did not wake its organization's waiter")
	}
	select {
	case <-access:
		t.Fatal("a Unit's change ended the watch of the organization's access")
	default:
	}
	emitTyped("group.updated", named)
	select {
	case <-access:
	case <-time.After(10 * time.Second):
		t.Fatal("a Group's change did not end the watch of the organization's access")
	}

	wait = n.Next(bystander).C()
	many := make([]uuid.UUID, 101)
	for i := range many {
		many[i] = uuid.New()
	}
	emit(many...)
	select {
	case <-wait:
	case <-time.After(10 * time.Second):
		t.Fatal("a pass naming too many organizations to list did not wake everyone")
	}
	tail, err := env.App.Store.Events.Tail(ctx)
	require.NoError(t, err)
	require.Equal(t, tail, n.Latest(), "the notification carries the pass's last cursor")
}

// TestWatchHoldsOnlyWhileListening: what a replica remembers on the strength of the signals is
// forgotten when its listener loses the connection, and nothing is remembered until it listens again.
func TestWatchHoldsOnlyWhileListening(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := event.NewNotifier(env.DBURL, env.Config.Logger)
	org := uuid.New()
	_, ok := n.WatchAccess(org)
	require.False(t, ok, "nothing is signalled before the listener connects")

	go n.Run(ctx, event.Channel)
	var changed <-chan struct{}
	require.Eventually(t, func() bool { changed, ok = n.WatchAccess(org); return ok }, 10*time.Second, 10*time.Millisecond)

	// Cut every LISTEN connection of this database: the watch ends though nothing changed.
	_, err := env.App.Store.Pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'listen%'`)
	require.NoError(t, err)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("a lost listener did not end the watches")
	}
	require.Eventually(t, func() bool { _, ok = n.WatchAccess(org); return ok }, 10*time.Second, 10*time.Millisecond,
		"the listener did not reconnect")
}
