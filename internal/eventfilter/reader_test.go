package eventfilter_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/eventfilter"
)

// TestReaderShares: reads of one organization after one cursor share one Batch until the organization's
// next notification; another cursor position, or another organization's notification, is its own.
func TestReaderShares(t *testing.T) {
	t.Parallel()
	env, org, n, r := listeningReader(t)
	other := env.Principal("globex", "alice", auth.RoleAdmin).OrganizationID
	ctx := context.Background()

	read := func(after int64) *eventfilter.Batch {
		b, err := r.Read(ctx, org, after, 10)
		require.NoError(t, err)
		return b
	}
	// Each check holds while no notification of the organization arrives meanwhile (the test's own
	// setup still has events being numbered and notified): it is tried until one ran undisturbed.
	undisturbed := func(check func() bool) bool {
		before, _ := n.Generation(org)
		ok := check()
		after, _ := n.Generation(org)
		return before == after && ok
	}
	var first *eventfilter.Batch
	require.Eventually(t, func() bool {
		return undisturbed(func() bool {
			first = read(0)
			// Same organization, cursor and notification: one read; another cursor position reads on its own;
			// another organization's notification changes nothing here.
			same, elsewhere := read(0), read(1)
			n.Signal(event.Change{Orgs: []uuid.UUID{other}})
			return same == first && elsewhere != first && read(0) == first
		})
	}, 10*time.Second, 20*time.Millisecond)

	n.Signal(event.Change{Orgs: []uuid.UUID{org}})
	kept := read(0)
	require.NotSame(t, first, kept, "after the organization's notification, a new read")

	// A finished read is kept only moments for the polls to join it: with no notification since, a
	// later read is a new one all the same (the Reader holds no batches of positions polls have passed).
	require.Eventually(t, func() bool {
		return undisturbed(func() bool { return read(0) != kept })
	}, 20*time.Second, 100*time.Millisecond, "a read is dropped a little after it finished")
}

// TestReaderClaimsInTheReadItBegins: a worker poll that begins a read has its claim made by the read's
// statement (Tried); a poll joining that read is left to claim by itself.
func TestReaderClaimsInTheReadItBegins(t *testing.T) {
	t.Parallel()
	_, org, n, r := listeningReader(t)
	ctx := context.Background()
	require.Eventually(t, func() bool {
		n.Signal(event.Change{Orgs: []uuid.UUID{org}}) // the next read is a new one
		before, _ := n.Generation(org)
		begun, joined := &bridgeworker.CursorClaim{Worker: uuid.New(), Name: "a"}, &bridgeworker.CursorClaim{Worker: uuid.New(), Name: "b"}
		_, err := r.WorkerEvents(ctx, org, 0, 10, begun)
		require.NoError(t, err)
		_, err = r.WorkerEvents(ctx, org, 0, 10, joined)
		require.NoError(t, err)
		after, _ := n.Generation(org)
		return before == after && begun.Tried && !joined.Tried
	}, 10*time.Second, 20*time.Millisecond)
}

// listeningReader is a Reader of a new Env's store, once its notifier listens (reads are shared only
// then), and an organization of it.
func listeningReader(t *testing.T) (*apitest.Env, uuid.UUID, *event.Notifier, *eventfilter.Reader) {
	env := apitest.New(t)
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	n := env.App.Notifier
	require.Eventually(t, func() bool { _, ok := n.Generation(org); return ok }, 10*time.Second, 10*time.Millisecond,
		"the notifier listens")
	return env, org, n, eventfilter.NewReader(env.App.Store, n)
}
