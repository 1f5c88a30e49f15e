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
	waitA, waitB := n.Next(a).C(), n.Next(b).C()

	n.broadcast(parsePayload("7 " + b.String() + " -"))
	require.False(t, closed(waitA))
	require.True(t, closed(waitB))
	require.Equal(t, int64(7), n.Latest())

	waitB = n.Next(b).C()
	require.False(t, closed(waitB), "a woken waiter waits on a fresh channel")
	n.broadcast(everything)
	require.True(t, closed(waitA))
	require.True(t, closed(waitB))
}

// Watches of access end only for the organizations where access may have changed; whatever the payload
// does not say for certain ends them.
func TestNotifierEndsAccessWatches(t *testing.T) {
	n := NewNotifier("", nil)
	a, b := uuid.New(), uuid.New()
	watch := func(org uuid.UUID) <-chan struct{} { ch, _ := n.WatchAccess(org); return ch }
	accessA, accessB, waitA := watch(a), watch(b), n.Next(a).C()

	n.broadcast(parsePayload("8 " + a.String() + "," + b.String() + " " + b.String()))
	require.True(t, closed(waitA), "every organization named wakes its polls")
	require.False(t, closed(accessA), "quiet changes in a leave what is remembered of it")
	require.True(t, closed(accessB))

	accessB = watch(b)
	n.broadcast(parsePayload("9 " + a.String() + " -"))
	require.False(t, closed(accessA))
	n.broadcast(parsePayload("10 " + a.String()))
	require.True(t, closed(accessA), "a payload without an access list (an older replica) ends the watches of those named")
	require.False(t, closed(accessB))
	n.broadcast(parsePayload("11"))
	require.True(t, closed(accessB), "a payload naming no organization ends every watch")

	accessA = watch(a)
	n.broadcast(parsePayload("12 " + a.String() + " not-a-uuid"))
	require.True(t, closed(accessA), "an unreadable access list ends the watches of those named")
}

func TestParsePayload(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	for payload, want := range map[string]Change{
		"9": {Cursor: 9},
		"10 " + a.String() + "," + b.String() + " -":             {Cursor: 10, Orgs: []uuid.UUID{a, b}, Access: []uuid.UUID{}},
		"11 " + a.String() + "," + b.String() + " " + b.String(): {Cursor: 11, Orgs: []uuid.UUID{a, b}, Access: []uuid.UUID{b}},
		"12 " + a.String(): {Cursor: 12, Orgs: []uuid.UUID{a}, Access: []uuid.UUID{a}},
		"13 not-a-uuid":    {Cursor: 13},
		"":                 everything,
	} {
		require.Equal(t, want, parsePayload(payload), "payload %q", payload)
	}
}
