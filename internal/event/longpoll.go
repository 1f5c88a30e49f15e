package event

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Poll is a long poll its service has prepared (checked the caller, placed the cursor): it takes what
// there is to hand out and, between takes, waits for a notification of the organization's events, its
// timeout, the client going away or the replica stopping (StopWaiters), holding no database connection;
// the last three answer nothing. The server makes it wait (internal/longpoll): after a Take that is not
// done, Take is called again at OnWake or at the end of Remaining.
type Poll[T any] struct {
	n   *Notifier
	org uuid.UUID
	end time.Time
	// take hands out what there is; more reports a full batch that was all filtered out, so it is called
	// again at once (within the timeout).
	take func(ctx context.Context) (out []T, more bool, err error)
	// wake is the notification after the last take began: a commit after that take's read wakes the poll.
	wake Wake
	// taken: the poll has taken once; out and err are what its last Take handed out.
	taken bool
	out   []T
	err   error
}

// NewPoll prepares a long poll of the organization's events that waits up to timeout.
func NewPoll[T any](n *Notifier, org uuid.UUID, timeout time.Duration, take func(context.Context) ([]T, bool, error)) *Poll[T] {
	return &Poll[T]{n: n, org: org, end: time.Now().Add(timeout), take: take}
}

// Take takes until something is handed out or a take fails (done), or there is nothing to hand out for
// now. It is done with nothing too when the poll's time is up or the replica is stopping; woken once the
// replica is stopping, it does not read again. Result is what it handed out.
func (p *Poll[T]) Take(ctx context.Context) (done bool) {
	if p.taken && p.n.isStopped() {
		p.out, p.err = nil, nil
		return true
	}
	p.taken = true
	for {
		p.wake = p.n.Next(p.org)
		out, more, err := p.take(ctx)
		if err != nil || len(out) > 0 {
			p.out, p.err = out, err
			return true
		}
		if p.Remaining() <= 0 || p.n.isStopped() {
			p.out, p.err = nil, nil
			return true
		}
		if !more {
			return false
		}
	}
}

// Result is what the last Take that was done handed out, or its error.
func (p *Poll[T]) Result() ([]T, error) { return p.out, p.err }

// Remaining is how long the poll may still wait.
func (p *Poll[T]) Remaining() time.Duration { return time.Until(p.end) }

// OnWake calls fn once, without blocking, when the poll should take again after its last Take: at the
// organization's next notification or when the replica stops waiters (see Wake.Call).
func (p *Poll[T]) OnWake(fn func()) (cancel func()) { return p.wake.Call(fn) }
