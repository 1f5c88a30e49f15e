package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"time"
)

// defaultMemoryLimit bounds a burst: thousands of long polls arriving at once hold their requests' memory
// until they wait for their turn to start (longpoll.Gate) or park, far more than the replica's steady
// live heap. Near this limit the collector works harder instead of letting the process grow.
const defaultMemoryLimit = 256 << 20

// quietReturn is how long the collector must have been idle before the runtime gives back what a burst
// left (when it holds more than quietHeld).
const (
	quietReturn = 5 * time.Second
	quietHeld   = 64 << 20
)

// tuneCollector sets how the garbage collector trades memory for time.
//
// The live heap is small and most of what a request allocates dies with it: collecting when the heap
// has grown by 400% rather than Go's 100% spends far less time in the collector for a few more
// megabytes. Left alone, that lets a burst
// (thousands of polls arriving at once) grow the process to five times its live heap, so a soft memory
// limit makes the collector work harder near limit bytes. The limit follows a lasting live heap at twice
// its size when that is more (the smallest of the last ten seconds: a burst's own requests do not raise
// it), so a large live heap never has the collector running back to back.
//
// The runtime returns memory to the system as it collects, paced by what the last collection saw; after
// a burst, while nothing allocates, nothing collects and it would keep what the burst took. So once the
// collector has been idle for quietReturn after a burst, everything unused is given back at once.
//
// GOGC and GOMEMLIMIT, when set, win; limit 0 leaves the limit to the runtime.
func tuneCollector(ctx context.Context, limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(limit)
	go func() {
		const (
			live = iota
			total
			released
			cycles
		)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
			{Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
		var recent [10]int64 // the live heap, sampled every second
		var lastCycles uint64
		lastGC, returned := time.Now(), false
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if n := sample[cycles].Value.Uint64(); n != lastCycles {
				lastCycles, lastGC, returned = n, time.Now(), false
			}
			held := sample[total].Value.Uint64() - sample[released].Value.Uint64()
			if !returned && time.Since(lastGC) >= quietReturn && held > quietHeld {
				debug.FreeOSMemory() // a collection: the live heap read next is current
				metrics.Read(sample)
				lastCycles, returned = sample[cycles].Value.Uint64(), true
			}
			recent[i%len(recent)] = int64(sample[live].Value.Uint64())
			if i >= len(recent)-1 {
				debug.SetMemoryLimit(max(limit, 2*slices.Min(recent[:])))
			}
		}
	}()
}
