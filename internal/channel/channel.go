// Package channel holds Channels: how command bots connect. A Channel declares the commands its bot
// serves and the events it subscribes to, and keeps the bot's event bookmark; its lease, long poll and
// command runs are the protocol of SPEC.md's Endpoints.
package channel

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
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
	ID                 uuid.UUID
	OrganizationID     uuid.UUID
	SpaceID            uuid.UUID
	LastSeenAt         *time.Time
	LeaseHolderAddress string
	Connected          bool
	HiddenReason       string
	Version            int64
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Fields
}

// Fields are what a write sets.
type Fields struct {
	Slug          string             `json:"Slug"`
	DisplayName   string             `json:"DisplayName"`
	Permissions   authz.Grants       `json:"Permissions"`
	Commands      map[string]Command `json:"Commands"`
	Subscriptions []Subscription     `json:"Subscriptions"`
	EventBookmark int64              `json:"EventBookmark"`
	entity.Meta
}

// Target is the Channel as a permission target (Claim, Use, Edit, Manage).
func (c Channel) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: c.ID.String(), Grants: c.Permissions}
}

var commandName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$`)

func (f Fields) normalized() Fields {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
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
	names := make([]string, 0, len(f.Commands))
	for n := range f.Commands {
		names = append(names, n)
	}
	sort.Strings(names)
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
	c := Channel{ID: r.ChannelID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, LastSeenAt: r.LastSeenAt,
		HiddenReason: r.HiddenReason, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, EventBookmark: r.EventBookmark}}
	var err error
	if c.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return c, err
	}
	if c.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
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
var ListEntity = listquery.Define(&listquery.Entity{
	Name: EntityType, From: "channel", Columns: "channel.*", ID: "ChannelID", Org: "channel.organization_id", Slug: "Slug",
	Contains: "channel.search_text", HiddenReason: "channel.hidden_reason",
	ContainsAttrs: []string{"Slug", "DisplayName", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "ChannelID", Type: listquery.UUID, SQL: "channel.channel_id", Filterable: true, Orderable: true, Always: true},
		{Name: "SpaceID", Type: listquery.UUID, SQL: "channel.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "channel.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "channel.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "channel.display_name", Filterable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "channel.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "channel.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "channel.delete_gates", Filterable: true},
		{Name: "EventBookmark", Type: listquery.Int, SQL: "channel.event_bookmark", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "channel.hidden_reason", Filterable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "channel.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "channel.updated_at", Filterable: true},
		{Name: "Permissions", Type: listquery.Opaque}, {Name: "Commands", Type: listquery.Opaque},
		{Name: "Subscriptions", Type: listquery.Opaque}, {Name: "Condition", Type: listquery.Opaque},
		{Name: "LastSeenAt", Type: listquery.Opaque}, {Name: "LeaseHolderAddress", Type: listquery.Opaque},
		{Name: "Version", Type: listquery.Opaque}, {Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"}},
})

// Service carries out Channel operations.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
	// Notifier wakes long polls when events commit on any replica.
	Notifier *event.Notifier
	Logger   *slog.Logger
}

// WriteOptions are the query parameters every write takes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
}

// resolve reads a Channel named by ID or Slug in a Space of the caller's organization.
func resolve(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, ref string, lock bool) (*db.Channel, error) {
	var row *db.Channel
	var err error
	if id, perr := uuid.Parse(ref); perr == nil {
		if lock {
			row, err = q.ChannelGetByIDForUpdate(ctx, db.ChannelGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, ChannelID: id})
		} else {
			row, err = q.ChannelGetByID(ctx, db.ChannelGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, ChannelID: id})
		}
	} else {
		row, err = q.ChannelGetBySlug(ctx, db.ChannelGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: ref})
		if err == nil && lock {
			row, err = q.ChannelGetByIDForUpdate(ctx, db.ChannelGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, ChannelID: row.ChannelID})
		}
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		if _, serr := space.Parent(ctx, sc, q, spaceID); serr != nil {
			return nil, serr
		}
		return nil, apierr.NotFound(EntityType, ref)
	}
	return row, err
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

// List returns a page of Channels (of one Space when spaceID is set) the caller may view.
func (s *Service) List(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params) (listquery.Page[Channel], error) {
	q := listquery.Query{Entity: ListEntity, OrganizationID: sc.OrganizationID, Path: path, Params: params}
	if spaceID != nil {
		if _, err := space.Parent(ctx, sc, s.Store.Q(), *spaceID); err != nil {
			return listquery.Page[Channel]{}, err
		}
		q.Scope = []listquery.Condition{{Column: "channel.space_id", Value: *spaceID}}
	}
	page, err := listquery.Run[db.Channel](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[Channel]{}, err
	}
	out, err := listquery.MapPage(page, fromRow)
	if err != nil {
		return out, err
	}
	out.Items = authz.Filter(sc, authz.View, out.Items, Channel.Target)
	return out, withLeases(ctx, s.Store.Q(), out.Items)
}

// Get returns one Channel (by ID or Slug).
func (s *Service) Get(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string) (Channel, error) {
	row, err := resolve(ctx, sc, s.Store.Q(), spaceID, ref, false)
	if err != nil {
		return Channel{}, err
	}
	c, err := fromRow(row)
	if err != nil {
		return c, err
	}
	if err := authz.Check(sc, authz.View, c.Target()); err != nil {
		return c, err
	}
	chans := []Channel{c}
	err = withLeases(ctx, s.Store.Q(), chans)
	return chans[0], err
}

func (c Channel) changeEvent(ch entity.Change, spaceSlug string) event.Event {
	return entity.ChangeEvent("channel", EntityType, ch, c.OrganizationID, c.ID, c.Slug, c.Version, &entity.SpaceRef{ID: c.SpaceID, Slug: spaceSlug})
}

// Create makes a Channel; its event bookmark starts at the log's tail unless one is given.
func (s *Service) Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f Fields, opts WriteOptions) (Channel, error) {
	f = f.normalized()
	if err := f.validate(); err != nil {
		return Channel{}, err
	}
	var out Channel
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		st, err := space.RowTarget(sp)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.CreateChildren, st); err != nil {
			return err
		}
		if len(f.Permissions) > 0 {
			if err := authz.Check(sc, authz.Manage, st); err != nil {
				return err
			}
			if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", nil, f.Permissions); err != nil {
				return err
			}
		}
		if f.EventBookmark == 0 {
			f.EventBookmark = tailBookmark
		}
		if f.EventBookmark, err = checkBookmark(ctx, tx.Q, f.EventBookmark); err != nil {
			return err
		}
		if err := checkSubscriptions(ctx, sc, tx.Q, nil, f); err != nil {
			return err
		}
		var row *db.Channel
		err = tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			row, err = sp.Q.ChannelInsert(ctx, db.ChannelInsertParams{ChannelID: uuid.New(), OrganizationID: sc.OrganizationID, SpaceID: spaceID,
				Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
				DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
				Commands: store.EncodeJSON(f.Commands), Subscriptions: jsonArray(f.Subscriptions), EventBookmark: f.EventBookmark})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) {
			if !opts.AllowExists {
				return apierr.AlreadyExists(EntityType, f.Slug)
			}
			if row, err = tx.Q.ChannelGetBySlug(ctx, db.ChannelGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug}); err != nil {
				return err
			}
			out, err = fromRow(row)
			return err
		}
		if err != nil {
			return err
		}
		if out, err = fromRow(row); err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Created, sp.Slug))
		return nil
	})
	return out, err
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

type changeFunc func(Channel) (*int64, Fields, error)

// Update replaces a Channel's fields; version must be the stored one.
func (s *Service) Update(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, version int64, f Fields, dryRun bool) (Channel, error) {
	if err := entity.RequireVersion(version); err != nil {
		return Channel{}, err
	}
	return s.write(ctx, sc, spaceID, ref, dryRun, func(cur Channel) (*int64, Fields, error) {
		// Polls move the bookmark without a new Version, so a GET -> edit -> PUT would move it back
		// and deliver events twice: PUT keeps it, PATCH moves it.
		f.EventBookmark = cur.EventBookmark
		return &version, f, nil
	})
}

// Patch applies a merge patch to a Channel's fields.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, patch json.RawMessage, dryRun bool) (Channel, error) {
	return s.write(ctx, sc, spaceID, ref, dryRun, func(cur Channel) (*int64, Fields, error) {
		version, err := entity.SentVersion(patch)
		if err != nil {
			return nil, Fields{}, err
		}
		merged, err := entity.MergePatch(cur.Fields, patch)
		if err != nil {
			return nil, Fields{}, err
		}
		var f Fields
		if err := json.Unmarshal(merged, &f); err != nil {
			return nil, Fields{}, apierr.UserInput("the patched Channel is not valid: " + err.Error())
		}
		var sent map[string]json.RawMessage
		if err := json.Unmarshal(patch, &sent); err == nil {
			if v, ok := sent["EventBookmark"]; ok && string(v) == "null" {
				f.EventBookmark = tailBookmark // null moves the bookmark to the log's tail
			}
		}
		return version, f, nil
	})
}

func (s *Service) write(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool, change changeFunc) (Channel, error) {
	var out Channel
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		row, err := resolve(ctx, sc, tx.Q, spaceID, ref, true)
		if err != nil {
			return err
		}
		cur, err := fromRow(row)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Edit, cur.Target()); err != nil {
			return err
		}
		version, f, err := change(cur)
		if err != nil {
			return err
		}
		f = f.normalized()
		if err := f.validate(); err != nil {
			return err
		}
		if f.EventBookmark != cur.EventBookmark {
			if f.EventBookmark, err = checkBookmark(ctx, tx.Q, f.EventBookmark); err != nil {
				return err
			}
		}
		if !cur.Permissions.Equal(f.Permissions) {
			if err := authz.Check(sc, authz.Manage, cur.Target()); err != nil {
				return err
			}
			if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", cur.Permissions, f.Permissions); err != nil {
				return err
			}
		}
		if err := entity.CheckVersion(EntityType, cur.ID, version, cur.Version); err != nil {
			return err
		}
		if err := checkSubscriptions(ctx, sc, tx.Q, cur.Subscriptions, f); err != nil {
			return err
		}
		updated, err := tx.Q.ChannelUpdate(ctx, db.ChannelUpdateParams{OrganizationID: sc.OrganizationID, ChannelID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			Commands: store.EncodeJSON(f.Commands), Subscriptions: jsonArray(f.Subscriptions), EventBookmark: f.EventBookmark})
		if err != nil {
			return entity.SlugClash(err, EntityType, f.Slug)
		}
		if out, err = fromRow(updated); err != nil {
			return err
		}
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Updated, sp.Slug))
		return nil
	})
	if err != nil {
		return out, err
	}
	chans := []Channel{out}
	err = withLeases(ctx, s.Store.Q(), chans)
	return chans[0], err
}

// Delete removes a Channel (its lease and runs with it); refused while it has DeleteGates.
func (s *Service) Delete(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		row, err := resolve(ctx, sc, tx.Q, spaceID, ref, true)
		if err != nil {
			return err
		}
		cur, err := fromRow(row)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Delete, cur.Target()); err != nil {
			return err
		}
		if err := entity.CheckDeleteGates(EntityType, cur.ID, cur.Slug, cur.DeleteGates); err != nil {
			return err
		}
		n, err := tx.Q.ChannelDelete(ctx, db.ChannelDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, ChannelID: cur.ID})
		if err != nil {
			return store.TranslateDelete(err, EntityType, cur.ID.String())
		}
		if n == 0 {
			return apierr.NotFound(EntityType, ref)
		}
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		tx.Emit(cur.changeEvent(entity.Deleted, sp.Slug))
		return nil
	})
}
