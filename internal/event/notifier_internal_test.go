package event

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A notification wakes the waiters of the organizations it names and no others; one without names (a
// reconnect, or too many organizations to name) wakes everyone.
func TestNotifierWakesPerOrganization(t *testing.T) {
	n := NewNotifier("", nil)
	a, b := uuid.New(), uuid.New()
	waitA, waitB := n.WaitFor(a), n.WaitFor(b)

	n.broadcast(parsePayload("7 " + b.String()))
	require.False(t, closed(waitA))
	require.True(t, closed(waitB))
	require.Equal(t, int64(7), n.Latest())

	waitB = n.WaitFor(b)
	require.False(t, closed(waitB), "a woken waiter waits on a fresh channel")
	n.broadcast(0, nil)
	require.True(t, closed(waitA))
	require.True(t, closed(waitB))

	cursor, orgs := parsePayload("9")
	require.Equal(t, int64(9), cursor)
	require.Nil(t, orgs, "no organizations named (too many to name): everyone wakes")
	_, orgs = parsePayload("10 " + a.String() + "," + b.String())
	require.Equal(t, []uuid.UUID{a, b}, orgs)
	_, orgs = parsePayload("12 not-a-uuid")
	require.Nil(t, orgs)
}
