package event

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Poll is a long poll its service has prepared (checked the caller, placed the cursor): it takes what
// there is to hand out and, between takes, waits for a notification of the organization's events, its
// timeout, the client going away or the replica stopping (StopWaiters), holding no database connection;
// the last three answer nothing. Wait does the waiting on the calling goroutine. A server that parks
// waiting polls off their goroutines calls Next, and after a Next that is not done arranges for Next to
// be called again at OnWake or at the end of Remaining.
type Poll[T any] struct {
	n   *Notifier
	org uuid.UUID
	end time.Time
	// take hands out what there is; more reports a full batch that was all filtered out, so it is called
	// again at once (within the timeout).
	take func(ctx context.Context) (out []T, more bool, err error)
	// wake is the notification after the last take began: a commit after that take's read wakes the poll.
	wake Wake
}

// NewPoll prepares a long poll of the organization's events that waits up to timeout.
func NewPoll[T any](n *Notifier, org uuid.UUID, timeout time.Duration, take func(context.Context) ([]T, bool, error)) *Poll[T] {
	return &Poll[T]{n: n, org: org, end: time.Now().Add(timeout), take: take}
}

// Next takes until something is handed out or a take fails (done), or there is nothing to hand out for
// now. It is done with nothing too when the poll's time is up or the replica is stopping.
func (p *Poll[T]) Next(ctx context.Context) (out []T, done bool, err error) {
	for {
		p.wake = p.n.Next(p.org)
		out, more, err := p.take(ctx)
		if err != nil || len(out) > 0 {
			return out, true, err
		}
		if p.Remaining() <= 0 || p.n.isStopped() {
			return nil, true, nil
		}
		if !more {
			return nil, false, nil
		}
	}
}

// Remaining is how long the poll may still wait.
func (p *Poll[T]) Remaining() time.Duration { return time.Until(p.end) }

// Stopping reports whether the replica is stopping waiters: a parked poll woken then answers nothing.
func (p *Poll[T]) Stopping() bool { return p.n.isStopped() }

// OnWake calls fn once, without blocking, when the poll should take again after its last Next: at the
// organization's next notification or when the replica stops waiters (see Wake.Call).
func (p *Poll[T]) OnWake(fn func()) (cancel func()) { return p.wake.Call(fn) }

// Wait runs the poll on the calling goroutine until it hands something out, fails or ends.
func (p *Poll[T]) Wait(ctx context.Context) ([]T, error) {
	for {
		out, done, err := p.Next(ctx)
		if done {
			return out, err
		}
		timer := time.NewTimer(p.Remaining())
		select {
		case <-p.wake.C():
		case <-timer.C: // the last take, at the timeout, follows
		case <-ctx.Done(): // the client has gone
		case <-p.n.stopped():
		}
		timer.Stop()
		if ctx.Err() != nil || p.n.isStopped() {
			return nil, nil
		}
	}
}
