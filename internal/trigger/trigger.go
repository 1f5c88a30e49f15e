// Package trigger holds the rules of Triggers: function calls kept in a Space that run on every change
// of its matching Units (Event Mutation) or on a clone's first Revision (PostClone). A validating
// Trigger's failure is a finding on the Revision and a gate on the Unit (ValidationErrors, ApplyGates;
// with Warn, ValidationWarnings and ApplyWarnings); a mutating Trigger's change is a Mutation of the
// Revision. The data write runs them (package unit); this package keeps them valid when written.
package trigger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/invocation"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// EntityType is the Trigger's type name.
const EntityType = "Trigger"

// MaxPerSpace bounds the Triggers of one Space (every data write there reads and selects them all). It
// is set once at start (hubd serve's --max-triggers-per-space).
var MaxPerSpace = 100

// Trigger is a stored Trigger.
type Trigger struct {
	entity.Object
	Hash string
	Fields
}

// Fields are what a write sets.
type Fields struct {
	entity.Common
	Description     string                 `json:"Description"`
	Event           string                 `json:"Event"`
	ToolchainType   string                 `json:"ToolchainType"`
	FunctionName    string                 `json:"FunctionName"`
	Arguments       []function.Argument    `json:"Arguments"`
	WhereResource   string                 `json:"WhereResource"`
	Guards          map[string]string      `json:"Guards"`
	Clearance       []function.Requirement `json:"Clearance"`
	Protect         bool                   `json:"Protect"`
	Params          map[string]any         `json:"Params"`
	OtherDataSource string                 `json:"OtherDataSource"`
	FailOpenAfter   *int32                 `json:"FailOpenAfter"`
	WhereUnit       string                 `json:"WhereUnit"`
	UnitFilterID    *uuid.UUID             `json:"UnitFilterID"`
	// InvocationID names a stored Invocation of the Space to run instead of FunctionName, with Params as
	// the values of its Parameters. BridgeWorkerID would name a worker to run it: not served, so null.
	InvocationID   *uuid.UUID `json:"InvocationID"`
	BridgeWorkerID *uuid.UUID `json:"BridgeWorkerID"`
	Warn           bool       `json:"Warn"`
	Disabled       bool       `json:"Disabled"`
	// validating is the function's (or the Invocation's) kind, decided when the fields are checked.
	validating bool
}

// Validating: a validating Trigger records findings, any other changes data.
func (f Fields) Validating() bool { return f.validating }

// Normalize puts the fields in their stored form and checks them on their own: the function exists for
// the ToolchainType, changes or validates data, and takes the Arguments; WhereUnit is a valid where over
// Units.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Meta = f.Meta.Normalized()
	if f.Arguments == nil {
		f.Arguments = []function.Argument{}
	}
	if f.Guards == nil {
		f.Guards = map[string]string{}
	}
	if f.Clearance == nil {
		f.Clearance = []function.Requirement{}
	}
	if f.Params == nil {
		f.Params = map[string]any{}
	}
	if err := f.Common.Validate(false); err != nil {
		return f, err
	}
	switch f.Event {
	case unit.TriggerEventMutation, unit.TriggerEventPostClone:
	default:
		return f, apierr.Validation(fmt.Sprintf("Event %q is not Mutation or PostClone", f.Event), apierr.Item{Item: "Event", Description: "unknown event"})
	}
	if err := configdata.CheckToolchain(f.ToolchainType, "unknown ToolchainType"); err != nil {
		return f, err
	}
	if f.InvocationID != nil {
		// The Invocation's functions run (check reads it); the Trigger adds its Guards and Clearance.
		for field, set := range map[string]bool{"FunctionName": f.FunctionName != "", "Arguments": len(f.Arguments) > 0, "WhereResource": f.WhereResource != ""} {
			if set {
				return f, apierr.Validation(field+": a Trigger runs its FunctionName or its InvocationID, not both; leave "+field+" empty",
					apierr.Item{Item: field, Description: "set with InvocationID"})
			}
		}
		if err := function.CheckGuards(f.Guards, f.Clearance, ""); err != nil {
			return f, err
		}
	} else {
		c, err := function.Bind(f.ToolchainType, function.Invocation{FunctionName: f.FunctionName, Arguments: f.Arguments,
			WhereResource: f.WhereResource, Guards: f.Guards, Clearance: f.Clearance}, "")
		if err != nil {
			return f, err
		}
		if !c.Function.Mutating && !c.Function.Validating {
			return f, apierr.Validation(fmt.Sprintf("FunctionName: %s only reads data; a Trigger's function changes or validates it", f.FunctionName),
				apierr.Item{Item: "FunctionName", Description: "neither mutating nor validating"})
		}
		f.validating = c.Function.Validating
	}
	if f.FailOpenAfter != nil && *f.FailOpenAfter < 0 {
		return f, apierr.Validation("FailOpenAfter must be 0 or more (seconds)", apierr.Item{Item: "FailOpenAfter", Description: "negative"})
	}
	if f.OtherDataSource != "" {
		return f, apierr.Validation("OtherDataSource: no builtin function takes other data; leave it empty",
			apierr.Item{Item: "OtherDataSource", Description: "not supported"})
	}
	if f.BridgeWorkerID != nil {
		return f, apierr.Validation("BridgeWorkerID: Triggers run on hubd's builtin executor; leave it null",
			apierr.Item{Item: "BridgeWorkerID", Description: "not supported"})
	}
	if err := listquery.CheckWhere(unit.ListEntity, "WhereUnit", f.WhereUnit); err != nil {
		return f, err
	}
	return f, nil
}

// Check requires an InvocationID to name an Invocation of the Trigger's Space, visible to the caller, that
// the Trigger can run (its ToolchainType, functions all validating or all mutating, Params its Parameters
// accept), and a UnitFilterID to name a Filter of Units, visible to the caller, that selects by Unit
// attributes only (a Trigger selects a Unit as its write begins, before its new data). A new Trigger must
// leave the Space within MaxPerSpace.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *Trigger, f Fields) (Fields, error) {
	if cur == nil {
		n, err := tx.Q.TriggerCountInSpace(ctx, db.TriggerCountInSpaceParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID})
		if err != nil {
			return f, err
		}
		if n >= int64(MaxPerSpace) {
			return f, apierr.Validation(fmt.Sprintf("the Space has %d Triggers, the bound (--max-triggers-per-space); delete one or run an Invocation of several functions from one Trigger", MaxPerSpace),
				apierr.Item{Item: "SpaceID", Description: fmt.Sprintf("more than %d Triggers", MaxPerSpace)})
		}
	}
	if f.InvocationID != nil {
		found, err := invocation.Family.Visible(ctx, tx, sc, []uuid.UUID{*f.InvocationID})
		if err != nil {
			return f, err
		}
		inv, ok := found[*f.InvocationID]
		if !ok || inv.SpaceID != spaceID {
			return f, apierr.NoSuchReference(invocation.EntityType, "in the Trigger's Space", "InvocationID")
		}
		f.validating = invocation.KindOf(inv.ToolchainType, inv.FunctionInvocations).Validating
		if err := invocation.FitsTrigger(inv.Fields, f.ToolchainType, f.validating, f.Params); err != nil {
			return f, apierr.Validation("InvocationID: "+apierr.MessageOf(err), apierr.Item{Item: "InvocationID", Description: "cannot run it"})
		}
	}
	if f.UnitFilterID == nil {
		return f, nil
	}
	flt, err := filter.Referenced(ctx, tx, sc, *f.UnitFilterID, "UnitFilterID", unit.EntityType)
	if err != nil {
		return f, err
	}
	if err := filter.FitsTrigger(flt.Fields); err != nil {
		return f, apierr.Validation("UnitFilterID: "+apierr.MessageOf(err), apierr.Item{Item: "UnitFilterID", Description: "selects by data"})
	}
	return f, nil
}

// definitionHash is the lowercase hex SHA-256 of what a Trigger does (Event, ToolchainType, the call,
// its selection, Warn and Disabled), stored as Hash.
func definitionHash(f Fields) string {
	def, _ := json.Marshal([]any{f.Event, f.ToolchainType, f.FunctionName, f.Arguments, f.WhereResource, f.Guards, f.Clearance,
		f.Protect, f.Params, f.WhereUnit, f.UnitFilterID, f.InvocationID, f.Warn, f.Disabled})
	sum := sha256.Sum256(def)
	return hex.EncodeToString(sum[:])
}

func fromRow(r *db.Trigger) (Trigger, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, nil)
	t := Trigger{Object: entity.Object{ID: r.TriggerID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, Hash: r.Hash,
		Fields: Fields{Common: c, Description: r.Description, Event: r.Event, ToolchainType: r.ToolchainType,
			FunctionName: r.FunctionName, WhereResource: r.WhereResource, Protect: r.Protect, OtherDataSource: r.OtherDataSource,
			FailOpenAfter: r.FailOpenAfter, WhereUnit: r.WhereUnit, UnitFilterID: r.UnitFilterID, InvocationID: r.InvocationID,
			Warn: r.Warn, Disabled: r.Disabled, validating: r.Validating}}
	if err != nil {
		return t, err
	}
	for _, d := range []struct {
		raw []byte
		to  any
	}{{r.Arguments, &t.Arguments}, {r.Guards, &t.Guards}, {r.Clearance, &t.Clearance}, {r.Params, &t.Params}} {
		if err := json.Unmarshal(d.raw, d.to); err != nil {
			return t, err
		}
	}
	return t, nil
}

// ListEntity is how Triggers are listed (indexes: migration 000024).
var ListEntity = listquery.Standard{Table: "trigger", ID: "TriggerID", InSpace: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "Description", "FunctionName", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "Description", Type: listquery.String, SQL: "trigger.description", Filterable: true},
		{Name: "Event", Type: listquery.String, SQL: "trigger.event", Filterable: true, Orderable: true},
		{Name: "ToolchainType", Type: listquery.String, SQL: "trigger.toolchain_type", Filterable: true, Orderable: true},
		{Name: "FunctionName", Type: listquery.String, SQL: "trigger.function_name", Filterable: true, Orderable: true},
		{Name: "WhereResource", Type: listquery.String, SQL: "trigger.where_resource", Filterable: true},
		{Name: "WhereUnit", Type: listquery.String, SQL: "trigger.where_unit", Filterable: true},
		{Name: "OtherDataSource", Type: listquery.String, SQL: "trigger.other_data_source", Filterable: true},
		{Name: "Validating", Type: listquery.Bool, SQL: "trigger.validating", Filterable: true},
		{Name: "Warn", Type: listquery.Bool, SQL: "trigger.warn", Filterable: true},
		{Name: "Disabled", Type: listquery.Bool, SQL: "trigger.disabled", Filterable: true},
		{Name: "Protect", Type: listquery.Bool, SQL: "trigger.protect", Filterable: true},
		{Name: "Hash", Type: listquery.String, SQL: "trigger.hash", Filterable: true, Orderable: true},
		listquery.NullableUUID("UnitFilterID", "trigger.unit_filter_id"),
		listquery.NullableUUID("InvocationID", "trigger.invocation_id"),
		listquery.After("Annotations"),
		{Name: "Guards", Type: listquery.StringMap, SQL: "trigger.guards", Filterable: true},
		listquery.After("UpdatedAt"),
		{Name: "Arguments", Type: listquery.Opaque}, {Name: "Clearance", Type: listquery.Opaque}, {Name: "Params", Type: listquery.Opaque},
		{Name: "FailOpenAfter", Type: listquery.Opaque}, {Name: "BridgeWorkerID", Type: listquery.Opaque}, {Name: "SpaceSlug", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "UnitFilterID", Field: "UnitFilter", Type: filter.EntityType},
		{Name: "InvocationID", Field: "Invocation", Type: invocation.EntityType}},
})

func insertParams(sc authz.Scope, spaceID, id uuid.UUID, f Fields) db.TriggerInsertParams {
	return db.TriggerInsertParams{TriggerID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug,
		DisplayName: f.DisplayName, Description: f.Description, Labels: store.EncodeJSON(f.Labels),
		Annotations: store.EncodeJSON(f.Annotations), DeleteGates: store.EncodeJSON(f.DeleteGates), Event: f.Event,
		ToolchainType: f.ToolchainType, FunctionName: f.FunctionName, Arguments: store.EncodeJSON(f.Arguments),
		WhereResource: f.WhereResource, Guards: store.EncodeJSON(f.Guards), Clearance: store.EncodeJSON(f.Clearance),
		Protect: f.Protect, Params: store.EncodeJSON(f.Params), OtherDataSource: f.OtherDataSource, FailOpenAfter: f.FailOpenAfter,
		WhereUnit: f.WhereUnit, UnitFilterID: f.UnitFilterID, InvocationID: f.InvocationID, Validating: f.validating, Warn: f.Warn, Disabled: f.Disabled,
		Hash: definitionHash(f)}
}

// Family declares Triggers to the entity kit: a Trigger lives in a Space and carries no Permissions (the
// role and the Space's grants decide). A Trigger deleted or disabled takes its findings off the Units of
// its Space, so it holds none of them back; the others keep their findings until their next change.
var Family = entity.Declare(&entity.Family[db.Trigger, Trigger, Fields]{
	Type: EntityType, Event: "trigger", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Trigger, error) {
		return q.TriggerInsert(ctx, insertParams(sc, spaceID, id, f))
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Trigger, f Fields) (*db.Trigger, error) {
		p := insertParams(sc, cur.SpaceID, cur.ID, f)
		return q.TriggerUpdate(ctx, db.TriggerUpdateParams{OrganizationID: p.OrganizationID, TriggerID: p.TriggerID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Description: p.Description, Labels: p.Labels, Annotations: p.Annotations,
			DeleteGates: p.DeleteGates, Event: p.Event, ToolchainType: p.ToolchainType, FunctionName: p.FunctionName,
			Arguments: p.Arguments, WhereResource: p.WhereResource, Guards: p.Guards, Clearance: p.Clearance, Protect: p.Protect,
			Params: p.Params, OtherDataSource: p.OtherDataSource, FailOpenAfter: p.FailOpenAfter, WhereUnit: p.WhereUnit,
			UnitFilterID: p.UnitFilterID, InvocationID: p.InvocationID, Validating: p.Validating, Warn: p.Warn, Disabled: p.Disabled, Hash: p.Hash})
	},
	FromRow: fromRow,
})

type strategy struct{}

// AfterWrite: a Trigger disabled takes its findings off the Units of its Space.
func (strategy) AfterWrite(ctx context.Context, _ entity.Deps, tx *store.Tx, sc authz.Scope, before *Trigger, after Trigger) (Trigger, error) {
	if after.Disabled && (before == nil || !before.Disabled) {
		return after, forgetFindings(ctx, tx, sc, after)
	}
	return after, nil
}

// BeforeDelete: a Trigger deleted takes its findings off the Units of its Space.
func (strategy) BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur Trigger) error {
	return forgetFindings(ctx, tx, sc, cur)
}

func forgetFindings(ctx context.Context, tx *store.Tx, sc authz.Scope, t Trigger) error {
	return unit.ForgetTriggerFindings(ctx, tx, sc, t.SpaceID, t.ID)
}
