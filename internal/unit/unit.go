// Package unit holds the rules of Units and their history: configuration data checked for its
// ToolchainType, a Revision per change of data (numbered densely per Unit), a Mutation per source of
// change, and for each path of the data the Mutation that last set it.
package unit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeset"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/target"
)

// Type names.
const (
	EntityType         = "Unit"
	RevisionEntityType = "Revision"
	MutationEntityType = "Mutation"
)

// Unit is a stored Unit.
type Unit struct {
	entity.Object
	ToolchainType     string
	DataHash          string
	DataSize          int64
	HeadRevisionID    *uuid.UUID
	HeadRevisionNum   int64
	HeadMutationNum   int64
	HeadUnitActionNum int64
	HeadUnitEventNum  int64
	// UnitEventID is the Unit's latest UnitEvent.
	UnitEventID             *uuid.UUID
	LastReleasedRevisionNum int64
	UpstreamUnitID          *uuid.UUID
	UpstreamSpaceID         *uuid.UUID
	UpstreamRevisionNum     int64
	// PathAnnotations are the guards and protection of paths of the data.
	PathAnnotations []PathAnnotation
	// Conflicts are the outstanding conflicts of the Unit's merges, each source's latest.
	Conflicts []Conflict
	// Findings are the Triggers' findings on the head data; ApplyGates and ApplyWarnings are its failed
	// validations (ValidationErrors, ValidationWarnings): while a gate is set, the Unit is not applied.
	Findings
	ApplyGates, ApplyWarnings map[string]bool
	// FromLinkIDs are the Links whose From Unit this is, and ProvidedPaths what Links read from it (read by
	// Enrich; empty where a Unit is read without it). LinkFindings are what its Links found when they last
	// wrote into it.
	FromLinkIDs   []uuid.UUID
	ProvidedPaths []ProvidedPath
	LinkFindings  []LinkFinding
	// MovedLinkSlugs, on a Unit a move returns, are the Slugs of its Links that moved with it.
	MovedLinkSlugs []string
	Fields
}

// Fields are what a write sets. ToolchainType is set at creation and cannot change.
type Fields struct {
	entity.Common
	ToolchainType         string          `json:"ToolchainType"`
	ProviderType          string          `json:"ProviderType"`
	TargetID              *uuid.UUID      `json:"TargetID"`
	ChangeSetID           *uuid.UUID      `json:"ChangeSetID"`
	LastChangeDescription string          `json:"LastChangeDescription"`
	DestroyGates          map[string]bool `json:"DestroyGates"`
}

// Target is the Unit as a permission target: its Permissions, reached by its Space's grants too.
func (u Unit) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: u.ID.String(), Grants: u.Permissions, SpaceID: u.SpaceID}
}

func (f Fields) normalized() Fields {
	f.Common = f.Common.Normalized()
	if f.DestroyGates == nil {
		f.DestroyGates = map[string]bool{}
	}
	return f
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	if err := configdata.CheckToolchain(f.ToolchainType, "unknown"); err != nil {
		return err
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.Unit) (Unit, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	if err != nil {
		return Unit{}, err
	}
	u := Unit{
		Object: entity.Object{ID: r.UnitID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		ToolchainType: r.ToolchainType, DataHash: r.DataHash, DataSize: r.DataSize, HeadRevisionID: r.HeadRevisionID,
		HeadRevisionNum: r.HeadRevisionNum,
		HeadMutationNum: r.HeadMutationNum, HeadUnitActionNum: r.HeadUnitActionNum, HeadUnitEventNum: r.HeadUnitEventNum,
		LastReleasedRevisionNum: r.LastReleasedRevisionNum, UpstreamUnitID: r.UpstreamUnitID, UpstreamSpaceID: r.UpstreamSpaceID,
		UpstreamRevisionNum: r.UpstreamRevisionNum, UnitEventID: r.UnitEventID,
		Fields: Fields{Common: c, ToolchainType: r.ToolchainType, ProviderType: r.ProviderType,
			TargetID: r.TargetID, ChangeSetID: r.ChangeSetID, LastChangeDescription: r.LastChangeDescription},
	}
	if u.DestroyGates, err = store.DecodeJSON[map[string]bool](r.DestroyGates); err != nil {
		return u, err
	}
	if len(r.PathAnnotations) > 0 {
		if u.PathAnnotations, err = store.DecodeJSON[[]PathAnnotation](r.PathAnnotations); err != nil {
			return u, err
		}
	}
	if u.LinkFindings, err = store.DecodeJSON[[]LinkFinding](r.LinkFindings); err != nil {
		return Unit{}, err
	}
	if u.Conflicts, err = decodeConflicts(r.Conflicts); err != nil {
		return u, err
	}
	if u.Findings, err = decodeFindings(r.ValidationErrors, r.ValidationWarnings, nil, r.ValidationTriggerIds, r.ValueTriggerIds); err != nil {
		return u, err
	}
	u.ApplyGates, u.ApplyWarnings = map[string]bool{}, map[string]bool{}
	if err := decodeColumns(column{r.ApplyGates, &u.ApplyGates}, column{r.ApplyWarnings, &u.ApplyWarnings}); err != nil {
		return u, err
	}
	u.Fields = u.Fields.normalized()
	return u, nil
}

// Family declares Units to the entity kit, for their fields: a Unit lives in a Space and carries
// Permissions; its ToolchainType is set when it is created and never changes; its TargetID names a Target
// of its Space with the same ToolchainType. Its data and history (data.go, history.go) are its own.
var Family = entity.Declare(&entity.Family[db.Unit, Unit, Fields]{
	Type: EntityType, Event: "unit", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	// A new Unit has no data yet (HeadRevisionNum 0): its head is the empty content.
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Unit, error) {
		if err := q.ConfigDataPut(ctx, db.ConfigDataPutParams{DataHash: configdata.Hash(nil), Data: []byte{}, DataSize: 0}); err != nil {
			return nil, err
		}
		return q.UnitInsert(ctx, db.UnitInsertParams{
			UnitID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), DestroyGates: store.EncodeJSON(f.DestroyGates),
			Permissions: store.EncodeJSON(f.Permissions), ToolchainType: f.ToolchainType, ProviderType: f.ProviderType,
			TargetID: f.TargetID, ChangeSetID: f.ChangeSetID, LastChangeDescription: f.LastChangeDescription,
			DataHash: configdata.Hash(nil), DataSize: 0, HeadDoc: []byte("[]"),
		})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Unit, f Fields) (*db.Unit, error) {
		return q.UnitUpdate(ctx, db.UnitUpdateParams{
			OrganizationID: sc.OrganizationID, UnitID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), DestroyGates: store.EncodeJSON(f.DestroyGates),
			Permissions: store.EncodeJSON(f.Permissions), ProviderType: f.ProviderType, TargetID: f.TargetID,
			ChangeSetID: f.ChangeSetID, LastChangeDescription: f.LastChangeDescription,
		})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks them on their own.
func (strategy) Normalize(f Fields) (Fields, error) {
	f = f.normalized()
	return f, f.validate()
}

// OnPut: a PUT that leaves ToolchainType out (or null) keeps it.
func (strategy) OnPut(cur Unit, f Fields) Fields { return keepToolchain(cur, f) }

// OnPatch: a patch that leaves ToolchainType out (or null) keeps it.
func (strategy) OnPatch(cur Unit, _ json.RawMessage, f Fields) Fields { return keepToolchain(cur, f) }

// AdjustEvent: a Unit's events carry its Target, so subscriptions to a Target (and consumers with
// ViewChildren on it) see its Units' changes.
func (strategy) AdjustEvent(u Unit, e event.Event) event.Event {
	e.TargetID = u.TargetID
	return e
}

// Enrich reads the Links of the Units (FromLinkIDs) in one query.
func (strategy) Enrich(ctx context.Context, q *db.Queries, items []Unit) error {
	return enrichLinks(ctx, q, items)
}

func enrichLinks(ctx context.Context, q *db.Queries, items []Unit) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(items))
	at := make(map[uuid.UUID]int, len(items))
	for i, u := range items {
		ids[i], at[u.ID] = u.ID, i
		items[i].FromLinkIDs, items[i].ProvidedPaths = []uuid.UUID{}, []ProvidedPath{}
	}
	rows, err := q.LinksOfUnits(ctx, db.LinksOfUnitsParams{OrganizationID: items[0].OrganizationID, UnitIds: ids})
	if err != nil {
		return err
	}
	for _, r := range rows {
		if i, ok := at[r.FromUnitID]; ok {
			items[i].FromLinkIDs = append(items[i].FromLinkIDs, r.LinkID)
		}
		i, ok := at[r.ToUnitID]
		if !ok {
			continue
		}
		paths, err := store.DecodeJSON[[]configdata.NamedPath](r.UpstreamPaths)
		if err != nil {
			return err
		}
		for _, p := range paths {
			items[i].ProvidedPaths = append(items[i].ProvidedPaths, ProvidedPath{LinkID: r.LinkID, FromUnitID: r.FromUnitID, NamedPath: p})
		}
	}
	return nil
}

// WithLinks reads u's FromLinkIDs and ProvidedPaths, for the answer of a write that read the Unit without
// them (a data write, an upgrade, conflicts resolved).
func (s *Service) WithLinks(ctx context.Context, u Unit) (Unit, error) {
	items := []Unit{u}
	err := enrichLinks(ctx, s.Store.Q(), items)
	return items[0], err
}

// LinkRules are what Links add to Unit deletes and moves. The Link family (internal/link) reads Units, so
// Units cannot import it: it sets Links when it is loaded. Unset, Units have no Links.
type LinkRules interface {
	// BeforeUnitDelete refuses to delete a Unit that Links read from, and records the deletion of the
	// Links whose From Unit it is (they go with it).
	BeforeUnitDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, u Unit) error
	// MoveWithUnit moves u's Links (those whose From Unit it is) to Space to with it, and has those that
	// read u follow it; it returns the Slugs of the Links moved.
	MoveWithUnit(ctx context.Context, tx *store.Tx, sc authz.Scope, u Unit, to entity.SpaceRef) ([]string, error)
}

// Links are the Link family's rules for Units (LinkRules).
var Links LinkRules

// BeforeDelete: a Unit a worker holds an operation of (423 Locked), or that Links read from (LinkRules),
// cannot be deleted.
func (strategy) BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur Unit) error {
	if err := checkNotBusy(ctx, tx.Q, cur); err != nil {
		return err
	}
	if Links == nil {
		return nil
	}
	return Links.BeforeUnitDelete(ctx, tx, sc, cur)
}

func keepToolchain(cur Unit, f Fields) Fields {
	if f.ToolchainType == "" {
		f.ToolchainType = cur.ToolchainType
	}
	return f
}

// Check: ToolchainType cannot change; TargetID must name a compatible Target of the Space; a ChangeSetID
// the write leaves as stored passes again (like a Space's ComponentID), so a Unit given one before that
// check existed can still be written without clearing it.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *Unit, f Fields) (Fields, error) {
	if cur != nil && f.ToolchainType != cur.ToolchainType {
		return f, apierr.Validation("ToolchainType is set when a Unit is created and cannot change",
			apierr.Item{Item: "ToolchainType", Description: "cannot change"})
	}
	if err := checkTarget(ctx, sc, tx.Q, spaceID, f); err != nil {
		return f, err
	}
	if f.ChangeSetID != nil && (cur == nil || cur.ChangeSetID == nil || *cur.ChangeSetID != *f.ChangeSetID) {
		cs, err := joinable(ctx, tx.Q, sc, spaceID, "ChangeSetID", f.ChangeSetID)
		if err != nil || cur == nil {
			return f, err
		}
		// Joining: the ChangeSet's start Tag marks the Revision before the Unit's first change in it.
		return f, changeset.PutStartTag(ctx, tx.Q, sc, cs, cur.HeadRevisionID)
	}
	return f, nil
}

// Service carries out Unit, Revision and Mutation operations: the fields through the entity kit, the data
// and history here.
type Service struct {
	kit *entity.Service[db.Unit, Unit, Fields]
	// Approvals records and reads approvals (approve.go); the Attestation family provides it, which
	// itself reads Units, so it is given after NewService (app.Open).
	Approvals Approvals
	// ChangeOrderRestores reads and records restores by ChangeOrder (restore.go); the promotion engine's
	// package provides it, which itself writes Units, so it is given after NewService (app.Open).
	ChangeOrderRestores ChangeOrderRestores
	Store               *store.Store
	Tokens              *listquery.TokenCodec
	contents            *contentCache
}

// NewService serves Units from a store.
func NewService(deps entity.Deps) *Service {
	return &Service{kit: entity.NewService(Family, deps), Store: deps.Store, Tokens: deps.Tokens, contents: newContentCache()}
}

// WriteOptions are the query parameters of Unit writes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
	// Description and ChangeSetID are recorded on a Revision the write makes; UserAgent too.
	Description *string
	ChangeSetID *uuid.UUID
	UserAgent   string
	// Clearance lets a data write change guarded paths it clears.
	Clearance []function.Requirement
	// Protect records the paths the write changes as protected local overrides; Guards are stamped on them.
	Protect bool
	Guards  map[string]string
}

// WriteResult is what a Unit write answers: the Unit, and what include asks for.
type WriteResult struct {
	Unit    Unit
	Data    []byte
	Sources []Source
	// Conflicts are those a merge (an upgrade) found.
	Conflicts []Conflict
}

// changeEvent carries the Unit's Target as the event's TargetID, so subscriptions to a Target (and
// consumers with ViewChildren on it) see its Units' changes.
func (u Unit) changeEvent(c entity.Change, spaceSlug string) event.Event {
	e := entity.ChangeEvent("unit", EntityType, c, u.OrganizationID, u.ID, u.Slug, u.Version,
		&entity.SpaceRef{ID: u.SpaceID, Slug: spaceSlug})
	e.TargetID = u.TargetID
	return e
}

// dataEvent is unit.updated for a data change, with the new RevisionNum.
func (u Unit) dataEvent(spaceSlug string) event.Event {
	e := u.changeEvent(entity.Updated, spaceSlug)
	e.Payload = struct {
		event.EntityPayload
		RevisionNum int64
	}{e.Payload.(event.EntityPayload), u.HeadRevisionNum}
	return e
}

// loadRow reads a Unit of the caller's organization at the Space its path names, NotFound unless the
// caller may view it; lock serializes writers.
func loadRow(ctx context.Context, sc authz.Scope, c store.Conn, spaceID, unitID uuid.UUID, lock bool) (*db.Unit, error) {
	row, _, err := Family.ResolveRow(ctx, sc, c, spaceID, unitID.String(), lock)
	return row, err
}

// Get returns one Unit the caller may view.
func (s *Service) Get(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID) (Unit, error) {
	return s.kit.Get(ctx, sc, spaceID, unitID.String())
}

// checkTarget requires TargetID to name a Target of the Unit's Space with its ToolchainType. It reads the
// Target FOR SHARE in the Unit's transaction: a Target update changing its ToolchainType (which holds the
// row FOR UPDATE while it checks that no Unit uses it) either waits for this Unit and then sees it, or
// commits first and this check sees its new ToolchainType.
func checkTarget(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, f Fields) error {
	if f.TargetID == nil {
		return nil
	}
	t, err := target.LookupForShare(ctx, sc, q, spaceID, *f.TargetID)
	if apierr.Is(err, apierr.TypeNotFound) {
		return apierr.NoSuchReference(target.EntityType, "in the Unit's Space", "TargetID")
	}
	if err != nil {
		return err
	}
	if t.ToolchainType != f.ToolchainType {
		return apierr.Validation(fmt.Sprintf("Target %s takes %s, not the Unit's %s", t.Slug, t.ToolchainType, f.ToolchainType),
			apierr.Item{Item: "TargetID", Description: "incompatible ToolchainType"})
	}
	return nil
}

// checkChangeSet is the one lookup of a ChangeSetID: the Unit's ChangeSetID (create, PUT, PATCH, bulk
// patch, clone) and the change_set_id parameter of writes that record a Revision all come here; field
// names what carried the ID and spaceID is the Unit's Space. The ChangeSet family decides
// (changeset.Joinable: an Open one of the organization, share-locked in q's transaction).
func checkChangeSet(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID uuid.UUID, field string, id *uuid.UUID) error {
	_, err := joinable(ctx, q, sc, spaceID, field, id)
	return err
}

// joinable is checkChangeSet that returns the ChangeSet (none when id is nil).
func joinable(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID uuid.UUID, field string, id *uuid.UUID) (changeset.ChangeSet, error) {
	if id == nil {
		return changeset.ChangeSet{}, nil
	}
	return changeset.Joinable(ctx, sc, q, spaceID, *id, field)
}

// Create makes a Unit without data (HeadRevisionNum 0); PUT its data to make Revision 1.
func (s *Service) Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f Fields, opts WriteOptions) (Unit, error) {
	return s.kit.Create(ctx, sc, spaceID, f, entity.WriteOptions{DryRun: opts.DryRun, AllowExists: opts.AllowExists})
}

// Update replaces a Unit's fields; version must be the stored one. With up, the Unit is also upgraded from
// its upstream in the same write (upgradeData).
func (s *Service) Update(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, version int64, f Fields, opts WriteOptions, up *UpgradeOptions) (WriteResult, error) {
	if up == nil {
		u, err := s.kit.Update(ctx, sc, spaceID, unitID.String(), version, f, opts.DryRun)
		return WriteResult{Unit: u}, err
	}
	return s.Upgrade(ctx, sc, spaceID, unitID, func(tx *store.Tx) error {
		_, err := s.kit.UpdateIn(ctx, sc, tx, spaceID, unitID.String(), version, f)
		return err
	}, opts, *up)
}

// Patch applies a merge patch to a Unit's fields and, with a restore, makes the data of the Revision it
// names the head again; both in one transaction.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, patch json.RawMessage, restore Restore, opts WriteOptions, up *UpgradeOptions) (WriteResult, error) {
	if up != nil {
		if !restore.IsZero() {
			return WriteResult{}, errRestoreWithUpgrade()
		}
		return s.Upgrade(ctx, sc, spaceID, unitID, func(tx *store.Tx) error {
			_, err := s.kit.PatchIn(ctx, sc, tx, spaceID, unitID.String(), patch)
			return err
		}, opts, *up)
	}
	if restore.IsZero() {
		u, err := s.kit.Patch(ctx, sc, spaceID, unitID.String(), patch, opts.DryRun)
		return WriteResult{Unit: u}, err
	}
	var out WriteResult
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		// A ChangeOrder is locked before the Unit, as a promotion locks it before its Units.
		rp, err := s.restorePoint(ctx, sc, tx, restore)
		if err != nil {
			return err
		}
		if _, err := s.kit.PatchIn(ctx, sc, tx, spaceID, unitID.String(), patch); err != nil {
			return err
		}
		out, err = s.restoreRevision(ctx, sc, tx, spaceID, unitID, rp, opts, true)
		return err
	})
	if err != nil {
		return out, err
	}
	out.Unit, err = s.WithLinks(ctx, out.Unit)
	return out, err
}

// Delete removes a Unit and its history; refused while it has DeleteGates.
func (s *Service) Delete(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, dryRun bool) error {
	return s.kit.Delete(ctx, sc, spaceID, unitID.String(), dryRun)
}
