package bridgeworker

import (
	"context"
	"crypto/subtle"

	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/event"
)

// Event-consumer protocol settings (the worker event-consumer protocol of the API).
const (
	// TokenTTL is how long a token from /auth/worker lives; the worker signs in again on a 401.
	TokenTTL = 10 * time.Minute
	// DefaultPollSeconds and MaxPollSeconds bound a poll's wait.
	DefaultPollSeconds = 30
	MaxPollSeconds     = 60
	// DefaultMaxEvents and MaxMaxEvents bound the events one poll hands out.
	DefaultMaxEvents = 100
	MaxMaxEvents     = 500
)

// ErrBadCredentials is a wrong worker ID or Secret (RFC 6749 invalid_client).
var ErrBadCredentials = errors.New("unknown worker or wrong secret")

// dummyHash is compared against when the worker does not exist, so both failures take the same time.
var dummyHash = hashSecret("no worker has this secret")

// Authenticate checks a worker's ID and Secret (in constant time) and returns the principal of its bot
// User in its organization, with the role its membership holds now.
func (s *Service) Authenticate(ctx context.Context, workerID uuid.UUID, secret string) (auth.Principal, error) {
	row, err := s.Store.Q().BridgeWorkerGetForAuth(ctx, workerID)
	stored := dummyHash
	switch {
	case err == nil:
		stored = row.SecretHash
	case !apierr.Is(err, apierr.TypeNotFound):
		return auth.Principal{}, err
	}
	ok := subtle.ConstantTimeCompare(hashSecret(secret), stored) == 1
	if err != nil || !ok {
		return auth.Principal{}, ErrBadCredentials
	}
	// The Secret never signs in with more than the role of whoever it was issued to.
	role := auth.Weaker(auth.Role(row.OrgRole), auth.Role(row.SecretMaxOrgRole))
	return auth.Principal{UserID: row.UserID, OrganizationID: row.OrganizationID, Role: role}, nil
}

// Subscription is what a worker sends on every poll: which events it wants through which cursor.
type Subscription struct {
	Name       string
	EventTypes []string
	SpaceID    *uuid.UUID
	TargetID   *uuid.UUID
	// FromCursor, when set, places the cursor there: a new Name starts there instead of at the tail, and
	// an existing Name moves there unless this same FromCursor placed it last (it is the
	// position of the first connect, and a client may send it on every poll).
	FromCursor *int64
}

func (sub Subscription) matches(e *db.EventLog) bool {
	if sub.SpaceID != nil && (e.SpaceID == nil || *e.SpaceID != *sub.SpaceID) {
		return false
	}
	if sub.TargetID != nil && (e.TargetID == nil || *e.TargetID != *sub.TargetID) {
		return false
	}
	if len(sub.EventTypes) == 0 {
		return true
	}
	for _, t := range sub.EventTypes {
		if t == e.EventType {
			return true
		}
	}
	return false
}

// Poll prepares a poll that waits up to timeout for events after the worker's cursor Name that the
// subscription selects and hands out at most maxEvents of them, advancing the cursor past every event
// read. The caller is the worker's bot User or holds Edit on the worker. It holds no database connection
// while it waits: it wakes when events commit on any replica and at the timeout. An empty result means
// nothing arrived.
//
// A woken poll reads the log through the replica's shared reads (Service.Events) and claims what it read
// by moving its cursor: in the read's own statement when the poll began the read, else with the claims
// of the other polls that joined it (Service.advance). A commit costs a few statements however many
// polls wait, and a poll woken alone one.
func (s *Service) Poll(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, sub Subscription, timeout time.Duration, maxEvents int) (*event.Poll[event.Entry], error) {
	w, err := s.Resolve(ctx, sc, s.Store.Conn(), spaceID, ref, false)
	if err != nil {
		return nil, err
	}
	if sc.UserID != w.UserID {
		if err := authz.Check(sc, authz.Edit, w.Target()); err != nil {
			return nil, err
		}
	}
	cursor, err := s.openCursor(ctx, w, sub)
	if err != nil {
		return nil, err
	}
	return event.NewPoll(s.Notifier, w.OrganizationID, timeout, func(ctx context.Context) ([]event.Entry, bool, error) {
		cl := &CursorClaim{Worker: w.ID, Name: sub.Name}
		batch, err := s.Events(ctx, w.OrganizationID, cursor, maxEvents, cl)
		if err != nil {
			return nil, false, err
		}
		entries := batch.Entries()
		if len(entries) == 0 {
			return nil, false, nil
		}
		var selected []*db.EventLog
		for _, e := range entries {
			if sub.matches(e) {
				selected = append(selected, e)
			}
		}
		out := batch.Visible(sc, selected)
		last := entries[len(entries)-1].CursorID
		won := cl.Won
		if !cl.Tried {
			if won, err = s.advance(ctx, w.ID, sub.Name, cursor, last); err != nil {
				return nil, false, err
			}
		}
		if !won {
			// Another poll of the Name took these events: go on from where it left the cursor.
			cursor, err = s.cursorAt(ctx, w, sub.Name)
			return nil, true, err
		}
		cursor = last
		return out, len(entries) == maxEvents, nil
	}), nil
}

// openCursor marks the worker seen and returns its named cursor, creating it on a Name's first connect:
// at FromCursor when given, else at the log's tail. Later FromCursors are ignored, so pollers sharing a
// Name can never move each other back.
func (s *Service) openCursor(ctx context.Context, w BridgeWorker, sub Subscription) (int64, error) {
	q := s.Store.Q()
	if err := q.BridgeWorkerSeen(ctx, w.ID); err != nil {
		return 0, err
	}
	cursor, err := s.cursorAt(ctx, w, sub.Name)
	if !apierr.Is(err, apierr.TypeNotFound) || err == nil {
		return cursor, err
	}
	tail, err := q.EventLogTail(ctx)
	if err != nil {
		return 0, err
	}
	start := tail
	if sub.FromCursor != nil {
		if *sub.FromCursor > tail {
			return 0, apierr.Validation(fmt.Sprintf("FromCursor %d is past the event log's tail (%d)", *sub.FromCursor, tail),
				apierr.Item{Item: "FromCursor", Description: "past the log's tail"})
		}
		start = *sub.FromCursor
	}
	cursor, err = q.BridgeWorkerCursorCreate(ctx, db.BridgeWorkerCursorCreateParams{BridgeWorkerID: w.ID, Name: sub.Name, Cursor: start})
	if apierr.Is(err, apierr.TypeValidation) { // the worker was deleted meanwhile
		return 0, apierr.NotFound(EntityType, w.ID.String())
	}
	return cursor, err
}

// cursorAt reads where the named cursor is now (NotFound when it does not exist).
func (s *Service) cursorAt(ctx context.Context, w BridgeWorker, name string) (int64, error) {
	return s.Store.Q().BridgeWorkerCursorGet(ctx, db.BridgeWorkerCursorGetParams{BridgeWorkerID: w.ID, Name: name})
}

// ValidateName checks a cursor Name: the path's, which a body Name must equal.
func ValidateName(path, body string) error {
	if body != "" && body != path {
		return apierr.Validation("the body's Name must equal the cursor name of the path",
			apierr.Item{Item: "Name", Description: "differs from the path's name " + path})
	}
	return nil
}
