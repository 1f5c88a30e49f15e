package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBatcherGroups: what is submitted while a batch runs goes in the next one; every item is settled
// before its Do returns.
func TestBatcherGroups(t *testing.T) {
	type item struct{ settled bool }
	release := make(chan struct{})
	var sizes []int
	var first atomic.Int64 // the size of the first batch, once it runs
	b := &Batcher[item]{Run: func(_ context.Context, items []*item) {
		if len(sizes) == 0 {
			first.Store(int64(len(items)))
			<-release // the first batch runs until the others are waiting
		}
		sizes = append(sizes, len(items))
		for _, it := range items {
			it.settled = true
		}
	}}
	const n = 50
	items := make([]*item, n)
	var wg sync.WaitGroup
	for i := range items {
		items[i] = &item{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Do(context.Background(), items[i])
			if !items[i].settled {
				t.Errorf("item %d returned unsettled", i)
			}
		}()
	}
	for {
		b.mu.Lock()
		waiting := len(b.pending)
		b.mu.Unlock()
		if int64(waiting)+first.Load() == n && first.Load() > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if len(sizes) != 2 || sizes[0]+sizes[1] != n {
		t.Fatalf("batches %v, want two of %d items in all", sizes, n)
	}
}
