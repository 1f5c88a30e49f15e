// Package target holds the rules of Targets: deployment destinations (a ToolchainType and a
// ProviderType) in a Space, each served by one BridgeWorker. Units name a Target of their own Space and
// ToolchainType.
package target

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Target's type name.
const EntityType = "Target"

// ProviderTypes are the providers a Target may use.
var ProviderTypes = []string{"ArgoCDOCI", "FluxOCI", "Kubernetes"}

// Target is a stored Target.
type Target struct {
	entity.Object
	Fields
}

// Fields are what a write sets.
type Fields struct {
	entity.Common
	ToolchainType  string            `json:"ToolchainType"`
	ProviderType   string            `json:"ProviderType"`
	BridgeWorkerID *uuid.UUID        `json:"BridgeWorkerID"`
	BridgeHandle   string            `json:"BridgeHandle"`
	Options        map[string]string `json:"Options"`
	Facts          map[string]string `json:"Facts"`
	LiveStateType  string            `json:"LiveStateType"`
}

func (f Fields) normalized() Fields {
	f.Common = f.Common.Normalized()
	if f.Options == nil {
		f.Options = map[string]string{}
	}
	if f.Facts == nil {
		f.Facts = map[string]string{}
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
	if !slices.Contains(ProviderTypes, f.ProviderType) {
		return apierr.Validation(fmt.Sprintf("ProviderType %q is not one of %v", f.ProviderType, ProviderTypes),
			apierr.Item{Item: "ProviderType", Description: "unknown"})
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.Target) (Target, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	t := Target{
		Object: entity.Object{ID: r.TargetID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Common: c, ToolchainType: r.ToolchainType, ProviderType: r.ProviderType,
			BridgeWorkerID: r.BridgeWorkerID, BridgeHandle: r.BridgeHandle, LiveStateType: r.LiveStateType},
	}
	if err != nil {
		return t, err
	}
	if t.Options, err = store.DecodeJSON[map[string]string](r.Options); err != nil {
		return t, err
	}
	if t.Facts, err = store.DecodeJSON[map[string]string](r.Facts); err != nil {
		return t, err
	}
	t.Fields = t.Fields.normalized()
	return t, nil
}

// ListEntity is how Targets are listed (indexes: migrations 000004 and 000005).
var ListEntity = listquery.Standard{Table: "target", ID: "TargetID", InSpace: true, Permissions: true, Unordered: []string{"HiddenReason"}}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "ToolchainType", "ProviderType", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		// A Target's kind (toolchain and provider): select always returns it.
		{Name: "ToolchainType", Type: listquery.String, SQL: "target.toolchain_type", Filterable: true, Orderable: true, Always: true},
		{Name: "ProviderType", Type: listquery.String, SQL: "target.provider_type", Filterable: true, Orderable: true, Always: true},
		{Name: "BridgeWorkerID", Type: listquery.UUID, SQL: "target.bridge_worker_id", Nullable: true, Filterable: true},
		{Name: "LiveStateType", Type: listquery.String, SQL: "target.live_state_type", Filterable: true},
		listquery.After("Annotations"),
		{Name: "Options", Type: listquery.StringMap, SQL: "target.options", Filterable: true},
		{Name: "Facts", Type: listquery.StringMap, SQL: "target.facts", Filterable: true},
		listquery.After("Permissions"),
		{Name: "BridgeHandle", Type: listquery.Opaque}, {Name: "ConfigTypes", Type: listquery.Opaque},
		{Name: "TriggerFilterID", Type: listquery.Opaque}, {Name: "TriggerHash", Type: listquery.Opaque},
		{Name: "TriggerIDs", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{
		{Name: "BridgeWorkerID", Field: "BridgeWorker"},
		// Targets do not select Triggers yet: their TriggerFilterID is null and TriggerIDs empty.
		{Name: "TriggerFilterID", Field: "TriggerFilter", Type: "Filter", Unserved: true},
		{Name: "TriggerIDs", Field: "Triggers", Type: "Trigger", Unserved: true},
	},
})

func rowParams(f Fields) db.TargetInsertParams {
	return db.TargetInsertParams{Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		ToolchainType: f.ToolchainType, ProviderType: f.ProviderType, BridgeWorkerID: f.BridgeWorkerID,
		BridgeHandle: f.BridgeHandle, Options: store.EncodeJSON(f.Options), Facts: store.EncodeJSON(f.Facts),
		LiveStateType: f.LiveStateType}
}

// Family declares Targets to the entity kit: a Target lives in a Space and carries Permissions; the
// BridgeWorker a write names must exist, and its ToolchainType cannot change while Units use it.
var Family = entity.Declare(&entity.Family[db.Target, Target, Fields]{
	Type: EntityType, Event: "target", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Target, error) {
		p := rowParams(f)
		p.TargetID, p.OrganizationID, p.SpaceID = id, sc.OrganizationID, spaceID
		return q.TargetInsert(ctx, p)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Target, f Fields) (*db.Target, error) {
		p := rowParams(f)
		return q.TargetUpdate(ctx, db.TargetUpdateParams{OrganizationID: sc.OrganizationID, TargetID: cur.ID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Labels: p.Labels, Annotations: p.Annotations, DeleteGates: p.DeleteGates,
			Permissions: p.Permissions, ToolchainType: p.ToolchainType, ProviderType: p.ProviderType, BridgeWorkerID: p.BridgeWorkerID,
			BridgeHandle: p.BridgeHandle, Options: p.Options, Facts: p.Facts, LiveStateType: p.LiveStateType})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks them on their own.
func (strategy) Normalize(f Fields) (Fields, error) {
	f = f.normalized()
	return f, f.validate()
}

// AdjustEvent: a Target's events name it in TargetID, so Target subscriptions select them.
func (strategy) AdjustEvent(t Target, e event.Event) event.Event {
	e.TargetID = &t.ID
	return e
}

// Check validates a write's references: the BridgeWorker it names, and a ToolchainType change (refused
// while Units use the Target, as their data is of the old type).
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Target, f Fields) (Fields, error) {
	var curWorker *uuid.UUID
	if cur != nil {
		curWorker = cur.BridgeWorkerID
	}
	if err := checkBridgeWorker(ctx, sc, tx.Q, curWorker, f); err != nil {
		return f, err
	}
	if cur == nil || f.ToolchainType == cur.ToolchainType {
		return f, nil
	}
	inUse, err := tx.Q.TargetInUse(ctx, &cur.ID)
	if err != nil {
		return f, err
	}
	if inUse {
		return f, apierr.Conflict("the Target's ToolchainType cannot change while Units use it").WithEntity(EntityType, cur.ID.String(), cur.Slug)
	}
	return f, nil
}

// checkBridgeWorker requires a BridgeWorkerID the write sets to name a BridgeWorker of the caller's
// organization, in any Space (a Target is tied to one BridgeWorker; nothing ties their Spaces).
// The stored value (cur) passes unchecked: the foreign key keeps it naming an existing worker.
func checkBridgeWorker(ctx context.Context, sc authz.Scope, q *db.Queries, cur *uuid.UUID, f Fields) error {
	if f.BridgeWorkerID == nil || (cur != nil && *cur == *f.BridgeWorkerID) {
		return nil
	}
	ok, err := bridgeworker.Exists(ctx, sc, q, *f.BridgeWorkerID)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.NoSuchReference(bridgeworker.EntityType, "of your organization", "BridgeWorkerID")
	}
	return nil
}

// LookupForShare returns a Target of a Space of the caller's organization and holds a share lock on it
// until q's transaction ends: a Unit naming it reads it this way, so a Target update (which takes FOR
// UPDATE) waits for the Unit's write and then sees it. NotFound when there is none.
func LookupForShare(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID, id uuid.UUID) (Target, error) {
	row, err := q.TargetGetByIDForShare(ctx, db.TargetGetByIDForShareParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TargetID: id})
	if err != nil {
		return Target{}, err
	}
	return fromRow(row)
}

// Existing returns which of ids name Targets of the caller's organization (in any Space), in one query,
// for entities that reference Targets.
func Existing(ctx context.Context, sc authz.Scope, q *db.Queries, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	out := map[uuid.UUID]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.TargetListByIDs(ctx, db.TargetListByIDsParams{OrganizationID: sc.OrganizationID, TargetIds: ids})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.TargetID] = true
	}
	return out, nil
}

// AuthzTarget is the permission target of Target id in Space spaceID, without its grants
// (entity.PermissionTargets decodes them).
func AuthzTarget(id, spaceID uuid.UUID) authz.Target {
	return authz.Target{EntityType: EntityType, ID: id.String(), SpaceID: spaceID}
}
