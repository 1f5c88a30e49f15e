// Package target holds the rules of Targets: deployment destinations (a ToolchainType and a
// ProviderType) in a Space, each served by one BridgeWorker. Units name a Target of their own Space and
// ToolchainType.
package target

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/org"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Target's type name.
const EntityType = "Target"

// ProviderTypes are the providers a Target may use.
var ProviderTypes = []string{"ArgoCDOCI", "FluxOCI", "Kubernetes"}

// Target is a stored Target.
type Target struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	SpaceID        uuid.UUID
	HiddenReason   string
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Fields
}

// Fields are what a write sets.
type Fields struct {
	Slug           string            `json:"Slug"`
	DisplayName    string            `json:"DisplayName"`
	ToolchainType  string            `json:"ToolchainType"`
	ProviderType   string            `json:"ProviderType"`
	BridgeWorkerID *uuid.UUID        `json:"BridgeWorkerID"`
	BridgeHandle   string            `json:"BridgeHandle"`
	Options        map[string]string `json:"Options"`
	Facts          map[string]string `json:"Facts"`
	LiveStateType  string            `json:"LiveStateType"`
	Permissions    authz.Grants      `json:"Permissions"`
	entity.Meta
}

func (t Target) authzTarget() authz.Target {
	return authz.Target{EntityType: EntityType, ID: t.ID.String(), Grants: t.Permissions}
}

func (f Fields) normalized() Fields {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
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
	if !configdata.Valid(f.ToolchainType) {
		return apierr.Validation(fmt.Sprintf("ToolchainType %q is not one of %v", f.ToolchainType, configdata.ToolchainTypes),
			apierr.Item{Item: "ToolchainType", Description: "unknown"})
	}
	known := false
	for _, p := range ProviderTypes {
		known = known || p == f.ProviderType
	}
	if !known {
		return apierr.Validation(fmt.Sprintf("ProviderType %q is not one of %v", f.ProviderType, ProviderTypes),
			apierr.Item{Item: "ProviderType", Description: "unknown"})
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.Target) (Target, error) {
	t := Target{
		ID: r.TargetID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, ToolchainType: r.ToolchainType, ProviderType: r.ProviderType,
			BridgeWorkerID: r.BridgeWorkerID, BridgeHandle: r.BridgeHandle, LiveStateType: r.LiveStateType},
	}
	var err error
	if t.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return t, err
	}
	if t.Options, err = store.DecodeJSON[map[string]string](r.Options); err != nil {
		return t, err
	}
	if t.Facts, err = store.DecodeJSON[map[string]string](r.Facts); err != nil {
		return t, err
	}
	if t.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return t, err
	}
	t.Fields = t.Fields.normalized()
	return t, nil
}

// ListEntity is how Targets are listed (indexes: migrations 000004 and 000005).
var ListEntity = listquery.Define(&listquery.Entity{
	Name: EntityType, From: "target", Columns: "target.*", ID: "TargetID", Org: "target.organization_id", Slug: "Slug",
	Contains: "target.search_text", HiddenReason: "target.hidden_reason",
	ContainsAttrs: []string{"Slug", "DisplayName", "ToolchainType", "ProviderType", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "TargetID", Type: listquery.UUID, SQL: "target.target_id", Filterable: true, Orderable: true, Always: true},
		{Name: "SpaceID", Type: listquery.UUID, SQL: "target.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "target.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "target.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "target.display_name", Filterable: true, Orderable: true},
		// A Target's kind (toolchain and provider): select always returns it.
		{Name: "ToolchainType", Type: listquery.String, SQL: "target.toolchain_type", Filterable: true, Orderable: true, Always: true},
		{Name: "ProviderType", Type: listquery.String, SQL: "target.provider_type", Filterable: true, Orderable: true, Always: true},
		{Name: "BridgeWorkerID", Type: listquery.UUID, SQL: "target.bridge_worker_id", Nullable: true, Filterable: true},
		{Name: "LiveStateType", Type: listquery.String, SQL: "target.live_state_type", Filterable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "target.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "target.annotations", Filterable: true},
		{Name: "Options", Type: listquery.StringMap, SQL: "target.options", Filterable: true},
		{Name: "Facts", Type: listquery.StringMap, SQL: "target.facts", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "target.delete_gates", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "target.hidden_reason", Filterable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "target.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "target.updated_at", Filterable: true, Orderable: true},
		{Name: "Permissions", Type: listquery.Opaque}, {Name: "BridgeHandle", Type: listquery.Opaque},
		{Name: "ConfigTypes", Type: listquery.Opaque}, {Name: "TriggerFilterID", Type: listquery.Opaque},
		{Name: "TriggerHash", Type: listquery.Opaque}, {Name: "TriggerIDs", Type: listquery.Opaque},
		{Name: "Version", Type: listquery.Opaque}, {Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{
		{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"},
		{Name: "BridgeWorkerID", Field: "BridgeWorker"}, {Name: "TriggerFilterID", Field: "TriggerFilter"}, {Name: "TriggerIDs", Field: "Triggers"},
	},
})

// Service carries out Target operations.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
}

// WriteOptions are the query parameters every write takes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
}

func load(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID, id uuid.UUID, lock bool) (Target, error) {
	var row *db.Target
	var err error
	if lock {
		row, err = q.TargetGetByIDForUpdate(ctx, db.TargetGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TargetID: id})
	} else {
		row, err = q.TargetGetByID(ctx, db.TargetGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TargetID: id})
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		if _, serr := space.Parent(ctx, sc, q, spaceID); serr != nil {
			return Target{}, serr
		}
		return Target{}, apierr.NotFound(EntityType, id.String())
	}
	if err != nil {
		return Target{}, err
	}
	return fromRow(row)
}

// List returns a page of Targets (of one Space when spaceID is set) the caller may view.
func (s *Service) List(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params) (listquery.Page[Target], error) {
	q := listquery.Query{Entity: ListEntity, OrganizationID: sc.OrganizationID, Path: path, Params: params}
	if spaceID != nil {
		if _, err := space.Parent(ctx, sc, s.Store.Q(), *spaceID); err != nil {
			return listquery.Page[Target]{}, err
		}
		q.Scope = []listquery.Condition{{Column: "target.space_id", Value: *spaceID}}
	}
	page, err := listquery.Run[db.Target](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[Target]{}, err
	}
	out, err := listquery.MapPage(page, fromRow)
	if err != nil {
		return out, err
	}
	out.Items = authz.Filter(sc, authz.View, out.Items, Target.authzTarget)
	return out, nil
}

// Get returns one Target.
func (s *Service) Get(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID) (Target, error) {
	t, err := load(ctx, sc, s.Store.Q(), spaceID, id, false)
	if err != nil {
		return t, err
	}
	return t, authz.Check(sc, authz.View, t.authzTarget())
}

// ByIDs loads Targets the caller may view, by ID (for include=TargetID).
func (s *Service) ByIDs(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]Target, error) {
	out := map[uuid.UUID]Target{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.Store.Q().TargetListByIDs(ctx, db.TargetListByIDsParams{OrganizationID: sc.OrganizationID, TargetIds: ids})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		t, err := fromRow(r)
		if err != nil {
			return nil, err
		}
		if sc.Allows(authz.View, t.authzTarget()) {
			out[t.ID] = t
		}
	}
	return out, nil
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

// Create makes a Target in a Space.
func (s *Service) Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f Fields, opts WriteOptions) (Target, error) {
	f = f.normalized()
	if err := f.validate(); err != nil {
		return Target{}, err
	}
	var out Target
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
			if err := org.CheckGrantees(ctx, sc, tx.Q, "Permissions", nil, f.Permissions); err != nil {
				return err
			}
		}
		existing, err := tx.Q.TargetGetBySlug(ctx, db.TargetGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug})
		switch {
		case err == nil && opts.AllowExists:
			if out, err = fromRow(existing); err != nil {
				return err
			}
			return authz.Check(sc, authz.View, out.authzTarget())
		case err == nil:
			return apierr.AlreadyExists(EntityType, f.Slug)
		case !apierr.Is(err, apierr.TypeNotFound):
			return err
		}
		if err := checkBridgeWorker(ctx, sc, tx.Q, nil, f); err != nil {
			return err
		}
		var row *db.Target
		err = tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			row, err = sp.Q.TargetInsert(ctx, db.TargetInsertParams{
				TargetID: uuid.New(), OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug, DisplayName: f.DisplayName,
				Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
				DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
				ToolchainType: f.ToolchainType, ProviderType: f.ProviderType, BridgeWorkerID: f.BridgeWorkerID,
				BridgeHandle: f.BridgeHandle, Options: store.EncodeJSON(f.Options), Facts: store.EncodeJSON(f.Facts),
				LiveStateType: f.LiveStateType,
			})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) && opts.AllowExists {
			if row, err = tx.Q.TargetGetBySlug(ctx, db.TargetGetBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug}); err != nil {
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

// checkBridgeWorker requires a BridgeWorkerID the write sets to name a BridgeWorker of the caller's
// organization, in any Space (SPEC.md ties a Target to one BridgeWorker and says nothing of their Spaces).
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

func (t Target) changeEvent(c entity.Change, spaceSlug string) event.Event {
	e := entity.ChangeEvent("target", EntityType, c, t.OrganizationID, t.ID, t.Slug, t.Version, &entity.SpaceRef{ID: t.SpaceID, Slug: spaceSlug})
	e.TargetID = &t.ID
	return e
}

type changeFunc func(Target) (*int64, Fields, error)

// Update replaces a Target's fields; version must be the stored one.
func (s *Service) Update(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, version int64, f Fields, dryRun bool) (Target, error) {
	if err := entity.RequireVersion(version); err != nil {
		return Target{}, err
	}
	return s.write(ctx, sc, spaceID, id, dryRun, func(Target) (*int64, Fields, error) { return &version, f, nil })
}

// Patch applies a merge patch to a Target's fields.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, patch json.RawMessage, dryRun bool) (Target, error) {
	return s.write(ctx, sc, spaceID, id, dryRun, mergePatch(patch))
}

func mergePatch(patch json.RawMessage) changeFunc {
	return func(cur Target) (*int64, Fields, error) {
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
			return nil, Fields{}, apierr.UserInput("the patched Target is not valid: " + err.Error())
		}
		return version, f, nil
	}
}

func (s *Service) write(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, dryRun bool, change changeFunc) (Target, error) {
	var out Target
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var err error
		out, err = update(ctx, sc, tx, spaceID, id, change)
		return err
	})
	return out, err
}

func update(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, id uuid.UUID, change changeFunc) (Target, error) {
	cur, err := load(ctx, sc, tx.Q, spaceID, id, true)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Edit, cur.authzTarget()); err != nil {
		return cur, err
	}
	version, f, err := change(cur)
	if err != nil {
		return cur, err
	}
	f = f.normalized()
	if err := f.validate(); err != nil {
		return cur, err
	}
	if !cur.Permissions.Equal(f.Permissions) {
		if err := authz.Check(sc, authz.Manage, cur.authzTarget()); err != nil {
			return cur, err
		}
		if err := org.CheckGrantees(ctx, sc, tx.Q, "Permissions", cur.Permissions, f.Permissions); err != nil {
			return cur, err
		}
	}
	if err := entity.CheckVersion(EntityType, id, version, cur.Version); err != nil {
		return cur, err
	}
	if err := checkBridgeWorker(ctx, sc, tx.Q, cur.BridgeWorkerID, f); err != nil {
		return cur, err
	}
	if f.ToolchainType != cur.ToolchainType {
		inUse, err := tx.Q.TargetInUse(ctx, &id)
		if err != nil {
			return cur, err
		}
		if inUse {
			return cur, apierr.Conflict("the Target's ToolchainType cannot change while Units use it").WithEntity(EntityType, id.String(), cur.Slug)
		}
	}
	row, err := tx.Q.TargetUpdate(ctx, db.TargetUpdateParams{
		OrganizationID: sc.OrganizationID, TargetID: id, Version: cur.Version, Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		ToolchainType: f.ToolchainType, ProviderType: f.ProviderType, BridgeWorkerID: f.BridgeWorkerID,
		BridgeHandle: f.BridgeHandle, Options: store.EncodeJSON(f.Options), Facts: store.EncodeJSON(f.Facts),
		LiveStateType: f.LiveStateType,
	})
	if err != nil {
		return cur, entity.SlugClash(err, EntityType, f.Slug)
	}
	out, err := fromRow(row)
	if err != nil {
		return out, err
	}
	sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return out, err
	}
	tx.Emit(out.changeEvent(entity.Updated, sp.Slug))
	return out, nil
}

// Delete removes a Target; refused while it has DeleteGates or Units use it.
func (s *Service) Delete(ctx context.Context, sc authz.Scope, spaceID, id uuid.UUID, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		_, err := remove(ctx, sc, tx, spaceID, id)
		return err
	})
}

func remove(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, id uuid.UUID) (Target, error) {
	cur, err := load(ctx, sc, tx.Q, spaceID, id, true)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Delete, cur.authzTarget()); err != nil {
		return cur, err
	}
	if err := entity.CheckDeleteGates(EntityType, id, cur.Slug, cur.DeleteGates); err != nil {
		return cur, err
	}
	n, err := tx.Q.TargetDelete(ctx, db.TargetDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TargetID: id})
	if err != nil {
		return cur, store.TranslateDelete(err, EntityType, id.String())
	}
	if n == 0 {
		return cur, apierr.NotFound(EntityType, id.String())
	}
	sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return cur, err
	}
	tx.Emit(cur.changeEvent(entity.Deleted, sp.Slug))
	return cur, nil
}

// BulkPatch applies one merge patch to every Target the selection picks, each in its own savepoint.
func (s *Service) BulkPatch(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, dryRun bool) ([]entity.BulkItem[Target], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Target, error) {
		return update(ctx, sc, tx, ref.SpaceID, ref.ID, mergePatch(patch))
	})
}

// BulkDelete deletes every Target the selection picks.
func (s *Service) BulkDelete(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, dryRun bool) ([]entity.BulkItem[Target], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Target, error) {
		return remove(ctx, sc, tx, ref.SpaceID, ref.ID)
	})
}

func (s *Service) selector(sc authz.Scope, path string, sel listquery.Params) entity.Selector {
	return func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		limit := entity.MaxBulk
		sel.Limit = &limit
		page, err := listquery.Run[db.Target](ctx, tx, s.Tokens, listquery.Query{Entity: ListEntity, OrganizationID: sc.OrganizationID, Path: path, Params: sel})
		if err != nil {
			return nil, err
		}
		if page.Continue != "" {
			return nil, entity.TooManySelected(EntityType)
		}
		refs := make([]entity.Ref, len(page.Items))
		for i, r := range page.Items {
			refs[i] = entity.Ref{ID: r.TargetID, SpaceID: r.SpaceID, Slug: r.Slug}
		}
		return refs, nil
	}
}
