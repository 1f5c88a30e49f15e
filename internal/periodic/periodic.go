// Package periodic runs the background jobs every replica repeats (key reloads, prunes, sweeps).
package periodic

import (
	"context"
	"time"
)

// Run calls f every interval until ctx ends; the first call is one interval after Run starts.
func Run(ctx context.Context, interval time.Duration, f func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
		}
	}
}
