// Package unit holds the rules of Units and their history: configuration data checked for its
// ToolchainType, a Revision per change of data (numbered densely per Unit), a Mutation per source of
// change, and for each path of the data the Mutation that last set it.
package unit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
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
	ID                      uuid.UUID
	OrganizationID          uuid.UUID
	SpaceID                 uuid.UUID
	ToolchainType           string
	DataHash                string
	DataSize                int64
	HeadRevisionID          *uuid.UUID
	HeadRevisionNum         int64
	HeadMutationNum         int64
	HeadUnitActionNum       int64
	HeadUnitEventNum        int64
	LastReleasedRevisionNum int64
	UpstreamUnitID          *uuid.UUID
	UpstreamSpaceID         *uuid.UUID
	UpstreamRevisionNum     int64
	HiddenReason            string
	Version                 int64
	CreatedAt               time.Time
	UpdatedAt               time.Time
	Fields
}

// Fields are what a write sets. ToolchainType is set at creation and cannot change.
type Fields struct {
	Slug                  string          `json:"Slug"`
	DisplayName           string          `json:"DisplayName"`
	ToolchainType         string          `json:"ToolchainType"`
	ProviderType          string          `json:"ProviderType"`
	TargetID              *uuid.UUID      `json:"TargetID"`
	ChangeSetID           *uuid.UUID      `json:"ChangeSetID"`
	LastChangeDescription string          `json:"LastChangeDescription"`
	DestroyGates          map[string]bool `json:"DestroyGates"`
	Permissions           authz.Grants    `json:"Permissions"`
	entity.Meta
}

func (u Unit) target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: u.ID.String(), Grants: u.Permissions, SpaceID: u.SpaceID}
}

func (f Fields) normalized() Fields {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	if f.DestroyGates == nil {
		f.DestroyGates = map[string]bool{}
	}
	return f
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	if !configdata.Valid(f.ToolchainType) {
		return apierr.Validation(fmt.Sprintf("ToolchainType %q is not one of %v", f.ToolchainType, configdata.ToolchainTypes),
			apierr.Item{Item: "ToolchainType", Description: "unknown"})
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.Unit) (Unit, error) {
	u := Unit{
		ID: r.UnitID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, ToolchainType: r.ToolchainType,
		DataHash: r.DataHash, DataSize: r.DataSize, HeadRevisionID: r.HeadRevisionID, HeadRevisionNum: r.HeadRevisionNum,
		HeadMutationNum: r.HeadMutationNum, HeadUnitActionNum: r.HeadUnitActionNum, HeadUnitEventNum: r.HeadUnitEventNum,
		LastReleasedRevisionNum: r.LastReleasedRevisionNum, UpstreamUnitID: r.UpstreamUnitID, UpstreamSpaceID: r.UpstreamSpaceID,
		UpstreamRevisionNum: r.UpstreamRevisionNum, HiddenReason: r.HiddenReason, Version: r.Version,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{
			Slug: r.Slug, DisplayName: r.DisplayName, ToolchainType: r.ToolchainType, ProviderType: r.ProviderType,
			TargetID: r.TargetID, ChangeSetID: r.ChangeSetID, LastChangeDescription: r.LastChangeDescription,
		},
	}
	var err error
	if u.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return u, err
	}
	if u.DestroyGates, err = store.DecodeJSON[map[string]bool](r.DestroyGates); err != nil {
		return u, err
	}
	if u.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return u, err
	}
	u.Fields = u.Fields.normalized()
	return u, nil
}

// Service carries out Unit, Revision and Mutation operations for the caller in the request's context.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
}

// WriteOptions are the query parameters of Unit writes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
	// Description and ChangeSetID are recorded on a Revision the write makes; UserAgent too.
	Description *string
	ChangeSetID *uuid.UUID
	UserAgent   string
}

// WriteResult is what a Unit write answers: the Unit, and what include asks for.
type WriteResult struct {
	Unit    Unit
	Data    []byte
	Sources []Source
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
func loadRow(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID, unitID uuid.UUID, lock bool) (*db.Unit, error) {
	params := db.UnitGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, UnitID: unitID}
	var row *db.Unit
	var err error
	if lock {
		row, err = q.UnitGetByIDForUpdate(ctx, db.UnitGetByIDForUpdateParams(params))
	} else {
		row, err = q.UnitGetByID(ctx, params)
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		if _, serr := space.Parent(ctx, sc, q, spaceID); serr != nil {
			return nil, serr
		}
		return nil, apierr.NotFound(EntityType, unitID.String())
	}
	if err != nil {
		return nil, err
	}
	// A Unit the caller may not view does not exist for it.
	if !sc.ByRole(authz.View) {
		grants, err := store.DecodeJSON[authz.Grants](row.Permissions)
		if err != nil {
			return nil, err
		}
		if err := authz.Viewable(sc, authz.Target{EntityType: EntityType, ID: unitID.String(), Grants: grants, SpaceID: row.SpaceID}, unitID.String()); err != nil {
			return nil, err
		}
	}
	return row, nil
}

// IDOf finds a Unit of a Space by ID or Slug that the caller may view (the Unit family's entity.Resolver).
func IDOf(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, ref string) (uuid.UUID, error) {
	id, err := uuid.Parse(ref)
	if err != nil {
		row, err := q.UnitGetBySlug(ctx, db.UnitGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: ref})
		if err != nil {
			return uuid.Nil, apierr.NotFoundAs(err, EntityType, ref)
		}
		id = row.UnitID
	}
	row, err := loadRow(ctx, sc, q, spaceID, id, false)
	if err != nil {
		return uuid.Nil, err
	}
	return row.UnitID, nil
}

// Get returns one Unit the caller may view.
func (s *Service) Get(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID) (Unit, error) {
	row, err := loadRow(ctx, sc, s.Store.Q(), spaceID, unitID, false)
	if err != nil {
		return Unit{}, err
	}
	return fromRow(row)
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
// names what carried the ID.
//
// The ChangeSet family does not exist yet, so no ID names a ChangeSet of the organization and every one
// is refused. When the family arrives, this becomes a call to its resolver (a ChangeSet of the caller's
// organization, share-locked in q's transaction as tag.LookupForShare does) and the callers stay as they are.
func checkChangeSet(_ context.Context, _ *db.Queries, field string, id *uuid.UUID) error {
	if id == nil {
		return nil
	}
	return apierr.NoSuchReference("ChangeSet", "of your organization", field)
}

// Create makes a Unit without data (HeadRevisionNum 0); PUT its data to make Revision 1.
func (s *Service) Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f Fields, opts WriteOptions) (Unit, error) {
	f = f.normalized()
	if err := f.validate(); err != nil {
		return Unit{}, err
	}
	var out Unit
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		sp, st, err := space.VisibleParent(ctx, sc, tx.Q, spaceID)
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
		existing, err := tx.Q.UnitGetBySlug(ctx, db.UnitGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug})
		switch {
		case err == nil && opts.AllowExists:
			if out, err = fromRow(existing); err != nil {
				return err
			}
			return authz.Check(sc, authz.View, out.target())
		case err == nil:
			return apierr.AlreadyExists(EntityType, f.Slug)
		case !apierr.Is(err, apierr.TypeNotFound):
			return err
		}
		if err := checkTarget(ctx, sc, tx.Q, spaceID, f); err != nil {
			return err
		}
		if err := checkChangeSet(ctx, tx.Q, "ChangeSetID", f.ChangeSetID); err != nil {
			return err
		}
		if err := tx.Q.ConfigDataPut(ctx, db.ConfigDataPutParams{DataHash: configdata.Hash(nil), Data: []byte{}, DataSize: 0}); err != nil {
			return err
		}
		var row *db.Unit
		err = tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			row, err = sp.Q.UnitInsert(ctx, db.UnitInsertParams{
				UnitID: uuid.New(), OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug, DisplayName: f.DisplayName,
				Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
				DeleteGates: store.EncodeJSON(f.DeleteGates), DestroyGates: store.EncodeJSON(f.DestroyGates),
				Permissions: store.EncodeJSON(f.Permissions), ToolchainType: f.ToolchainType, ProviderType: f.ProviderType,
				TargetID: f.TargetID, ChangeSetID: f.ChangeSetID, LastChangeDescription: f.LastChangeDescription,
				DataHash: configdata.Hash(nil), DataSize: 0, HeadDoc: []byte("[]"),
			})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) && opts.AllowExists {
			// A concurrent create of the same Slug won: hand back its Unit.
			if row, err = tx.Q.UnitGetBySlug(ctx, db.UnitGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug}); err != nil {
				return err
			}
			out, err = fromRow(row)
			return err
		}
		if err != nil {
			return entity.SlugClash(err, EntityType, f.Slug)
		}
		if out, err = fromRow(row); err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Created, sp.Slug))
		return nil
	})
	return out, err
}

// Update replaces a Unit's fields; version must be the stored one.
func (s *Service) Update(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, version int64, f Fields, opts WriteOptions) (Unit, error) {
	if err := entity.RequireVersion(version); err != nil {
		return Unit{}, err
	}
	var out Unit
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		var err error
		out, err = update(ctx, sc, tx, spaceID, unitID, func(Unit) (*int64, Fields, error) { return &version, f, nil })
		return err
	})
	return out, err
}

// Patch applies a merge patch to a Unit's fields and, with restore > 0, makes Revision restore's data the
// head again; both in one transaction.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, patch json.RawMessage, restore int64, opts WriteOptions) (WriteResult, error) {
	var out WriteResult
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		if restore == 0 {
			u, err := update(ctx, sc, tx, spaceID, unitID, mergePatch(patch))
			out.Unit = u
			return err
		}
		// One write: the fields change and the restore make one Version and one event (the data's).
		if _, _, err := updateFields(ctx, sc, tx, spaceID, unitID, mergePatch(patch)); err != nil {
			return err
		}
		var err error
		out, err = restoreRevision(ctx, sc, tx, spaceID, unitID, restore, opts, true)
		return err
	})
	return out, err
}

// changeFunc computes a write's Version (nil when none was sent) and new fields from the stored Unit.
type changeFunc func(Unit) (*int64, Fields, error)

func mergePatch(patch json.RawMessage) changeFunc {
	return func(cur Unit) (*int64, Fields, error) {
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
			return nil, Fields{}, apierr.UserInput("the patched Unit is not valid: " + err.Error())
		}
		return version, f, nil
	}
}

// update is the one path of field changes (PUT, PATCH, bulk patch).
func update(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID, change changeFunc) (Unit, error) {
	u, spaceSlug, err := updateFields(ctx, sc, tx, spaceID, unitID, change)
	if err != nil {
		return u, err
	}
	tx.Emit(u.changeEvent(entity.Updated, spaceSlug))
	return u, nil
}

// updateFields is update without its event: it returns the Unit written and its Space's Slug.
func updateFields(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID, change changeFunc) (Unit, string, error) {
	row, err := loadRow(ctx, sc, tx.Q, spaceID, unitID, true)
	if err != nil {
		return Unit{}, "", err
	}
	cur, err := fromRow(row)
	if err != nil {
		return cur, "", err
	}
	if err := authz.Check(sc, authz.Edit, cur.target()); err != nil {
		return cur, "", err
	}
	version, f, err := change(cur)
	if err != nil {
		return cur, "", err
	}
	if f.ToolchainType == "" {
		f.ToolchainType = cur.ToolchainType
	}
	f = f.normalized()
	if err := f.validate(); err != nil {
		return cur, "", err
	}
	if f.ToolchainType != cur.ToolchainType {
		return cur, "", apierr.Validation("ToolchainType is set when a Unit is created and cannot change",
			apierr.Item{Item: "ToolchainType", Description: "cannot change"})
	}
	if !cur.Permissions.Equal(f.Permissions) {
		if err := authz.Check(sc, authz.Manage, cur.target()); err != nil {
			return cur, "", err
		}
		if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", cur.Permissions, f.Permissions); err != nil {
			return cur, "", err
		}
	}
	if err := entity.CheckVersion(EntityType, unitID, version, cur.Version); err != nil {
		return cur, "", err
	}
	if err := checkTarget(ctx, sc, tx.Q, spaceID, f); err != nil {
		return cur, "", err
	}
	// A ChangeSetID the write leaves as stored passes again (like a Space's ComponentID), so a Unit given
	// one before this check existed can still be written without clearing it.
	if f.ChangeSetID != nil && (cur.ChangeSetID == nil || *cur.ChangeSetID != *f.ChangeSetID) {
		if err := checkChangeSet(ctx, tx.Q, "ChangeSetID", f.ChangeSetID); err != nil {
			return cur, "", err
		}
	}
	out, err := tx.Q.UnitUpdate(ctx, db.UnitUpdateParams{
		OrganizationID: sc.OrganizationID, UnitID: unitID, Version: cur.Version,
		Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), DestroyGates: store.EncodeJSON(f.DestroyGates),
		Permissions: store.EncodeJSON(f.Permissions), ProviderType: f.ProviderType, TargetID: f.TargetID,
		ChangeSetID: f.ChangeSetID, LastChangeDescription: f.LastChangeDescription,
	})
	if err != nil {
		return cur, "", entity.SlugClash(err, EntityType, f.Slug)
	}
	u, err := fromRow(out)
	if err != nil {
		return u, "", err
	}
	sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return u, "", err
	}
	return u, sp.Slug, nil
}

// Delete removes a Unit and its history; refused while it has DeleteGates.
func (s *Service) Delete(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		_, err := remove(ctx, sc, tx, spaceID, unitID)
		return err
	})
}

func remove(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID) (Unit, error) {
	row, err := loadRow(ctx, sc, tx.Q, spaceID, unitID, true)
	if err != nil {
		return Unit{}, err
	}
	cur, err := fromRow(row)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Delete, cur.target()); err != nil {
		return cur, err
	}
	if err := entity.CheckDeleteGates(EntityType, unitID, cur.Slug, cur.DeleteGates); err != nil {
		return cur, err
	}
	n, err := tx.Q.UnitDelete(ctx, db.UnitDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, UnitID: unitID})
	if err != nil {
		return cur, store.TranslateDelete(err, EntityType, unitID.String())
	}
	if n == 0 {
		return cur, apierr.NotFound(EntityType, unitID.String())
	}
	sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return cur, err
	}
	tx.Emit(cur.changeEvent(entity.Deleted, sp.Slug))
	return cur, nil
}
