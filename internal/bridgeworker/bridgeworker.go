// Package bridgeworker holds BridgeWorkers: registered worker processes of a Space. Each is backed by a
// bot User (whose membership carries the worker's OrgRole) and signs in with a server-generated Secret
// at {base_url}/auth/worker; only a SHA-256 hash of the Secret is stored. Worker event consumers read the
// event log through named cursors the server keeps per worker (events.go).
package bridgeworker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/org"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the BridgeWorker's type name.
const EntityType = "BridgeWorker"

// ReadyWindow is how recently a worker must have polled to be Ready.
const ReadyWindow = time.Minute

// BridgeWorker is a stored BridgeWorker with its bot User's role.
type BridgeWorker struct {
	entity.Object
	UserID uuid.UUID
	// Secret is set only in the result of Create, and of an update that issued a new one: it is never
	// stored, only its hash.
	Secret string
	// SecretMaxOrgRole is the strongest role a sign-in with the Secret gets: the role of whoever it was
	// issued to, so a worker raised above it does not raise the power of whoever holds its old Secret.
	SecretMaxOrgRole auth.Role
	LastSeenAt       *time.Time
	Fields
}

// Ready reports whether the worker polled within ReadyWindow.
func (w BridgeWorker) Ready() bool {
	return w.LastSeenAt != nil && time.Since(*w.LastSeenAt) < ReadyWindow
}

// Fields are what a write sets: a bot's, how long the worker may hold an operation without reporting
// (ClaimTTLSeconds: then it is Aborted; 0 on a write means the default), and what it says it supports.
type Fields struct {
	org.BotFields
	ClaimTTLSeconds int64      `json:"ClaimTTLSeconds"`
	ProvidedInfo    WorkerInfo `json:"ProvidedInfo"`
}

// Claim TTL bounds: an operation a worker holds is Aborted after ClaimTTLSeconds without a report from it.
const (
	DefaultClaimTTLSeconds = 600
	MinClaimTTLSeconds     = 30
	MaxClaimTTLSeconds     = 86400
)

// ClaimTTL is how long the worker may hold an operation without reporting.
func (w BridgeWorker) ClaimTTL() time.Duration { return time.Duration(w.ClaimTTLSeconds) * time.Second }

// WorkerInfo is what a worker says about itself: the configuration it applies.
type WorkerInfo struct {
	BridgeWorkerInfo BridgeWorkerInfo `json:"BridgeWorkerInfo"`
}

// BridgeWorkerInfo lists the ToolchainType and ProviderType pairs the worker applies.
type BridgeWorkerInfo struct {
	SupportedConfigTypes []SupportedConfigType `json:"SupportedConfigTypes"`
}

// SupportedConfigType is one kind of configuration the worker applies.
type SupportedConfigType struct {
	ToolchainType string `json:"ToolchainType"`
	ProviderType  string `json:"ProviderType"`
	LiveStateType string `json:"LiveStateType"`
}

// maxConfigTypes bounds SupportedConfigTypes.
const maxConfigTypes = 100

// Target is the BridgeWorker as a permission target (View, Edit, Manage, Delete); its own bot User views it
// whatever its role, so a guest worker reads its events.
func (w BridgeWorker) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: w.ID.String(), Grants: w.Permissions.WithViewer(w.UserID), SpaceID: w.SpaceID}
}

// normalized: a worker is a viewer unless told otherwise (its token only needs to read, so a leaked
// Secret cannot write anywhere), and holds an operation for the default claim TTL unless told otherwise.
func normalized(f Fields) Fields {
	f.BotFields = f.Normalized(auth.RoleViewer)
	if f.ClaimTTLSeconds == 0 {
		f.ClaimTTLSeconds = DefaultClaimTTLSeconds
	}
	if f.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes == nil {
		f.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes = []SupportedConfigType{}
	}
	return f
}

// validate checks a worker's own fields: the claim TTL within its bounds, and the config types it
// supports named by a known ToolchainType and a ProviderType.
func (f Fields) validate() error {
	if err := f.BotFields.Validate(); err != nil {
		return err
	}
	if f.ClaimTTLSeconds < MinClaimTTLSeconds || f.ClaimTTLSeconds > MaxClaimTTLSeconds {
		return apierr.Validation(fmt.Sprintf("ClaimTTLSeconds must be from %d to %d (seconds), or 0 for the default %d", MinClaimTTLSeconds, MaxClaimTTLSeconds, DefaultClaimTTLSeconds),
			apierr.Item{Item: "ClaimTTLSeconds", Description: "out of range"})
	}
	types := f.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes
	if len(types) > maxConfigTypes {
		return apierr.Validation(fmt.Sprintf("ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes has %d entries; at most %d", len(types), maxConfigTypes),
			apierr.Item{Item: "ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes", Description: "too many"})
	}
	for i, t := range types {
		item := fmt.Sprintf("ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes.%d", i)
		if err := configdata.CheckToolchain(t.ToolchainType, "unknown"); err != nil {
			return apierr.Validation(item+".ToolchainType: "+apierr.MessageOf(err), apierr.Item{Item: item + ".ToolchainType", Description: "unknown ToolchainType"})
		}
		if t.ProviderType == "" || len(t.ProviderType) > 128 || len(t.LiveStateType) > 128 {
			return apierr.Validation(item+": ProviderType is required, and it and LiveStateType are at most 128 characters",
				apierr.Item{Item: item + ".ProviderType", Description: "missing or too long"})
		}
	}
	return nil
}

func fromRow(r *db.BridgeWorkerGetWithRoleRow) (BridgeWorker, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	w := BridgeWorker{Object: entity.Object{ID: r.BridgeWorkerID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID,
		HiddenReason: r.HiddenReason, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		UserID: r.UserID, LastSeenAt: r.LastSeenAt, SecretMaxOrgRole: auth.Role(r.SecretMaxOrgRole)}
	if err != nil {
		return w, err
	}
	info, err := store.DecodeJSON[WorkerInfo](r.ProvidedInfo)
	w.Fields = normalized(Fields{BotFields: org.BotFields{Common: c, OrgRole: auth.Role(r.OrgRole)}, ClaimTTLSeconds: int64(r.ClaimTtlSeconds), ProvidedInfo: info})
	return w, err
}

// ListEntity is how BridgeWorkers are listed (indexes in migration 000011).
var ListEntity = listquery.Standard{Table: "bw", ID: "BridgeWorkerID", InSpace: true, Permissions: true}.Define(&listquery.Entity{
	Name:       EntityType,
	From:       "bridge_worker bw JOIN organization_member m ON m.user_id = bw.user_id AND m.organization_id = bw.organization_id",
	Columns:    "bw.*, m.org_role",
	Visibility: &listquery.Visibility{Grants: "bw.permissions", Space: "bw.space_id", Members: "ARRAY[bw.user_id]"},
	Attributes: []listquery.Attribute{
		listquery.After("OrganizationID"),
		{Name: "UserID", Type: listquery.UUID, SQL: "bw.user_id", Filterable: true, Orderable: true, Always: true},
		listquery.After("DisplayName"),
		{Name: "OrgRole", Type: listquery.String, SQL: "m.org_role", Filterable: true},
		listquery.After("HiddenReason"),
		{Name: "LastSeenAt", Type: listquery.Opaque},
		{Name: "ClaimTTLSeconds", Type: listquery.Int, SQL: "bw.claim_ttl_seconds", Filterable: true},
		{Name: "ProvidedInfo", Type: listquery.Opaque},
		listquery.After("Permissions"),
		{Name: "Secret", Type: listquery.Opaque}, {Name: "Condition", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "UserID", Field: "User"}},
})

// Family declares BridgeWorkers to the entity kit: they live in a Space, have Permissions, and are backed
// by a bot User whose membership carries OrgRole (so their events are not quiet); each is issued a
// Secret when created, and a new one when raised above the role of whoever holds the current one.
var Family = entity.Declare(&entity.Family[db.BridgeWorkerGetWithRoleRow, BridgeWorker, Fields]{
	Type: EntityType, Event: "bridge_worker", Listing: ListEntity, Parent: space.Of, Strategy: strategy{},
	// The bot User and its membership are made with the worker, in the write's savepoint. Its Secret is
	// issued by AfterWrite; until then the stored hash is of nothing anyone holds.
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.BridgeWorkerGetWithRoleRow, error) {
		userID, err := org.CreateBotUser(ctx, sc, q, org.BotBridgeWorker, id, f.DisplayName, f.OrgRole)
		if err != nil {
			return nil, err
		}
		_, unheld, err := newSecret()
		if err != nil {
			return nil, err
		}
		if _, err := q.BridgeWorkerInsert(ctx, db.BridgeWorkerInsertParams{BridgeWorkerID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
			UserID: userID, Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions), SecretHash: unheld,
			SecretMaxOrgRole: string(sc.Role), ClaimTtlSeconds: int32(f.ClaimTTLSeconds), ProvidedInfo: store.EncodeJSON(f.ProvidedInfo)}); err != nil {
			return nil, err
		}
		return q.BridgeWorkerGetWithRole(ctx, db.BridgeWorkerGetWithRoleParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, BridgeWorkerID: id})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur BridgeWorker, f Fields) (*db.BridgeWorkerGetWithRoleRow, error) {
		if f.OrgRole != cur.OrgRole {
			if err := org.SetBotRole(ctx, sc, q, cur.UserID, f.OrgRole); err != nil {
				return nil, err
			}
		}
		if _, err := q.BridgeWorkerUpdate(ctx, db.BridgeWorkerUpdateParams{OrganizationID: sc.OrganizationID, BridgeWorkerID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			ClaimTtlSeconds: int32(f.ClaimTTLSeconds), ProvidedInfo: store.EncodeJSON(f.ProvidedInfo)}); err != nil {
			return nil, err
		}
		return q.BridgeWorkerGetWithRole(ctx, db.BridgeWorkerGetWithRoleParams{OrganizationID: sc.OrganizationID, SpaceID: cur.SpaceID, BridgeWorkerID: cur.ID})
	},
	FromRow: fromRow,
})

type strategy struct{}

// botRules: a worker's role is not a member's (it needs no ManageMembers).
var botRules = org.BotRules{Noun: "a worker"}

// Normalize: a worker is a viewer unless told otherwise.
func (strategy) Normalize(f Fields) (Fields, error) {
	f = normalized(f)
	return f, f.validate()
}

// DeleteRow deletes the bot User, and the worker, its membership and its cursors with it; Targets naming
// the worker hold it (a foreign key: 409 Conflict).
func (strategy) DeleteRow(ctx context.Context, q *db.Queries, _ authz.Scope, cur BridgeWorker) (int64, error) {
	return org.DeleteBotUser(ctx, q, cur.UserID)
}

// BeforeDelete: nobody deletes a worker stronger than themselves.
func (strategy) BeforeDelete(_ context.Context, _ *store.Tx, sc authz.Scope, cur BridgeWorker) error {
	return botRules.CheckDelete(sc, cur.OrgRole)
}

// AfterWrite issues the worker's Secret (issueSecret).
func (strategy) AfterWrite(ctx context.Context, _ entity.Deps, tx *store.Tx, sc authz.Scope, before *BridgeWorker, after BridgeWorker) (BridgeWorker, error) {
	return issueSecret(ctx, tx, sc, before, after)
}

// Check: nobody gives a worker's bot User a role stronger than their own, nor changes the role of a
// worker stronger than themselves.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *BridgeWorker, f Fields) (Fields, error) {
	return f, org.CheckBotWrite(ctx, tx.Q, sc, botRules, cur, f.BotFields)
}

// issueSecret gives a new worker its Secret, and a worker raised above the role its Secret signs in with
// a new one (the old one stops working): each signs in with at most the role of whoever it is issued to,
// so a worker raised later does not raise the power of whoever holds its old Secret. The result carries
// the Secret, shown this once (not on a dry run, where nothing is stored).
func issueSecret(ctx context.Context, tx *store.Tx, sc authz.Scope, before *BridgeWorker, after BridgeWorker) (BridgeWorker, error) {
	if before != nil && before.SecretMaxOrgRole.AtLeast(after.OrgRole) {
		return after, nil
	}
	secret, hash, err := newSecret()
	if err != nil {
		return after, err
	}
	if err := tx.Q.BridgeWorkerSetSecret(ctx, db.BridgeWorkerSetSecretParams{OrganizationID: sc.OrganizationID, BridgeWorkerID: after.ID,
		SecretHash: hash, SecretMaxOrgRole: string(sc.Role)}); err != nil {
		return after, err
	}
	after.SecretMaxOrgRole = sc.Role
	if !tx.DryRun {
		after.Secret = secret
	}
	return after, nil
}

// Service carries out BridgeWorker operations (the kit's) and the worker event-cursor protocol.
type Service struct {
	*entity.Service[db.BridgeWorkerGetWithRoleRow, BridgeWorker, Fields]
	// Notifier wakes event-cursor long polls when events commit on any replica.
	Notifier *event.Notifier
	// Events reads the log for event-cursor polls, shared among the polls of the replica
	// (eventfilter.Reader: it reads Targets, and Targets name BridgeWorkers, so it is handed in).
	Events EventReader
	claims *store.Batcher[claim]
}

// EventBatch is a read of the event log: its entries in cursor order, and the rule keeping those of them
// a caller may see.
type EventBatch interface {
	Entries() []*db.EventLog
	Visible(sc authz.Scope, selected []*db.EventLog) []event.Entry
}

// EventReader reads at most max entries of an organization after a cursor. A reader may claim what it
// reads for the poll's cursor in the same statement (no round trip of its own); it then records that it did
// in claim, and the poll does not claim again.
type EventReader func(ctx context.Context, org uuid.UUID, after int64, max int, claim *CursorClaim) (EventBatch, error)

// NewService serves BridgeWorkers from a store.
func NewService(deps entity.Deps, notifier *event.Notifier, events EventReader) *Service {
	return &Service{Service: entity.NewService(Family, deps), Notifier: notifier, Events: events, claims: newClaims(deps.Store)}
}

// Exists reports whether id names a BridgeWorker of the caller's organization (in any Space), for an
// entity that references one. The worker's row stays key-share locked until q's transaction ends, so
// it cannot be deleted before the reference commits.
func Exists(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (bool, error) {
	_, err := q.BridgeWorkerKeyShare(ctx, db.BridgeWorkerKeyShareParams{OrganizationID: sc.OrganizationID, BridgeWorkerID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return false, nil
	}
	return err == nil, err
}

// newSecret returns a random Secret and the hash that is stored of it.
func newSecret() (string, []byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	secret := "bws_" + base64.RawURLEncoding.EncodeToString(b)
	return secret, hashSecret(secret), nil
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}
