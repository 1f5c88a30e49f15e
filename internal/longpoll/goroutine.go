package longpoll

import (
	"context"
	"sync/atomic"
	"time"
)

// Goroutine is the Waiter that waits on the poll's goroutine, holding its request as net/http serves it:
// it works on every connection, at the cost of a goroutine and the request's buffers per waiting poll.
type Goroutine struct {
	waiting atomic.Int64
}

var _ Waiter = (*Goroutine)(nil)

// Wait takes again at each wake until the poll is done; it ends early, Gone, when ctx ends (net/http
// cancels a request's context when its client closes the connection).
func (g *Goroutine) Wait(ctx context.Context, p Poll) Outcome {
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	woken := make(chan struct{}, 1)
	wake := func() {
		select {
		case woken <- struct{}{}:
		default: // a wake not yet received: one is enough
		}
	}
	for {
		cancel := p.OnWake(wake)
		timer := time.NewTimer(p.Remaining())
		select {
		case <-woken:
		case <-timer.C: // the take at the timeout follows
		case <-ctx.Done():
		}
		timer.Stop()
		cancel()
		if ctx.Err() != nil {
			return Gone
		}
		if p.Take(ctx) {
			return Done
		}
	}
}

// Waiting is how many polls wait on their goroutines.
func (g *Goroutine) Waiting() int { return int(g.waiting.Load()) }
