package event

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Notifier holds one LISTEN connection per replica and fans its notifications out to any number of
// waiters, so a long poll on this replica wakes when a change commits on any replica, without holding a
// database connection of its own. Notifications are hints: waiters re-read the tables, and a waiter that
// misses one (reconnect, overflow) still finds its work at its next read.
type Notifier struct {
	URL    string
	Logger *slog.Logger

	mu        sync.Mutex
	orgs      map[uuid.UUID]chan struct{} // closed (and dropped) on a notification naming the organization
	latest    int64
	listening bool          // LISTEN is in place: every commit from now on is signalled
	stop      chan struct{} // closed by StopWaiters
}

// StopWaiters ends every long poll waiting on this replica (they answer as at their timeout) and makes
// later ones answer at once: the replica is shutting down, and bots should poll another one.
func (n *Notifier) StopWaiters() {
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case <-n.stop:
	default:
		close(n.stop)
	}
}

func (n *Notifier) stopped() <-chan struct{} { return n.stop }

func (n *Notifier) isStopped() bool {
	select {
	case <-n.stop:
		return true
	default:
		return false
	}
}

// NewNotifier returns a Notifier for the database at url; Run starts it.
func NewNotifier(url string, logger *slog.Logger) *Notifier {
	return &Notifier{URL: url, Logger: logger, orgs: map[uuid.UUID]chan struct{}{}, stop: make(chan struct{})}
}

// WaitFor returns a channel that is closed at the next notification of events of the organization (or
// when notifications may have been missed). Long polls wait on it, so one tenant's changes do not wake
// another tenant's polls.
func (n *Notifier) WaitFor(org uuid.UUID) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	ch, ok := n.orgs[org]
	if !ok {
		ch = make(chan struct{})
		n.orgs[org] = ch
	}
	return ch
}

// Watch is WaitFor for what a replica remembers of an organization: the channel is closed at the next
// change signalled in the organization, and ok says whether changes are being signalled at all (false
// while the listener is not connected, when nothing may be remembered). Every change to what an
// organization's members may do (memberships, roles, Groups, Permissions) commits events, so a pass
// numbering them closes the channel.
func (n *Notifier) Watch(org uuid.UUID) (changed <-chan struct{}, ok bool) {
	ch := n.WaitFor(org)
	n.mu.Lock()
	defer n.mu.Unlock()
	return ch, n.listening
}

func (n *Notifier) setListening(on bool) {
	n.mu.Lock()
	n.listening = on
	n.mu.Unlock()
}

// Latest is the newest cursor notified so far.
func (n *Notifier) Latest() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.latest
}

// Signal wakes the waiters of the organizations named (every organization's when orgs is nil) as a
// notification would: the event log calls it for the passes this replica commits.
func (n *Notifier) Signal(cursor int64, orgs []uuid.UUID) { n.broadcast(cursor, orgs) }

// broadcast wakes the waiters of the organizations named, or of every organization when orgs is nil.
func (n *Notifier) broadcast(cursor int64, orgs []uuid.UUID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cursor > n.latest {
		n.latest = cursor
	}
	if orgs == nil {
		for org, ch := range n.orgs {
			close(ch)
			delete(n.orgs, org)
		}
		return
	}
	for _, org := range orgs {
		if ch, ok := n.orgs[org]; ok {
			close(ch)
			delete(n.orgs, org)
		}
	}
}

// maxNotifiedOrgs keeps the payload well under PostgreSQL's 8000-byte limit.
const maxNotifiedOrgs = 100

// parsePayload reads a sequencer pass's NOTIFY payload, "<newest cursor> <organization>,<organization>..."
// or the cursor alone when more than maxNotifiedOrgs organizations are concerned (see
// EventLogAssignCursors); no list, or an unreadable one, wakes everyone (nil).
func parsePayload(p string) (int64, []uuid.UUID) {
	head, rest, _ := strings.Cut(p, " ")
	cursor, _ := strconv.ParseInt(head, 10, 64)
	if rest == "" {
		return cursor, nil
	}
	var orgs []uuid.UUID
	for _, s := range strings.Split(rest, ",") {
		id, err := uuid.Parse(s)
		if err != nil {
			return cursor, nil
		}
		orgs = append(orgs, id)
	}
	return cursor, orgs
}

// Run listens until ctx ends, reconnecting with backoff. After a reconnect it wakes every waiter, since
// notifications may have been missed meanwhile.
func (n *Notifier) Run(ctx context.Context, channels ...string) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.listen(ctx, channels, func() { backoff = 100 * time.Millisecond })
		// Until it listens again, changes go unsignalled: what was remembered on the strength of the
		// signals is forgotten now, and nothing new is remembered meanwhile.
		n.setListening(false)
		n.broadcast(0, nil)
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
	n.setListening(true)
	n.broadcast(0, nil) // anything missed while disconnected is found by the waiters' next read
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		n.broadcast(parsePayload(note.Payload))
	}
}
