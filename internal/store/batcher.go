package store

import (
	"context"
	"sync"
)

// Batcher runs what many callers submit at about the same time in few statements (group commit): an
// item submitted while a batch runs waits for the next batch, which takes every item that arrived
// meanwhile. The first caller to find no batch running runs the batches until none is pending. A commit
// that wakes thousands of long polls thus costs a few statements for all of their bookkeeping.
type Batcher[T any] struct {
	// Run settles every item of a batch (it records each one's outcome in the item).
	Run func(ctx context.Context, items []*T)

	mu      sync.Mutex
	pending []*T
	done    []chan struct{}
	running bool
}

// Do submits item and returns once a batch has settled it. The batch runs on after ctx ends, since it
// settles other callers' items too.
func (b *Batcher[T]) Do(ctx context.Context, item *T) {
	done := make(chan struct{})
	b.mu.Lock()
	b.pending, b.done = append(b.pending, item), append(b.done, done)
	if b.running {
		b.mu.Unlock()
		<-done
		return
	}
	b.running = true
	b.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	for {
		b.mu.Lock()
		items, dones := b.pending, b.done
		b.pending, b.done = nil, nil
		if len(items) == 0 {
			b.running = false
			b.mu.Unlock()
			break
		}
		b.mu.Unlock()
		b.Run(ctx, items)
		for _, d := range dones {
			close(d)
		}
	}
	<-done
}
