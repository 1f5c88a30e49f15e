package event

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notifier holds one LISTEN connection per replica and fans its notifications out to any number of
// waiters, so a long poll on this replica wakes when a change commits on any replica, without holding a
// database connection of its own. Notifications are hints: waiters re-read the tables, and a waiter that
// misses one (reconnect, overflow) still finds its work at its next read.
type Notifier struct {
	URL    string
	Logger *slog.Logger

	mu     sync.Mutex
	wake   chan struct{} // closed (and replaced) on every notification
	latest int64
}

// NewNotifier returns a Notifier for the database at url; Run starts it.
func NewNotifier(url string, logger *slog.Logger) *Notifier {
	return &Notifier{URL: url, Logger: logger, wake: make(chan struct{})}
}

// Wait returns a channel that is closed at the next notification.
func (n *Notifier) Wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.wake
}

// Latest is the newest cursor notified so far.
func (n *Notifier) Latest() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.latest
}

func (n *Notifier) broadcast(cursor int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cursor > n.latest {
		n.latest = cursor
	}
	close(n.wake)
	n.wake = make(chan struct{})
}

// Run listens until ctx ends, reconnecting with backoff. After a reconnect it wakes every waiter, since
// notifications may have been missed meanwhile.
func (n *Notifier) Run(ctx context.Context, channels ...string) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.listen(ctx, channels, func() { backoff = 100 * time.Millisecond })
		if ctx.Err() != nil {
			return
		}
		n.Logger.Warn("event notifier disconnected; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

func (n *Notifier) listen(ctx context.Context, channels []string, connected func()) error {
	conn, err := pgx.Connect(ctx, n.URL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	connected()
	n.broadcast(0) // anything missed while disconnected is found by the waiters' next read
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		cursor, _ := strconv.ParseInt(note.Payload, 10, 64)
		n.broadcast(cursor)
	}
}
