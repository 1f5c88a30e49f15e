// Package changeorder holds the rules of ChangeOrders: a change's identity as it moves between Spaces. A
// ChangeOrder says which Spaces (WhereSpace, SpaceFilterID, InScopeSpaceIDs) and Units (WhereUnit,
// UnitFilterID) a change reaches and how a promotion changes them (UpdateType, InvocationID, Parameters); it
// is made with two Tags of its Space marking where the change starts and ends, and may carry a copy of a
// ChangeWorkflow's content.
//
// State is read-only but for one transition: a ChangeOrder is created New, and a write setting a non-empty
// AbortedReason moves New or InProgress to Aborted. Promotions move it on (New → InProgress → Resolved, then
// Restored) through SetProgress, which also records their progress; publishes of Releases naming it move
// Resolved → Released and Restored → RestoreReleased (RecordRelease).
package changeorder

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeworkflow"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/invocation"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
	"github.com/hubd/hubd/internal/unit"
)

// EntityType is the ChangeOrder's type name.
const EntityType = "ChangeOrder"

// Event is the family of the ChangeOrder's events (changeorder.created, changeorder.updated...).
const Event = "changeorder"

// The States of a ChangeOrder.
const (
	New             = "New"
	InProgress      = "InProgress"
	Resolved        = "Resolved"
	Released        = "Released"
	Aborted         = "Aborted"
	Restored        = "Restored"
	RestoreReleased = "RestoreReleased"
)

// States lists every State, in the order of a change's life.
var States = []string{New, InProgress, Resolved, Released, Aborted, Restored, RestoreReleased}

// The UpdateTypes of a ChangeOrder.
const (
	UpgradeUnit = "UpgradeUnit"
	MergeUnits  = "MergeUnits"
	Invoke      = "Invoke"
)

// maxListed bounds InScopeSpaceIDs (the document says so too).
const maxListed = 100

// PromotionOverride records a Stage's refused prerequisites that a promotion overrode, by whom and why.
type PromotionOverride struct {
	Stage         string    `json:"Stage"`
	Prerequisites []string  `json:"Prerequisites"`
	Reason        string    `json:"Reason"`
	UserID        uuid.UUID `json:"UserID"`
	CreatedAt     time.Time `json:"CreatedAt"`
}

// PromotionFailure records a prerequisite that refused a promotion into a Stage, in one Space.
type PromotionFailure struct {
	Stage        string    `json:"Stage"`
	SpaceID      uuid.UUID `json:"SpaceID"`
	Prerequisite string    `json:"Prerequisite"`
	Message      string    `json:"Message"`
	CreatedAt    time.Time `json:"CreatedAt"`
}

// ChangeOrder is a stored ChangeOrder. What is beyond Fields is read-only: the State, the copied
// ChangeWorkflow, the Tags and what promotions record.
type ChangeOrder struct {
	entity.Object
	Fields
	State string
	// Stage is the last Stage the ChangeOrder was promoted into (nil before its first promotion).
	Stage *string
	// ChangeWorkflow is the content of the ChangeWorkflow copied when ChangeWorkflowID was set (nil: none).
	ChangeWorkflow                                      *changeworkflow.Spec
	StartTagID, EndTagID, RestoreTagID, AdoptedEndTagID *uuid.UUID
	PromotionOverrides                                  []PromotionOverride
	PromotionFailures                                   []PromotionFailure
	ResolvedSpaceIDs, ReleasedSpaceIDs                  []uuid.UUID
	RestoredSpaceIDs, ReleasedRestoredSpaceIDs          []uuid.UUID
	// SkippedUnits are the Units a promotion skipped, with why.
	SkippedUnits map[uuid.UUID]string
}

// Fields are what a write sets. AbortedReason set (non-empty) on a New or InProgress ChangeOrder aborts it.
type Fields struct {
	entity.Common
	Description      string         `json:"Description"`
	UpdateType       string         `json:"UpdateType"`
	WhereSpace       string         `json:"WhereSpace"`
	WhereUnit        string         `json:"WhereUnit"`
	SpaceFilterID    *uuid.UUID     `json:"SpaceFilterID"`
	UnitFilterID     *uuid.UUID     `json:"UnitFilterID"`
	InScopeSpaceIDs  []uuid.UUID    `json:"InScopeSpaceIDs"`
	Parameters       map[string]any `json:"Parameters"`
	InvocationID     *uuid.UUID     `json:"InvocationID"`
	ChangeWorkflowID *uuid.UUID     `json:"ChangeWorkflowID"`
	AbortedReason    string         `json:"AbortedReason"`
	// EndTagID, on a create, is a Tag the ChangeOrder adopts as its end Tag instead of making one (a closed
	// ChangeSet's EndTagID: the Units carrying it took the change already). Later writes leave it as stored.
	EndTagID *uuid.UUID `json:"EndTagID"`

	// What Check decides for the row: the State and the ChangeWorkflow's copy.
	state    string
	workflow *changeworkflow.Spec
}

// FromRow converts a stored row into a ChangeOrder.
func FromRow(r *db.ChangeOrder) (ChangeOrder, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	if err != nil {
		return ChangeOrder{}, err
	}
	co := ChangeOrder{
		Object: entity.Object{ID: r.ChangeOrderID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Common: c, Description: r.Description, UpdateType: r.UpdateType, WhereSpace: r.WhereSpace, WhereUnit: r.WhereUnit,
			SpaceFilterID: r.SpaceFilterID, UnitFilterID: r.UnitFilterID, InScopeSpaceIDs: orEmpty(r.InScopeSpaceIds),
			InvocationID: r.InvocationID, ChangeWorkflowID: r.ChangeWorkflowID, AbortedReason: r.AbortedReason, EndTagID: r.AdoptedEndTagID},
		State: r.State, Stage: r.Stage, StartTagID: r.StartTagID, EndTagID: r.EndTagID, RestoreTagID: r.RestoreTagID,
		AdoptedEndTagID: r.AdoptedEndTagID, ResolvedSpaceIDs: orEmpty(r.ResolvedSpaceIds), ReleasedSpaceIDs: orEmpty(r.ReleasedSpaceIds),
		RestoredSpaceIDs: orEmpty(r.RestoredSpaceIds), ReleasedRestoredSpaceIDs: orEmpty(r.ReleasedRestoredSpaceIds),
	}
	if len(r.ChangeWorkflow) > 0 && string(r.ChangeWorkflow) != "null" {
		co.ChangeWorkflow = &changeworkflow.Spec{}
		if err := json.Unmarshal(r.ChangeWorkflow, co.ChangeWorkflow); err != nil {
			return co, fmt.Errorf("decoding ChangeOrder %s ChangeWorkflow: %w", r.ChangeOrderID, err)
		}
	}
	for _, d := range []struct {
		name string
		raw  []byte
		to   any
	}{{"Parameters", r.Parameters, &co.Parameters}, {"PromotionOverrides", r.PromotionOverrides, &co.PromotionOverrides},
		{"PromotionFailures", r.PromotionFailures, &co.PromotionFailures}, {"SkippedUnits", r.SkippedUnits, &co.SkippedUnits}} {
		if len(d.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(d.raw, d.to); err != nil {
			return co, fmt.Errorf("decoding ChangeOrder %s %s: %w", r.ChangeOrderID, d.name, err)
		}
	}
	if co.Parameters == nil {
		co.Parameters = map[string]any{}
	}
	if co.PromotionOverrides == nil {
		co.PromotionOverrides = []PromotionOverride{}
	}
	if co.PromotionFailures == nil {
		co.PromotionFailures = []PromotionFailure{}
	}
	if co.SkippedUnits == nil {
		co.SkippedUnits = map[uuid.UUID]string{}
	}
	return co, nil
}

func orEmpty(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

// ListEntity is how ChangeOrders are listed (indexes: migration 000045).
var ListEntity = listquery.Standard{Table: "change_order", ID: "ChangeOrderID", InSpace: true, Permissions: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "Description", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "Description", Type: listquery.String, SQL: "change_order.description", Filterable: true, Orderable: true},
		{Name: "UpdateType", Type: listquery.String, SQL: "change_order.update_type", Filterable: true, Orderable: true},
		{Name: "State", Type: listquery.String, SQL: "change_order.state", Filterable: true, Orderable: true},
		{Name: "Stage", Type: listquery.String, SQL: "change_order.stage", Nullable: true, Filterable: true, Orderable: true,
			OrderSQL: "COALESCE(change_order.stage, '')"},
		{Name: "WhereSpace", Type: listquery.String, SQL: "change_order.where_space", Filterable: true},
		{Name: "WhereUnit", Type: listquery.String, SQL: "change_order.where_unit", Filterable: true},
		{Name: "AbortedReason", Type: listquery.String, SQL: "change_order.aborted_reason", Filterable: true},
		listquery.NullableUUID("SpaceFilterID", "change_order.space_filter_id"),
		listquery.NullableUUID("UnitFilterID", "change_order.unit_filter_id"),
		listquery.NullableUUID("InvocationID", "change_order.invocation_id"),
		listquery.NullableUUID("ChangeWorkflowID", "change_order.change_workflow_id"),
		listquery.NullableUUID("StartTagID", "change_order.start_tag_id"),
		listquery.NullableUUID("EndTagID", "change_order.end_tag_id"),
		listquery.NullableUUID("RestoreTagID", "change_order.restore_tag_id"),
		listquery.NullableUUID("AdoptedEndTagID", "change_order.adopted_end_tag_id"),
		{Name: "InScopeSpaceIDs", Type: listquery.Opaque}, {Name: "Parameters", Type: listquery.Opaque},
		{Name: "ChangeWorkflow", Type: listquery.Opaque}, {Name: "PromotionOverrides", Type: listquery.Opaque},
		{Name: "PromotionFailures", Type: listquery.Opaque}, {Name: "ResolvedSpaceIDs", Type: listquery.Opaque},
		{Name: "ReleasedSpaceIDs", Type: listquery.Opaque}, {Name: "RestoredSpaceIDs", Type: listquery.Opaque},
		{Name: "ReleasedRestoredSpaceIDs", Type: listquery.Opaque}, {Name: "SkippedUnits", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{
		{Name: "StartTagID", Field: "StartTag", Type: tag.EntityType}, {Name: "EndTagID", Field: "EndTag", Type: tag.EntityType},
		{Name: "RestoreTagID", Field: "RestoreTag", Type: tag.EntityType},
		{Name: "InvocationID", Field: "Invocation", Type: invocation.EntityType},
		{Name: "SpaceFilterID", Field: "SpaceFilter", Type: filter.EntityType},
		{Name: "UnitFilterID", Field: "UnitFilter", Type: filter.EntityType},
	},
})

func rowParams(f Fields) db.ChangeOrderInsertParams {
	spaces := f.InScopeSpaceIDs
	if spaces == nil {
		spaces = []uuid.UUID{}
	}
	params := f.Parameters
	if params == nil {
		params = map[string]any{}
	}
	var workflow json.RawMessage
	if f.workflow != nil {
		workflow = store.EncodeJSON(f.workflow)
	}
	return db.ChangeOrderInsertParams{Slug: f.Slug, DisplayName: f.DisplayName, Description: f.Description,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		UpdateType: f.UpdateType, WhereSpace: f.WhereSpace, WhereUnit: f.WhereUnit, SpaceFilterID: f.SpaceFilterID,
		UnitFilterID: f.UnitFilterID, InScopeSpaceIds: spaces, Parameters: store.EncodeJSON(params), InvocationID: f.InvocationID,
		ChangeWorkflowID: f.ChangeWorkflowID, ChangeWorkflow: workflow, AbortedReason: f.AbortedReason, State: f.state,
		AdoptedEndTagID: f.EndTagID}
}

// Family declares ChangeOrders to the entity kit: a ChangeOrder lives in a Space, carries Permissions, and is
// copied in bulk.
var Family = entity.Declare(&entity.Family[db.ChangeOrder, ChangeOrder, Fields]{
	Type: EntityType, Event: Event, Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.ChangeOrder, error) {
		p := rowParams(f)
		p.ChangeOrderID, p.OrganizationID, p.SpaceID = id, sc.OrganizationID, spaceID
		return q.ChangeOrderInsert(ctx, p)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur ChangeOrder, f Fields) (*db.ChangeOrder, error) {
		p := rowParams(f)
		return q.ChangeOrderUpdate(ctx, db.ChangeOrderUpdateParams{OrganizationID: sc.OrganizationID, ChangeOrderID: cur.ID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Description: p.Description, Labels: p.Labels, Annotations: p.Annotations,
			DeleteGates: p.DeleteGates, Permissions: p.Permissions, UpdateType: p.UpdateType, WhereSpace: p.WhereSpace,
			WhereUnit: p.WhereUnit, SpaceFilterID: p.SpaceFilterID, UnitFilterID: p.UnitFilterID, InScopeSpaceIds: p.InScopeSpaceIds,
			Parameters: p.Parameters, InvocationID: p.InvocationID, ChangeWorkflowID: p.ChangeWorkflowID, ChangeWorkflow: p.ChangeWorkflow,
			AbortedReason: p.AbortedReason, State: p.State})
	},
	FromRow: FromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks what needs no database: UpdateType (empty is
// UpgradeUnit), InvocationID (required by Invoke, refused otherwise), the where expressions, InScopeSpaceIDs.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = f.Common.Normalized()
	if err := f.Common.Validate(true); err != nil {
		return f, err
	}
	switch f.UpdateType {
	case "":
		f.UpdateType = UpgradeUnit
	case UpgradeUnit, MergeUnits, Invoke:
	default:
		return f, apierr.UserInput(fmt.Sprintf("UpdateType %q is not a ChangeOrder UpdateType: use UpgradeUnit, MergeUnits or Invoke", f.UpdateType),
			apierr.Item{Item: "UpdateType", Description: "unknown UpdateType"})
	}
	switch {
	case f.UpdateType == Invoke && f.InvocationID == nil:
		return f, apierr.Validation("InvocationID is required when UpdateType is Invoke: name the Invocation the promotion runs",
			apierr.Item{Item: "InvocationID", Description: "required by UpdateType Invoke"})
	case f.UpdateType != Invoke && f.InvocationID != nil:
		return f, apierr.Validation(fmt.Sprintf("InvocationID is for UpdateType Invoke only; leave it null with UpdateType %s", f.UpdateType),
			apierr.Item{Item: "InvocationID", Description: "only with UpdateType Invoke"})
	}
	if err := listquery.CheckWhere(space.ListEntity, "WhereSpace", f.WhereSpace); err != nil {
		return f, err
	}
	if err := listquery.CheckWhere(unit.ListEntity, "WhereUnit", f.WhereUnit); err != nil {
		return f, err
	}
	if len(f.InScopeSpaceIDs) > maxListed {
		return f, apierr.UserInput(fmt.Sprintf("a ChangeOrder holds at most %d InScopeSpaceIDs", maxListed),
			apierr.Item{Item: "InScopeSpaceIDs", Description: "too many"})
	}
	spaces := []uuid.UUID{}
	for _, id := range f.InScopeSpaceIDs {
		if !slices.Contains(spaces, id) {
			spaces = append(spaces, id)
		}
	}
	f.InScopeSpaceIDs = spaces
	if f.Parameters == nil {
		f.Parameters = map[string]any{}
	}
	return f, nil
}

// Check decides the State (created New; a non-empty AbortedReason aborts a New or InProgress one), keeps an
// Aborted ChangeOrder to its descriptive fields, copies the ChangeWorkflow when ChangeWorkflowID changes
// (only while New), and checks the references the write sets: Filters of Spaces and of Units, the
// Invocation, the in-scope Spaces, all of the organization and viewable by the caller (else 400 naming the
// field, as a random ID). A reference left as stored passes again.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *ChangeOrder, f Fields) (Fields, error) {
	var before Fields
	if cur == nil {
		// A create (or a copy) is New, whatever AbortedReason it carries.
		f.state, f.AbortedReason = New, ""
		if f.EndTagID != nil {
			if _, err := tag.LookupForShare(ctx, sc, tx.Q, *f.EndTagID); err != nil {
				if apierr.Is(err, apierr.TypeValidation) || apierr.Is(err, apierr.TypeNotFound) {
					return f, apierr.NoSuchReference(tag.EntityType, "of your organization", "EndTagID")
				}
				return f, err
			}
		}
		wf, err := changeworkflow.CopyOf(ctx, sc, tx.Q, f.ChangeWorkflowID)
		if err != nil {
			return f, err
		}
		f.workflow = wf
	} else {
		before = cur.Fields
		f.state, f.workflow, f.EndTagID = cur.State, cur.ChangeWorkflow, cur.Fields.EndTagID
		if err := checkAbort(*cur, &f); err != nil {
			return f, err
		}
		if cur.State == Aborted {
			if field := changedWhileAborted(cur.Fields, f); field != "" {
				return f, apierr.Validation(fmt.Sprintf("%s: ChangeOrder %s is Aborted; only its DisplayName, Description, Labels, Annotations, DeleteGates, Permissions and AbortedReason change", field, cur.Slug),
					apierr.Item{Item: field, Description: "ChangeOrder Aborted"})
			}
		}
		if !sameID(f.ChangeWorkflowID, cur.ChangeWorkflowID) {
			if cur.State != New {
				return f, apierr.Validation(fmt.Sprintf("ChangeWorkflowID: ChangeOrder %s is %s; its ChangeWorkflow changes only while it is New", cur.Slug, cur.State),
					apierr.Item{Item: "ChangeWorkflowID", Description: "ChangeOrder " + cur.State})
			}
			wf, err := changeworkflow.CopyOf(ctx, sc, tx.Q, f.ChangeWorkflowID)
			if err != nil {
				return f, err
			}
			f.workflow = wf
		}
	}
	for _, ref := range []struct {
		field      string
		id, stored *uuid.UUID
		from       string
	}{{"SpaceFilterID", f.SpaceFilterID, before.SpaceFilterID, space.EntityType}, {"UnitFilterID", f.UnitFilterID, before.UnitFilterID, unit.EntityType}} {
		if ref.id == nil || sameID(ref.id, ref.stored) {
			continue
		}
		if _, err := filter.Referenced(ctx, tx, sc, *ref.id, ref.field, ref.from); err != nil {
			return f, err
		}
	}
	if f.InvocationID != nil && !sameID(f.InvocationID, before.InvocationID) {
		found, err := invocation.Family.Visible(ctx, tx, sc, []uuid.UUID{*f.InvocationID})
		if err != nil {
			return f, err
		}
		if _, ok := found[*f.InvocationID]; !ok {
			return f, apierr.NoSuchReference(invocation.EntityType, "of your organization", "InvocationID")
		}
	}
	for _, id := range f.InScopeSpaceIDs {
		if slices.Contains(before.InScopeSpaceIDs, id) {
			continue
		}
		if _, _, err := space.VisibleParent(ctx, sc, tx.Q, id); err != nil {
			if apierr.Is(err, apierr.TypeNotFound) {
				return f, apierr.NoSuchReference(space.EntityType, "of your organization", "InScopeSpaceIDs")
			}
			return f, err
		}
	}
	return f, nil
}

// checkAbort applies the one State change a write makes: a non-empty AbortedReason set on a New or
// InProgress ChangeOrder aborts it; an Aborted one may reword its reason (not clear it); in any other State
// AbortedReason does not change.
func checkAbort(cur ChangeOrder, f *Fields) error {
	if f.AbortedReason == cur.AbortedReason {
		return nil
	}
	switch {
	case (cur.State == New || cur.State == InProgress) && f.AbortedReason != "":
		f.state = Aborted
		return nil
	case cur.State == Aborted && f.AbortedReason != "":
		return nil
	case cur.State == Aborted:
		return apierr.Validation(fmt.Sprintf("AbortedReason: ChangeOrder %s is Aborted and keeps a reason; it cannot be cleared", cur.Slug),
			apierr.Item{Item: "AbortedReason", Description: "required while Aborted"})
	}
	return apierr.Validation(fmt.Sprintf("AbortedReason: ChangeOrder %s is %s; only a New or InProgress ChangeOrder is aborted", cur.Slug, cur.State),
		apierr.Item{Item: "AbortedReason", Description: "ChangeOrder " + cur.State})
}

// changedWhileAborted names the first field f changes that an Aborted ChangeOrder keeps ("" when none).
func changedWhileAborted(cur, f Fields) string {
	switch {
	case f.Slug != cur.Slug:
		return "Slug"
	case f.UpdateType != cur.UpdateType:
		return "UpdateType"
	case f.WhereSpace != cur.WhereSpace:
		return "WhereSpace"
	case f.WhereUnit != cur.WhereUnit:
		return "WhereUnit"
	case !sameID(f.SpaceFilterID, cur.SpaceFilterID):
		return "SpaceFilterID"
	case !sameID(f.UnitFilterID, cur.UnitFilterID):
		return "UnitFilterID"
	case !slices.Equal(f.InScopeSpaceIDs, cur.InScopeSpaceIDs):
		return "InScopeSpaceIDs"
	case !sameJSON(f.Parameters, cur.Parameters):
		return "Parameters"
	case !sameID(f.InvocationID, cur.InvocationID):
		return "InvocationID"
	case !sameID(f.ChangeWorkflowID, cur.ChangeWorkflowID):
		return "ChangeWorkflowID"
	}
	return ""
}

func sameID(a, b *uuid.UUID) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// sameJSON compares two values as JSON (numbers decoded apart compare equal).
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}

// AfterWrite makes a new ChangeOrder's start and end Tags in its Space, named after it, and records them;
// a ChangeOrder created with an EndTagID adopts that Tag as its end Tag (AdoptedEndTagID) instead.
func (strategy) AfterWrite(ctx context.Context, _ entity.Deps, tx *store.Tx, sc authz.Scope, before *ChangeOrder, after ChangeOrder) (ChangeOrder, error) {
	if before != nil {
		return after, nil
	}
	start, err := tag.CreateOwned(ctx, tx, sc, after.SpaceID, tag.SlugFor(after.Slug, "-start"), tag.Owner{ChangeOrderID: &after.ID})
	if err != nil {
		return after, err
	}
	endID, adopted := after.Fields.EndTagID, after.Fields.EndTagID
	if endID == nil {
		end, err := tag.CreateOwned(ctx, tx, sc, after.SpaceID, tag.SlugFor(after.Slug, "-end"), tag.Owner{ChangeOrderID: &after.ID})
		if err != nil {
			return after, err
		}
		endID = &end.ID
	}
	row, err := tx.Q.ChangeOrderSetTags(ctx, db.ChangeOrderSetTagsParams{OrganizationID: sc.OrganizationID, ChangeOrderID: after.ID,
		StartTagID: &start.ID, EndTagID: endID, AdoptedEndTagID: adopted})
	if err != nil {
		return after, err
	}
	return FromRow(row)
}

type detachKey struct{}

// WithDetach marks ctx as a delete with detach=true: an InProgress ChangeOrder is deleted too.
func WithDetach(ctx context.Context) context.Context {
	return context.WithValue(ctx, detachKey{}, true)
}

// BeforeDelete refuses to delete an InProgress ChangeOrder (409) unless the delete detaches it. Its Tags
// stay and stop naming it (the foreign key sets their ChangeOrderID null); Attestations naming it keep it
// (the foreign key refuses the delete, 409).
func (strategy) BeforeDelete(ctx context.Context, _ *store.Tx, _ authz.Scope, cur ChangeOrder) error {
	if detach, _ := ctx.Value(detachKey{}).(bool); detach || cur.State != InProgress {
		return nil
	}
	return apierr.Conflict("ChangeOrder %s is InProgress; delete with detach=true to stop its promotion and delete it, or abort it first", cur.Slug).
		WithEntity(EntityType, cur.ID.String(), cur.Slug)
}

// Target is the ChangeOrder as a permission target.
func (c ChangeOrder) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: c.ID.String(), Grants: c.Permissions, SpaceID: c.SpaceID}
}

// Referenced returns the ChangeOrder id names for another entity of Space spaceID (field names what
// carried the ID: an Attestation's ChangeOrderID): one of that Space the caller may view, else 400 naming
// field, as for a random ID. The ChangeOrder stays share-locked until q's transaction ends, so its delete
// waits for the write and then sees what now names it.
func Referenced(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID, id uuid.UUID, field string) (ChangeOrder, error) {
	row, err := q.ChangeOrderGetForShare(ctx, db.ChangeOrderGetForShareParams{OrganizationID: sc.OrganizationID, ChangeOrderID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return ChangeOrder{}, apierr.NoSuchReference(EntityType, "of the Space", field)
	}
	if err != nil {
		return ChangeOrder{}, err
	}
	co, err := FromRow(row)
	if err != nil {
		return co, err
	}
	if co.SpaceID != spaceID || !sc.Allows(authz.View, co.Target()) {
		return ChangeOrder{}, apierr.NoSuchReference(EntityType, "of the Space", field)
	}
	return co, nil
}

// LockForPromote reads ChangeOrder id FOR UPDATE in tx for a promotion (or a restore) to change its
// progress: one of the caller's organization it may view, else NotFound as for a random ID.
func LockForPromote(ctx context.Context, sc authz.Scope, tx *store.Tx, id uuid.UUID) (ChangeOrder, error) {
	row, err := tx.Q.ChangeOrderGetForUpdate(ctx, db.ChangeOrderGetForUpdateParams{OrganizationID: sc.OrganizationID, ChangeOrderID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return ChangeOrder{}, apierr.NotFound(EntityType, id.String())
	}
	if err != nil {
		return ChangeOrder{}, err
	}
	co, err := FromRow(row)
	if err != nil {
		return co, err
	}
	if err := authz.Viewable(sc, co.Target(), id.String()); err != nil {
		return ChangeOrder{}, err
	}
	return co, nil
}

// Progress is what a promotion, a restore or a publish records on a ChangeOrder; SetProgress replaces each
// value but ReleasedSpaceIDs and ReleasedRestoredSpaceIDs, which a nil value leaves as stored (publishes set
// them: RecordRelease).
type Progress struct {
	State                    string
	Stage                    *string
	ResolvedSpaceIDs         []uuid.UUID
	RestoredSpaceIDs         []uuid.UUID
	ReleasedSpaceIDs         []uuid.UUID
	ReleasedRestoredSpaceIDs []uuid.UUID
	SkippedUnits             map[uuid.UUID]string
	PromotionOverrides       []PromotionOverride
	PromotionFailures        []PromotionFailure
	RestoreTagID             *uuid.UUID
}

// SetProgress records p on ChangeOrder id of organization orgID in tx (read it with LockForPromote first),
// with a new Version and its changeorder.updated event. The State must be one of States; the promotion
// engine decides the transition.
func SetProgress(ctx context.Context, tx *store.Tx, orgID, id uuid.UUID, p Progress) (ChangeOrder, error) {
	if !slices.Contains(States, p.State) {
		return ChangeOrder{}, fmt.Errorf("recording ChangeOrder %s progress: %q is not a State", id, p.State)
	}
	skipped := p.SkippedUnits
	if skipped == nil {
		skipped = map[uuid.UUID]string{}
	}
	overrides, failures := p.PromotionOverrides, p.PromotionFailures
	if overrides == nil {
		overrides = []PromotionOverride{}
	}
	if failures == nil {
		failures = []PromotionFailure{}
	}
	row, err := tx.Q.ChangeOrderSetProgress(ctx, db.ChangeOrderSetProgressParams{OrganizationID: orgID, ChangeOrderID: id,
		State: p.State, Stage: p.Stage, ResolvedSpaceIds: orEmpty(p.ResolvedSpaceIDs), RestoredSpaceIds: orEmpty(p.RestoredSpaceIDs),
		ReleasedSpaceIds: p.ReleasedSpaceIDs, ReleasedRestoredSpaceIds: p.ReleasedRestoredSpaceIDs,
		SkippedUnits: store.EncodeJSON(skipped), PromotionOverrides: store.EncodeJSON(overrides),
		PromotionFailures: store.EncodeJSON(failures), RestoreTagID: p.RestoreTagID})
	if err != nil {
		return ChangeOrder{}, fmt.Errorf("recording ChangeOrder %s progress: %w", id, err)
	}
	co, err := FromRow(row)
	if err != nil {
		return co, err
	}
	sp, err := space.Of(ctx, authz.SystemScope(orgID, "changeorder"), tx.Q, co.SpaceID)
	if err != nil {
		return co, err
	}
	tx.Emit(entity.ChangeEvent(Event, EntityType, entity.Updated, orgID, co.ID, co.Slug, co.Version, &sp.Ref))
	return co, nil
}

// ForRelease checks ChangeOrder id for a Release of Space spaceID publishing it, and locks it FOR UPDATE in tx
// (RecordRelease then records the publish): one of the caller's organization it may view (else 400 naming
// field, as a random ID), InProgress, Resolved or Released with spaceID among its ResolvedSpaceIDs, or
// Restored or RestoreReleased with spaceID among its RestoredSpaceIDs (else 400 naming field).
func ForRelease(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, id uuid.UUID, field string) (ChangeOrder, error) {
	co, err := LockForPromote(ctx, sc, tx, id)
	if apierr.Is(err, apierr.TypeNotFound) {
		return ChangeOrder{}, apierr.NoSuchReference(EntityType, "of your organization", field)
	}
	if err != nil {
		return ChangeOrder{}, err
	}
	var spaces []uuid.UUID
	switch co.State {
	case InProgress, Resolved, Released:
		spaces = co.ResolvedSpaceIDs
	case Restored, RestoreReleased:
		spaces = co.RestoredSpaceIDs
	default:
		return ChangeOrder{}, apierr.Validation(fmt.Sprintf("%s: ChangeOrder %s is %s; a Release publishes an InProgress, Resolved, Released or Restored ChangeOrder", field, co.Slug, co.State),
			apierr.Item{Item: field, Description: "ChangeOrder " + co.State})
	}
	if !slices.Contains(spaces, spaceID) {
		verb := "promoted into"
		if co.State == Restored || co.State == RestoreReleased {
			verb = "restored in"
		}
		return ChangeOrder{}, apierr.Validation(fmt.Sprintf("%s: ChangeOrder %s has not been %s this Space; promote it here before releasing it", field, co.Slug, verb),
			apierr.Item{Item: field, Description: "ChangeOrder not " + verb + " the Space"})
	}
	return co, nil
}

// RecordRelease records on co (read with ForRelease in tx) that a Release of Space spaceID published it: the
// Space joins ReleasedSpaceIDs (ReleasedRestoredSpaceIDs when co is Restored or RestoreReleased), and a Resolved
// ChangeOrder whose ResolvedSpaceIDs are all released becomes Released (a Restored one whose RestoredSpaceIDs
// all are, RestoreReleased), with a new Version and its changeorder.updated event. A Space released before
// changes nothing.
func RecordRelease(ctx context.Context, tx *store.Tx, co ChangeOrder, spaceID uuid.UUID) (ChangeOrder, error) {
	p := Progress{State: co.State, Stage: co.Stage, ResolvedSpaceIDs: co.ResolvedSpaceIDs, RestoredSpaceIDs: co.RestoredSpaceIDs,
		SkippedUnits: co.SkippedUnits, PromotionOverrides: co.PromotionOverrides, PromotionFailures: co.PromotionFailures,
		RestoreTagID: co.RestoreTagID}
	restored := co.State == Restored || co.State == RestoreReleased
	released, of := co.ReleasedSpaceIDs, co.ResolvedSpaceIDs
	if restored {
		released, of = co.ReleasedRestoredSpaceIDs, co.RestoredSpaceIDs
	}
	if slices.Contains(released, spaceID) {
		return co, nil
	}
	released = append(slices.Clone(released), spaceID)
	all := true
	for _, id := range of {
		if !slices.Contains(released, id) {
			all = false
			break
		}
	}
	if restored {
		p.ReleasedRestoredSpaceIDs = released
		if all && co.State == Restored {
			p.State = RestoreReleased
		}
	} else {
		p.ReleasedSpaceIDs = released
		if all && co.State == Resolved {
			p.State = Released
		}
	}
	return SetProgress(ctx, tx, co.OrganizationID, co.ID, p)
}
