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

	mu     sync.Mutex
	orgs   map[uuid.UUID]*signal       // fired (and dropped) on a notification naming the organization
	access map[uuid.UUID]chan struct{} // closed (and dropped) when access in the organization may have changed
	latest int64
	// generations count the notifications per organization, and those concerning every organization
	// (Generation).
	generations map[uuid.UUID]uint64
	everyone    uint64
	listening   bool          // LISTEN is in place: every commit from now on is signalled
	stop        chan struct{} // closed by StopWaiters
	// handlers are called on a notification of their channel (OnNotify), instead of the event broadcast.
	handlers map[string]func()
}

// OnNotify makes the listener LISTEN on channel too and call fn (on a goroutine of its own) at each
// notification there, and at every (re)connect, since notifications may have been missed meanwhile. For
// state other than the event log that replicas cache (the CORS origins of OAuth clients). Register before Run.
func (n *Notifier) OnNotify(channel string, fn func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.handlers == nil {
		n.handlers = map[string]func(){}
	}
	n.handlers[channel] = fn
}

// handler is fn of OnNotify for channel, or nil.
func (n *Notifier) handler(channel string) func() {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.handlers[channel]
}

// callHandlers calls every OnNotify handler, each on its own goroutine.
func (n *Notifier) callHandlers() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, fn := range n.handlers {
		go fn()
	}
}

// StopWaiters ends every long poll waiting on this replica (they answer as at their timeout) and makes
// later ones answer at once: the replica is shutting down, and bots should poll another one.
func (n *Notifier) StopWaiters() {
	n.mu.Lock()
	select {
	case <-n.stop:
	default:
		close(n.stop)
	}
	calls := fire(n.orgs, nil)
	n.mu.Unlock()
	run(calls)
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
	return &Notifier{URL: url, Logger: logger, orgs: map[uuid.UUID]*signal{}, access: map[uuid.UUID]chan struct{}{},
		generations: map[uuid.UUID]uint64{}, stop: make(chan struct{})}
}

// Next is the organization's next notification of events: the first after this call (or a wake when
// notifications may have been missed). Long polls wait for it, so one tenant's changes do not wake
// another tenant's polls.
func (n *Notifier) Next(org uuid.UUID) Wake {
	n.mu.Lock()
	defer n.mu.Unlock()
	s, ok := n.orgs[org]
	if !ok {
		s = &signal{ch: make(chan struct{})}
		n.orgs[org] = s
	}
	return Wake{n: n, s: s}
}

// signal is one coming notification of an organization: ch is closed and calls are called when it comes.
type signal struct {
	ch    chan struct{}
	calls map[*func()]struct{}
	fired bool
}

// Wake is an organization's next notification after some moment (Notifier.Next).
type Wake struct {
	n *Notifier
	s *signal
}

// C is closed when the notification comes.
func (w Wake) C() <-chan struct{} { return w.s.ch }

// Call arranges for fn to be called once: when the notification comes (at once if it came already) or
// the replica stops waiters (StopWaiters). A waiter parked this way costs no goroutine. fn runs on the
// notifying goroutine, so it must not block. cancel prevents a call not yet made.
func (w Wake) Call(fn func()) (cancel func()) {
	n := w.n
	n.mu.Lock()
	if w.s.fired || n.isStopped() {
		n.mu.Unlock()
		fn()
		return func() {}
	}
	if w.s.calls == nil {
		w.s.calls = map[*func()]struct{}{}
	}
	key := &fn
	w.s.calls[key] = struct{}{}
	n.mu.Unlock()
	return func() {
		n.mu.Lock()
		delete(w.s.calls, key)
		n.mu.Unlock()
	}
}

// fire fires the signals of the organizations named (all when orgs is nil), dropping them, and returns
// the calls to make once the lock is released.
func fire(m map[uuid.UUID]*signal, orgs []uuid.UUID) []func() {
	var calls []func()
	fireOne := func(org uuid.UUID, s *signal) {
		close(s.ch)
		s.fired = true
		for fn := range s.calls {
			calls = append(calls, *fn)
		}
		s.calls = nil
		delete(m, org)
	}
	if orgs == nil {
		for org, s := range m {
			fireOne(org, s)
		}
		return calls
	}
	for _, org := range orgs {
		if s, ok := m[org]; ok {
			fireOne(org, s)
		}
	}
	return calls
}

func run(calls []func()) {
	for _, fn := range calls {
		fn()
	}
}

// WatchAccess is for what a replica remembers of an organization's members (roles, Groups, grants): the
// channel is closed at the next signalled change in the organization that may alter them (a change of a
// family that is not quiet, see Log.QuietFamilies), and ok says whether changes are being signalled at all
// (false while the listener is not connected, when nothing may be remembered).
func (n *Notifier) WatchAccess(org uuid.UUID) (changed <-chan struct{}, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return waiter(n.access, org), n.listening
}

func waiter(m map[uuid.UUID]chan struct{}, org uuid.UUID) chan struct{} {
	ch, ok := m[org]
	if !ok {
		ch = make(chan struct{})
		m[org] = ch
	}
	return ch
}

func (n *Notifier) setListening(on bool) {
	n.mu.Lock()
	n.listening = on
	n.mu.Unlock()
}

// Generation identifies the notifications of an organization received so far: it changes at each one.
// A read of the log that began at a Generation saw every event notified by then, so polls of the
// organization that would read the same thing at the same Generation may share one read.
type Generation struct{ org, everyone uint64 }

// Generation is the organization's current Generation; ok is false while changes are not being
// signalled (the listener is not connected), when no read may be shared.
func (n *Notifier) Generation(org uuid.UUID) (gen Generation, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return Generation{org: n.generations[org], everyone: n.everyone}, n.listening
}

// Latest is the newest cursor notified so far.
func (n *Notifier) Latest() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.latest
}

// Change is what a sequencer pass signals: its last cursor, the organizations whose events it numbered
// (nil: every organization) and, of those, the ones where access may have changed (nil: every one).
type Change struct {
	Cursor int64
	Orgs   []uuid.UUID
	Access []uuid.UUID
}

// everything is the Change that wakes every waiter and ends every watch: notifications may have been
// missed, or are about to be.
var everything = Change{}

// Signal wakes the waiters and ends the watches a Change concerns, as its notification would: the event
// log calls it for the passes this replica commits.
func (n *Notifier) Signal(c Change) { n.broadcast(c) }

func (n *Notifier) broadcast(c Change) {
	n.mu.Lock()
	if c.Cursor > n.latest {
		n.latest = c.Cursor
	}
	if c.Orgs == nil {
		n.everyone++
		clear(n.generations) // every Generation differs from all before it through everyone
	}
	for _, org := range c.Orgs {
		n.generations[org]++
	}
	calls := fire(n.orgs, c.Orgs)
	closeWaiters(n.access, c.Access)
	n.mu.Unlock()
	run(calls)
}

// closeWaiters closes the channels of the organizations named, or all when orgs is nil.
func closeWaiters(m map[uuid.UUID]chan struct{}, orgs []uuid.UUID) {
	if orgs == nil {
		for org, ch := range m {
			close(ch)
			delete(m, org)
		}
		return
	}
	for _, org := range orgs {
		if ch, ok := m[org]; ok {
			close(ch)
			delete(m, org)
		}
	}
}

// maxNotifiedOrgs keeps the payload under PostgreSQL's 8000-byte limit (two lists of at most 100 UUIDs).
const maxNotifiedOrgs = 100

// parsePayload reads a sequencer pass's NOTIFY payload (hubd_sequence_pass): "<last cursor>
// <organizations> <organizations where access may have changed>", lists comma-separated, "-" for none; or
// the cursor alone when too many organizations are concerned. Whatever it cannot read concerns everyone:
// no organization list, or an unreadable one, means every organization, and a missing access list (a
// replica of an older version) means every organization named.
func parsePayload(p string) Change {
	fields := strings.Fields(p)
	if len(fields) == 0 {
		return everything
	}
	cursor, _ := strconv.ParseInt(fields[0], 10, 64)
	c := Change{Cursor: cursor}
	if len(fields) < 2 {
		return c
	}
	orgs, ok := parseOrgs(fields[1])
	if !ok {
		return c
	}
	c.Orgs, c.Access = orgs, orgs
	if len(fields) > 2 {
		if access, ok := parseOrgs(fields[2]); ok {
			c.Access = access
		}
	}
	return c
}

// parseOrgs reads a comma-separated list of organization IDs; "-" is the empty list.
func parseOrgs(list string) ([]uuid.UUID, bool) {
	orgs := []uuid.UUID{}
	if list == "-" {
		return orgs, true
	}
	for _, s := range strings.Split(list, ",") {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, false
		}
		orgs = append(orgs, id)
	}
	return orgs, true
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
		n.broadcast(everything)
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
	n.mu.Lock()
	all := append([]string(nil), channels...)
	for ch := range n.handlers {
		all = append(all, ch)
	}
	n.mu.Unlock()
	for _, ch := range all {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	connected()
	n.setListening(true)
	n.broadcast(everything) // anything missed while disconnected is found by the waiters' next read
	n.callHandlers()
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if fn := n.handler(note.Channel); fn != nil {
			go fn()
			continue
		}
		n.broadcast(parsePayload(note.Payload))
	}
}
