package event

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// LongPoll calls take until it hands something out, then returns it. Between calls it waits, holding
// no database connection, for a notification of the organization's events, the timeout, the client
// going away or the replica stopping (StopWaiters); the last three answer nothing. take reports more
// when it read a full batch that was all filtered out, so it is called again at once (within the
// timeout). Channel polls and worker event-cursor polls both wait this way.
func LongPoll[T any](ctx context.Context, n *Notifier, org uuid.UUID, timeout time.Duration, take func() ([]T, bool, error)) ([]T, error) {
	end := time.Now().Add(timeout)
	for {
		// Taken before reading, so a commit after the read still wakes this poll.
		wake := n.WaitFor(org)
		out, more, err := take()
		if err != nil || len(out) > 0 {
			return out, err
		}
		remaining := time.Until(end)
		if remaining <= 0 {
			return nil, nil
		}
		if more {
			continue
		}
		timer := time.NewTimer(remaining)
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done(): // the client has gone
		case <-n.stopped():
		}
		timer.Stop()
		if ctx.Err() != nil || n.isStopped() {
			return nil, nil
		}
	}
}
