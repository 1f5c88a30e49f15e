package longpoll

import (
	"context"
	"sync"
)

// Gate lets long polls start (prepare, take the first time) a few at a time. A fleet of bots polls again
// at once after every event; started all together, each poll would wait for a database connection deep
// in its handler, holding a grown stack and its request's memory, and their sum keeps the collector
// running. Waiting at the gate, before any database work, a request holds little.
type Gate struct {
	turns chan struct{}
}

// NewGate returns a Gate letting n polls start at once.
func NewGate(n int) *Gate { return &Gate{turns: make(chan struct{}, max(n, 1))} }

type turnKey struct{}

// Enter waits for a turn, or for ctx's end (its error). The turn ends at Started(ctx), once the poll's
// first take is done (it is answered, parked, or waits), or at started, whichever comes first: the
// caller calls started when the request ends before that.
func (g *Gate) Enter(ctx context.Context) (_ context.Context, started func(), err error) {
	select {
	case g.turns <- struct{}{}:
	case <-ctx.Done():
		return ctx, nil, ctx.Err()
	}
	started = sync.OnceFunc(func() { <-g.turns })
	return context.WithValue(ctx, turnKey{}, started), started, nil
}

// Started ends the turn the poll of ctx was given, if any.
func Started(ctx context.Context) {
	if started, ok := ctx.Value(turnKey{}).(func()); ok {
		started()
	}
}
