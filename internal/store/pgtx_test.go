package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/store"
)

// TestWriteTransactions: a write transaction's BEGIN travels with its first statement and its events'
// statement with its COMMIT; whatever fails, nothing of it is stored, savepoints undo only their part,
// and the connection goes back to the pool clean (the pool has one, so every transaction reuses it).
func TestWriteTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, apitest.NewDatabase(t), 1, slog.Default())
	require.NoError(t, err)
	defer st.Close()
	insert := func(q *db.Queries, slug string) (uuid.UUID, error) {
		org, err := q.OrganizationInsert(ctx, db.OrganizationInsertParams{OrganizationID: uuid.New(), Slug: slug,
			Labels: []byte("{}"), Annotations: []byte("{}"), DeleteGates: []byte("{}")})
		if err != nil {
			return uuid.Nil, err
		}
		return org.OrganizationID, nil
	}
	exists := func(slug string) bool {
		_, err := st.Q().OrganizationGetBySlug(ctx, slug)
		if apierr.Is(err, apierr.TypeNotFound) {
			return false
		}
		require.NoError(t, err)
		return true
	}

	// Committed with its event: both are there, and the event has its cursor when WithTx returns.
	start, err := st.Events.Tail(ctx)
	require.NoError(t, err)
	var org uuid.UUID
	require.NoError(t, st.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		if org, err = insert(tx.Q, "acme"); err != nil {
			return err
		}
		tx.Emit(event.Event{OrganizationID: org, EventType: "organization.created", SubjectEntityType: "Organization", SubjectEntityID: org, Payload: map[string]string{}})
		return nil
	}))
	require.True(t, exists("acme"))
	seen, err := st.Events.Read(ctx, org, start, 10)
	require.NoError(t, err)
	require.Len(t, seen, 1)
	require.Equal(t, "organization.created", seen[0].EventType)

	// The sequencer's lock busy elsewhere, the events stay pending and the write waits for a pass, which
	// needs a connection: the write has given its own back by then (the pool has only that one).
	busy, err := pgx.Connect(ctx, st.Pool.Config().ConnString())
	require.NoError(t, err)
	defer busy.Close(ctx)
	_, err = busy.Exec(ctx, "BEGIN; SELECT pg_advisory_xact_lock(hashtext('hubd.event_sequencer'))")
	require.NoError(t, err)
	written := make(chan error, 1)
	go func() {
		written <- st.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
			tx.Emit(event.Event{OrganizationID: org, EventType: "pending", SubjectEntityType: "Test", SubjectEntityID: uuid.New(), Payload: map[string]string{}})
			_, err := tx.Exec(ctx, "SELECT 1")
			return err
		})
	}()
	// Looked for on the lock holder's connection: the pool's one may be the waiting pass's by now.
	require.Eventually(t, func() bool {
		var pending bool
		return busy.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM event_log WHERE cursor_id IS NULL)").Scan(&pending) == nil && pending
	}, 10*time.Second, 5*time.Millisecond, "the event is committed, pending")
	_, err = busy.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	select {
	case err := <-written:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the write never finished: its pass found no connection")
	}
	seen, err = st.Events.Read(ctx, org, start, 10)
	require.NoError(t, err)
	require.Len(t, seen, 2)
	require.Equal(t, "pending", seen[1].EventType)

	// The first statement fails: nothing is stored and the connection serves the next transaction.
	err = st.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		_, err := insert(tx.Q, "acme")
		return err
	})
	require.True(t, apierr.Is(err, apierr.TypeAlreadyExists), "%v", err)
	// A later statement fails after an earlier one stored something: the earlier one is undone too.
	err = st.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		if _, err := insert(tx.Q, "first"); err != nil {
			return err
		}
		_, err := insert(tx.Q, "acme")
		return err
	})
	require.True(t, apierr.Is(err, apierr.TypeAlreadyExists), "%v", err)
	require.False(t, exists("first"))

	// Savepoints: a failing one undoes its part (and its events), the transaction goes on and commits.
	before := st.Statements()
	require.NoError(t, st.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		require.Error(t, tx.Savepoint(ctx, func(tx *store.Tx) error {
			if _, err := insert(tx.Q, "undone"); err != nil {
				return err
			}
			tx.Emit(event.Event{OrganizationID: org, EventType: "undone", SubjectEntityType: "Test", SubjectEntityID: uuid.New(), Payload: map[string]string{}})
			_, err := insert(tx.Q, "acme")
			return err
		}))
		return tx.Savepoint(ctx, func(tx *store.Tx) error {
			return tx.Savepoint(ctx, func(tx *store.Tx) error {
				_, err := insert(tx.Q, "kept")
				return err
			})
		})
	}))
	require.False(t, exists("undone"))
	require.True(t, exists("kept"))
	require.Greater(t, st.Statements(), before)
	tail, err := st.Events.Tail(ctx)
	require.NoError(t, err)
	require.Equal(t, seen[1].CursorID, tail, "the undone savepoint's event was not written")

	// A dry run stores nothing; a transaction that runs no statement sends none.
	require.NoError(t, st.WithTx(ctx, store.TxOptions{DryRun: true}, func(tx *store.Tx) error {
		_, err := insert(tx.Q, "dry")
		return err
	}))
	require.False(t, exists("dry"))
	before = st.Statements()
	require.NoError(t, st.WithTx(ctx, store.TxOptions{}, func(*store.Tx) error { return nil }))
	require.Equal(t, before, st.Statements())
	require.EqualValues(t, 1, st.Pool.Stat().NewConnsCount(), "the one connection came back clean from every transaction")
}
