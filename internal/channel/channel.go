// Package channel holds Channels: how command bots connect. A Channel declares the commands its bot
// serves and the events it subscribes to, and keeps the bot's event bookmark; its lease, long poll and
// command runs are the bot protocol of the API (lease, poll, result).
package channel

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/eventfilter"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/target"
)

// EntityType is the Channel's type name.
const EntityType = "Channel"

// Option is one option of a command.
type Option struct {
	Name     string `json:"Name"`
	DataType string `json:"DataType"`
	Required bool   `json:"Required"`
}

// Command is a command a Channel's bot serves.
type Command struct {
	Description string   `json:"Description"`
	Options     []Option `json:"Options"`
}

// Subscription selects events for the Channel's bot.
type Subscription struct {
	EventTypes []string   `json:"EventTypes"`
	TargetID   *uuid.UUID `json:"TargetID"`
}

// Channel is a stored Channel and the state of its lease.
type Channel struct {
	entity.Object
	LastSeenAt         *time.Time
	LeaseHolderAddress string
	Connected          bool
	Fields
}

// Fields are what a write sets.
type Fields struct {
	entity.Common
	Commands      map[string]Command `json:"Commands"`
	Subscriptions []Subscription     `json:"Subscriptions"`
	EventBookmark int64              `json:"EventBookmark"`
}

// Target is the Channel as a permission target (Claim, Use, Edit, Manage).
func (c Channel) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: c.ID.String(), Grants: c.Permissions, SpaceID: c.SpaceID}
}

var commandName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$`)

func (f Fields) normalized() Fields {
	f.Common = f.Common.Normalized()
	if f.Commands == nil {
		f.Commands = map[string]Command{}
	}
	for name, c := range f.Commands {
		if c.Options == nil {
			c.Options = []Option{}
		}
		f.Commands[name] = c
	}
	if f.Subscriptions == nil {
		f.Subscriptions = []Subscription{}
	}
	for i := range f.Subscriptions {
		if f.Subscriptions[i].EventTypes == nil {
			f.Subscriptions[i].EventTypes = []string{}
		}
	}
	return f
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	var items []apierr.Item
	names := slices.Sorted(maps.Keys(f.Commands))
	for _, n := range names {
		if !commandName.MatchString(n) {
			items = append(items, apierr.Item{Item: "Commands." + n, Description: "a command name is letters, digits, '_', '.' and '-', at most 128"})
		}
		seen := map[string]bool{}
		for i, o := range f.Commands[n].Options {
			switch {
			case o.Name == "":
				items = append(items, apierr.Item{Item: fmt.Sprintf("Commands.%s.Options.%d.Name", n, i), Description: "required"})
			case seen[o.Name]:
				items = append(items, apierr.Item{Item: fmt.Sprintf("Commands.%s.Options.%d.Name", n, i), Description: "named twice"})
			}
			seen[o.Name] = true
		}
	}
	if f.EventBookmark < 0 && f.EventBookmark != tailBookmark {
		items = append(items, apierr.Item{Item: "EventBookmark", Description: "a CursorID is not negative"})
	}
	if len(items) > 0 {
		return apierr.Validation("invalid Channel", items...)
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.Channel) (Channel, error) {
	common, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	c := Channel{Object: entity.Object{ID: r.ChannelID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, LastSeenAt: r.LastSeenAt,
		Fields: Fields{Common: common, EventBookmark: r.EventBookmark}}
	if err != nil {
		return c, err
	}
	if c.Commands, err = store.DecodeJSON[map[string]Command](r.Commands); err != nil {
		return c, err
	}
	if c.Subscriptions, err = store.DecodeJSON[[]Subscription](r.Subscriptions); err != nil {
		return c, err
	}
	c.Fields = c.Fields.normalized()
	return c, nil
}

// ListEntity is how Channels are listed.
var ListEntity = listquery.Standard{Table: "channel", ID: "ChannelID", InSpace: true, Permissions: true,
	Unordered: []string{"DisplayName", "HiddenReason", "UpdatedAt"}}.Define(&listquery.Entity{
	Name: EntityType,
	Attributes: []listquery.Attribute{
		listquery.After("DeleteGates"),
		{Name: "EventBookmark", Type: listquery.Int, SQL: "channel.event_bookmark", Filterable: true},
		listquery.After("Permissions"),
		{Name: "Commands", Type: listquery.Opaque}, {Name: "Subscriptions", Type: listquery.Opaque},
		{Name: "Condition", Type: listquery.Opaque}, {Name: "LastSeenAt", Type: listquery.Opaque},
		{Name: "LeaseHolderAddress", Type: listquery.Opaque},
	},
})

// Family declares Channels to the entity kit: a Channel lives in a Space and carries Permissions; its
// bookmark starts at the log's tail and only a PATCH moves it (polls move it without a new Version); its
// Subscriptions name Targets of the organization; reads add the state of its lease.
var Family = entity.Declare(&entity.Family[db.Channel, Channel, Fields]{
	Type: EntityType, Event: "channel", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Channel, error) {
		return q.ChannelInsert(ctx, db.ChannelInsertParams{ChannelID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			Commands: store.EncodeJSON(f.Commands), Subscriptions: jsonArray(f.Subscriptions), EventBookmark: f.EventBookmark})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Channel, f Fields) (*db.Channel, error) {
		return q.ChannelUpdate(ctx, db.ChannelUpdateParams{OrganizationID: sc.OrganizationID, ChannelID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			Commands: store.EncodeJSON(f.Commands), Subscriptions: jsonArray(f.Subscriptions), EventBookmark: f.EventBookmark})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks them on their own.
func (strategy) Normalize(f Fields) (Fields, error) {
	f = f.normalized()
	return f, f.validate()
}

// Check starts a new Channel's bookmark at the log's tail, refuses a bookmark past it, and checks the
// Subscriptions' Targets.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Channel, f Fields) (Fields, error) {
	var err error
	var subs []Subscription
	switch {
	case cur == nil:
		if f.EventBookmark == 0 {
			f.EventBookmark = tailBookmark // a new Channel starts at the log's tail
		}
		f.EventBookmark, err = checkBookmark(ctx, tx.Q, f.EventBookmark)
	case f.EventBookmark != cur.EventBookmark:
		subs = cur.Subscriptions
		f.EventBookmark, err = checkBookmark(ctx, tx.Q, f.EventBookmark)
	default:
		subs = cur.Subscriptions
	}
	if err != nil {
		return f, err
	}
	return f, checkSubscriptions(ctx, sc, tx.Q, subs, f)
}

// OnPut keeps the bookmark: polls move it without a new Version, so a GET -> edit -> PUT would move it
// back and deliver events twice. A PATCH moves it.
func (strategy) OnPut(cur Channel, f Fields) Fields {
	f.EventBookmark = cur.EventBookmark
	return f
}

// OnPatch: a null bookmark in a patch moves it to the log's tail.
func (strategy) OnPatch(_ Channel, patch json.RawMessage, f Fields) Fields {
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(patch, &sent); err == nil {
		if v, ok := sent["EventBookmark"]; ok && string(v) == "null" {
			f.EventBookmark = tailBookmark
		}
	}
	return f
}

// Enrich adds the state of their leases to Channels (withLeases).
func (strategy) Enrich(ctx context.Context, q *db.Queries, chans []Channel) error {
	return withLeases(ctx, q, chans)
}

// Service carries out Channel operations: the kit's, and the protocol of the bots holding them.
type Service struct {
	*entity.Service[db.Channel, Channel, Fields]
	// Notifier wakes long polls when events commit on any replica.
	Notifier *event.Notifier
	Logger   *slog.Logger
	// Resolvers find the entities that options of type Space, Unit, Target and Tag name, each through its
	// own family (Channels read no other family's table).
	Resolvers entity.Resolvers
	// Events reads the log for polls, shared among the polls of the replica; bookmarks moves the
	// bookmarks of the polls a commit woke together.
	Events    *eventfilter.Reader
	bookmarks *store.Batcher[bookmarkClaim]
}

// NewService serves Channels and their protocol from a store.
func NewService(deps entity.Deps, notifier *event.Notifier, events *eventfilter.Reader, logger *slog.Logger, resolvers entity.Resolvers) *Service {
	return &Service{Service: entity.NewService(Family, deps), Notifier: notifier, Events: events, Logger: logger, Resolvers: resolvers,
		bookmarks: newBookmarkClaims(deps.Store)}
}

// resolve reads a Channel named by ID or Slug in a Space of the caller's organization.
func resolve(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, ref string, lock bool) (Channel, error) {
	return Family.Resolve(ctx, sc, c, spaceID, ref, lock)
}

// withLeases fills the lease state of Channels from one query.
func withLeases(ctx context.Context, q *db.Queries, chans []Channel) error {
	ids := make([]uuid.UUID, len(chans))
	for i, c := range chans {
		ids[i] = c.ID
	}
	leases, err := q.ChannelLeasesFor(ctx, ids)
	if err != nil {
		return err
	}
	by := map[uuid.UUID]*db.ChannelLease{}
	for _, l := range leases {
		by[l.ChannelID] = l
	}
	for i := range chans {
		if l, ok := by[chans[i].ID]; ok {
			chans[i].Connected, chans[i].LeaseHolderAddress = true, l.HolderAddress
		}
	}
	return nil
}

// checkSubscriptions requires every Subscription's TargetID the write sets to name a Target of the
// organization (in any Space: a Channel may follow any Target's events), all reported at once, by dot path.
// TargetIDs the stored Subscriptions (cur) already name pass unchecked: a Target deleted since leaves its
// Subscription matching nothing, and the Channel can still be edited without touching it.
func checkSubscriptions(ctx context.Context, sc authz.Scope, q *db.Queries, cur []Subscription, f Fields) error {
	stored := map[uuid.UUID]bool{}
	for _, s := range cur {
		if s.TargetID != nil {
			stored[*s.TargetID] = true
		}
	}
	var ids []uuid.UUID
	for _, s := range f.Subscriptions {
		if s.TargetID != nil && !stored[*s.TargetID] {
			ids = append(ids, *s.TargetID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := target.Existing(ctx, sc, q, ids)
	if err != nil {
		return err
	}
	var bad []string
	for i, s := range f.Subscriptions {
		if s.TargetID != nil && !stored[*s.TargetID] && !found[*s.TargetID] {
			bad = append(bad, fmt.Sprintf("Subscriptions.%d.TargetID", i))
		}
	}
	if len(bad) > 0 {
		return apierr.NoSuchReference(target.EntityType, "of your organization", bad...)
	}
	return nil
}

// tailBookmark asks checkBookmark for the log's tail (validate lets it through; every other negative
// bookmark is refused).
const tailBookmark = math.MinInt64

// checkBookmark resolves tailBookmark and refuses a bookmark past the log's tail, which would silence
// the Channel until the log caught up.
func checkBookmark(ctx context.Context, q *db.Queries, bookmark int64) (int64, error) {
	tail, err := q.EventLogTail(ctx)
	if err != nil {
		return 0, err
	}
	if bookmark == tailBookmark {
		return tail, nil
	}
	if bookmark > tail {
		return 0, apierr.Validation(fmt.Sprintf("EventBookmark %d is past the event log's tail (%d)", bookmark, tail),
			apierr.Item{Item: "EventBookmark", Description: "past the log's tail"})
	}
	return bookmark, nil
}

func jsonArray(v any) []byte {
	b, _ := json.Marshal(v)
	if string(b) == "null" {
		return []byte("[]")
	}
	return b
}
