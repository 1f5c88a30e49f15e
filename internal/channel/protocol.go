package channel

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/eventfilter"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// Protocol timings, as the API document states them to bots.
const (
	// LeaseSeconds is how long a lease lasts after its last poll: acquired, it lasts LeaseSeconds; a poll
	// renews it for its wait and LeaseSeconds more, so a bot polling without pause never loses it, even
	// when its next poll comes moments after a poll that waited its whole timeout.
	LeaseSeconds = 60
	// AnswerSeconds is how long a bot has to report a delivered run's result.
	AnswerSeconds = 30
	// DefaultPollSeconds and MaxPollSeconds bound a long poll's wait.
	DefaultPollSeconds = 30
	MaxPollSeconds     = 60
	// DefaultMaxRuns is how many runs a poll hands out when the bot does not say.
	DefaultMaxRuns = 10
	// maxEventsPerPoll bounds the events one poll reads (and hands out).
	maxEventsPerPoll = 100
)

// Lease is a held Channel lease.
type Lease struct {
	ClaimToken   uuid.UUID
	ExpiresAt    time.Time
	LeaseSeconds int
}

// Message is one item a poll hands out: a run or an event.
type Message struct {
	Run   *Run
	Event *event.Entry
}

// spaceByRef finds a Space of the caller's organization by ID or Slug: the protocol paths take either.
// An ID is taken as it is (resolve reports a missing Space), sparing a poll one query.
func spaceByRef(ctx context.Context, sc authz.Scope, q *db.Queries, ref string) (uuid.UUID, error) {
	if id, err := uuid.Parse(ref); err == nil {
		return id, nil
	}
	sp, err := space.ParentByRef(ctx, sc, q, ref)
	if err != nil {
		return uuid.Nil, err
	}
	return sp.SpaceID, nil
}

// claimable reads a Channel the caller may hold the lease of (Claim).
func claimable(ctx context.Context, sc authz.Scope, c store.Conn, spaceRef, ref string) (Channel, error) {
	spaceID, err := spaceByRef(ctx, sc, c.Queries(), spaceRef)
	if err != nil {
		return Channel{}, err
	}
	ch, err := resolve(ctx, sc, c, spaceID, ref, false)
	if err != nil {
		return ch, err
	}
	return ch, authz.Check(sc, authz.Claim, ch.Target())
}

// AcquireLease takes the Channel's lease for the caller, serving commands (all the Channel declares
// when empty). 409 while another claim token holds it.
func (s *Service) AcquireLease(ctx context.Context, sc authz.Scope, spaceRef, ref string, commands []string, holderAddress string) (Lease, error) {
	ch, err := claimable(ctx, sc, s.Store.Conn(), spaceRef, ref)
	if err != nil {
		return Lease{}, err
	}
	var items []apierr.Item
	for i, c := range commands {
		if _, ok := ch.Commands[c]; !ok {
			items = append(items, apierr.Item{Item: fmt.Sprintf("Commands.%d", i), Description: fmt.Sprintf("the Channel does not declare command %q", c)})
		}
	}
	if len(items) > 0 {
		return Lease{}, apierr.Validation("the bot claims commands the Channel does not declare", items...)
	}
	if commands == nil {
		commands = []string{}
	}
	var out Lease
	err = s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		l, err := tx.Q.ChannelLeaseTake(ctx, db.ChannelLeaseTakeParams{ChannelID: ch.ID, ClaimToken: uuid.New(), HolderUserID: sc.UserID,
			HolderAddress: holderAddress, Commands: store.EncodeJSON(commands), LeaseSeconds: LeaseSeconds})
		if apierr.Is(err, apierr.TypeNotFound) {
			return apierr.Conflict("another holder has the lease of Channel %s; it is free when released or %d seconds after its last poll", ch.Slug, LeaseSeconds)
		}
		if err != nil {
			return err
		}
		out = Lease{ClaimToken: l.ClaimToken, ExpiresAt: l.ExpiresAt, LeaseSeconds: LeaseSeconds}
		return tx.Q.ChannelSeen(ctx, ch.ID)
	})
	return out, err
}

// ReleaseLease gives the lease up; 409 unless the claim token holds it.
func (s *Service) ReleaseLease(ctx context.Context, sc authz.Scope, spaceRef, ref string, token uuid.UUID) error {
	ch, err := claimable(ctx, sc, s.Store.Conn(), spaceRef, ref)
	if err != nil {
		return err
	}
	n, err := s.Store.Q().ChannelLeaseRelease(ctx, db.ChannelLeaseReleaseParams{ChannelID: ch.ID, ClaimToken: token})
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.Conflict("the claim token does not hold the lease of Channel %s", ch.Slug)
	}
	return nil
}

// Poll prepares a poll that waits up to timeout for runs and subscribed events and hands them out,
// renewing the lease. It holds no database connection while it waits: it wakes when events commit on
// any replica (a run's creation is one) and at the timeout. An empty result means nothing arrived.
//
// The poll's first pass is a transaction (take) that renews the lease and hands out due runs and events.
// Woken later, it reads the log through the replica's shared reads (Service.Events) and, unless a run
// of the Channel is among what it read, claims the events by moving the bookmark (compare and set, with
// the claims of every poll the commit woke: Service.bookmarks), so a commit costs a few statements however
// many polls wait. A run of the Channel, or a bookmark moved under it, sends it back to take.
func (s *Service) Poll(ctx context.Context, sc authz.Scope, spaceRef, ref string, token uuid.UUID, timeout time.Duration, maxRuns int) (*event.Poll[Message], error) {
	ch, err := claimable(ctx, sc, s.Store.Conn(), spaceRef, ref)
	if err != nil {
		return nil, err
	}
	var at position
	taken := false
	var p *event.Poll[Message]
	p = event.NewPoll(s.Notifier, ch.OrganizationID, timeout, func(ctx context.Context) ([]Message, bool, error) {
		if !taken {
			msgs, more, next, err := s.take(ctx, sc, ch, token, maxRuns, p.Remaining())
			at, taken = next, err == nil
			return msgs, more, err
		}
		batch, err := s.Events.Read(ctx, ch.OrganizationID, at.bookmark, maxEventsPerPoll)
		if err != nil {
			return nil, false, err
		}
		entries := batch.Entries()
		if len(entries) == 0 {
			return nil, false, nil
		}
		if maxRuns > 0 && runsOf(ch.ID, entries) {
			taken = false
			return nil, true, nil
		}
		events := deliverable(batch, sc, at.subs)
		last := entries[len(entries)-1].CursorID
		won, err := s.advanceBookmark(ctx, ch.ID, at.bookmark, last)
		if err != nil || !won {
			taken = false // the bookmark was moved (a PATCH): take again from where it is
			return nil, true, err
		}
		at.bookmark = last
		msgs := make([]Message, len(events))
		for i := range events {
			msgs[i] = Message{Event: &events[i]}
		}
		return msgs, len(entries) == maxEventsPerPoll, nil
	})
	return p, nil
}

// position is where a poll's Channel stands after a take: its bookmark and its subscriptions.
type position struct {
	bookmark int64
	subs     []Subscription
}

// runsOf reports whether entries hold an event of a run of the Channel (one may be due to it).
func runsOf(channelID uuid.UUID, entries []*db.EventLog) bool {
	for _, e := range entries {
		if e.SubjectEntityType != RunEntityType {
			continue
		}
		var p struct{ ChannelID uuid.UUID }
		if json.Unmarshal(e.Payload, &p) != nil || p.ChannelID == channelID {
			return true
		}
	}
	return false
}

// bookmarkClaim moves a Channel's bookmark from the position its poll read to past the events it read.
type bookmarkClaim struct {
	channel  uuid.UUID
	from, to int64
	won      bool
	err      error
}

func newBookmarkClaims(st *store.Store) *store.Batcher[bookmarkClaim] {
	return &store.Batcher[bookmarkClaim]{Run: func(ctx context.Context, batch []*bookmarkClaim) {
		var p db.ChannelBookmarksAdvanceParams
		for _, c := range batch {
			p.ChannelIds, p.FromBookmarks, p.ToBookmarks = append(p.ChannelIds, c.channel), append(p.FromBookmarks, c.from), append(p.ToBookmarks, c.to)
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		rows, err := st.Q().ChannelBookmarksAdvance(ctx, p)
		type key struct {
			channel uuid.UUID
			from    int64
		}
		moved := map[key]bool{}
		for _, r := range rows {
			moved[key{r.ChannelID, r.FromBookmark}] = true
		}
		for _, c := range batch {
			k := key{c.channel, c.from}
			c.won, c.err = moved[k], err
			delete(moved, k) // of two claims from one position (two polls of a holder), one wins
		}
	}}
}

// advanceBookmark moves the Channel's bookmark from from to to, reporting false when it was no longer
// at from.
func (s *Service) advanceBookmark(ctx context.Context, channelID uuid.UUID, from, to int64) (bool, error) {
	c := &bookmarkClaim{channel: channelID, from: from, to: to}
	s.bookmarks.Do(ctx, c)
	return c.won, c.err
}

// take renews the lease (for wait, what is left of the poll's wait, and LeaseSeconds more) and, in one
// transaction, hands out due runs and the subscribed events after the
// bookmark, advancing the bookmark past every event read: an event is handed out at most once. It
// answers where the Channel's bookmark stands after.
func (s *Service) take(ctx context.Context, sc authz.Scope, ch Channel, token uuid.UUID, maxRuns int, wait time.Duration) ([]Message, bool, position, error) {
	var msgs []Message
	var at position
	more := false
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		msgs, more = nil, false
		leaseCommands, err := tx.Q.ChannelLeaseRenew(ctx, db.ChannelLeaseRenewParams{ChannelID: ch.ID, ClaimToken: token, LeaseSeconds: renewal(wait)})
		if apierr.Is(err, apierr.TypeNotFound) {
			return apierr.Conflict("the claim token no longer holds the lease of Channel %s; acquire the lease again", ch.Slug)
		}
		if err != nil {
			return err
		}
		if maxRuns > 0 {
			commands, err := store.DecodeJSON[[]string](leaseCommands)
			if err != nil {
				return err
			}
			rows, err := tx.Q.CommandRunTake(ctx, db.CommandRunTakeParams{ChannelID: ch.ID, ClaimToken: &token, Commands: commands, MaxRuns: int32(maxRuns)})
			if err != nil {
				return err
			}
			sort.Slice(rows, func(i, j int) bool {
				if !rows[i].CreatedAt.Equal(rows[j].CreatedAt) {
					return rows[i].CreatedAt.Before(rows[j].CreatedAt)
				}
				return rows[i].CommandRunID.String() < rows[j].CommandRunID.String()
			})
			for _, r := range rows {
				run, err := runFromRow(r)
				if err != nil {
					return err
				}
				msgs = append(msgs, Message{Run: &run})
			}
		}
		// Subscriptions are read with the bookmark, so an edit takes effect at the next poll.
		cur, err := tx.Q.ChannelBookmarkForUpdate(ctx, ch.ID)
		if err != nil {
			return err
		}
		subs, err := store.DecodeJSON[[]Subscription](cur.Subscriptions)
		if err != nil {
			return err
		}
		at = position{bookmark: cur.EventBookmark, subs: subs}
		batch, err := eventfilter.Read(ctx, tx.Q, sc.OrganizationID, cur.EventBookmark, maxEventsPerPoll)
		if err != nil || len(batch.Entries()) == 0 {
			return err
		}
		entries := batch.Entries()
		more = len(entries) == maxEventsPerPoll
		events := deliverable(batch, sc, subs)
		for i := range events {
			msgs = append(msgs, Message{Event: &events[i]})
		}
		at.bookmark = entries[len(entries)-1].CursorID
		return tx.Q.ChannelBookmarkAdvance(ctx, db.ChannelBookmarkAdvanceParams{ChannelID: ch.ID, EventBookmark: at.bookmark})
	})
	return msgs, more, at, err
}

// renewal is how many seconds a poll's renewal makes the lease last: what is left of the poll's wait
// (whole seconds, rounded up), and LeaseSeconds more.
func renewal(wait time.Duration) int32 {
	return int32(LeaseSeconds + int(math.Ceil(max(wait, 0).Seconds())))
}

// matches reports whether any subscription selects the event.
func matches(subs []Subscription, e *db.EventLog) bool {
	for _, s := range subs {
		if s.TargetID != nil && (e.TargetID == nil || *e.TargetID != *s.TargetID) {
			continue
		}
		if len(s.EventTypes) == 0 {
			return true
		}
		for _, t := range s.EventTypes {
			if t == e.EventType {
				return true
			}
		}
	}
	return false
}

// deliverable keeps the events of b the subscriptions select and the bot's account may see (eventfilter).
func deliverable(b *eventfilter.Batch, sc authz.Scope, subs []Subscription) []event.Entry {
	var selected []*db.EventLog
	for _, e := range b.Entries() {
		if matches(subs, e) {
			selected = append(selected, e)
		}
	}
	return b.Visible(sc, selected)
}

// ReportResult records a delivered run's outcome. The first answer wins; a run in any other state is
// 409. The caller needs Claim on the Channel.
func (s *Service) ReportResult(ctx context.Context, sc authz.Scope, spaceRef, ref string, runID uuid.UUID, status string, result json.RawMessage, errorMessage string) (Run, error) {
	switch status {
	case "Completed", "Failed", "Rejected":
	default:
		return Run{}, apierr.Validation("Status is Completed, Failed or Rejected", apierr.Item{Item: "Status", Description: "not an outcome"})
	}
	return s.transition(ctx, sc, spaceRef, ref, runID, authz.Claim, "only a delivered run takes a result, and the first answer wins",
		func(q *db.Queries, ch Channel) (*db.CommandRun, error) {
			return q.CommandRunAnswer(ctx, db.CommandRunAnswerParams{OrganizationID: ch.OrganizationID, ChannelID: ch.ID, CommandRunID: runID,
				Status: status, Result: result, ErrorMessage: errorMessage})
		})
}
