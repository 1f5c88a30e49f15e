package loadtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one workload's figures: how many operations completed in how long, and their latencies.
type Result struct {
	Ops       int
	Elapsed   time.Duration
	latencies []time.Duration // sorted
}

// Rate is completed operations per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// Quantile is the latency below which the fraction q of operations completed.
func (r Result) Quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(q * float64(len(r.latencies)))
	if i >= len(r.latencies) {
		i = len(r.latencies) - 1
	}
	return r.latencies[i]
}

// op is one operation of a workload, run by worker w as its i-th operation.
type op func(ctx context.Context, w, i int) error

// measure runs op from c workers for d (after a short warm-up that is not counted) and returns the
// figures. The first error stops the run: a workload that fails measures nothing.
func measure(ctx context.Context, c int, d time.Duration, fn op) (Result, error) {
	warm := d / 10
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		all      []time.Duration
		firstErr error
		counting atomic.Bool
		wg       sync.WaitGroup
	)
	start := time.Now()
	stop := start.Add(warm + d)
	var countedFrom time.Time
	time.AfterFunc(warm, func() { mu.Lock(); countedFrom = time.Now(); mu.Unlock(); counting.Store(true) })
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; time.Now().Before(stop) && ctx.Err() == nil; i++ {
				t0 := time.Now()
				if err := fn(ctx, w, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("worker %d, operation %d: %w", w, i, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				if counting.Load() {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return Result{}, firstErr
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(all)
	return Result{Ops: len(all), Elapsed: time.Since(countedFrom), latencies: all}, nil
}

// latencies are the figures of separately timed operations.
func latencies(all []time.Duration) Result {
	slices.Sort(all)
	return Result{Ops: len(all), latencies: all}
}

// rounds runs fn n times one after another (a latency, not a throughput) and returns the figures.
func rounds(ctx context.Context, n int, fn func(ctx context.Context, i int) (time.Duration, error)) (Result, error) {
	var all []time.Duration
	start := time.Now()
	for i := range n {
		d, err := fn(ctx, i)
		if err != nil {
			return Result{}, fmt.Errorf("round %d: %w", i, err)
		}
		all = append(all, d)
	}
	slices.Sort(all)
	return Result{Ops: n, Elapsed: time.Since(start), latencies: all}, nil
}
