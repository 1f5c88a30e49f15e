package eventfilter_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/eventfilter"
)

// TestReaderShares: reads of one organization after one cursor share one Batch until the organization's
// next notification; another cursor position, or another organization's notification, is its own.
func TestReaderShares(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := env.Principal("acme", "alice", auth.RoleAdmin).OrganizationID
	other := env.Principal("globex", "alice", auth.RoleAdmin).OrganizationID
	n := env.App.Notifier
	require.Eventually(t, func() bool { _, ok := n.Generation(org); return ok }, 10*time.Second, 10*time.Millisecond,
		"the notifier listens")
	r := eventfilter.NewReader(env.App.Store, n)
	ctx := context.Background()

	first, err := r.Read(ctx, org, 0, 10)
	require.NoError(t, err)
	again, err := r.Read(ctx, org, 0, 10)
	require.NoError(t, err)
	require.Same(t, first, again, "same organization, cursor and notification: one read")
	elsewhere, err := r.Read(ctx, org, 1, 10)
	require.NoError(t, err)
	require.NotSame(t, first, elsewhere, "another cursor position reads on its own")

	n.Signal(event.Change{Orgs: []uuid.UUID{other}})
	again, err = r.Read(ctx, org, 0, 10)
	require.NoError(t, err)
	require.Same(t, first, again, "another organization's notification changes nothing here")

	n.Signal(event.Change{Orgs: []uuid.UUID{org}})
	fresh, err := r.Read(ctx, org, 0, 10)
	require.NoError(t, err)
	require.NotSame(t, first, fresh, "after the organization's notification, a new read")
}
