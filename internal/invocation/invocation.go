// Package invocation holds the rules of Invocations: named lists of function invocations of one
// ToolchainType kept in a Space, templates whose arguments may refer to the Parameters they declare
// ({{.Name}}). A request invokes them by reference (POST .../function/invoke with Invocations or
// ParameterizedInvocations) and a Trigger may run one instead of a single function.
package invocation

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
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// EntityType is the Invocation's type name.
const EntityType = "Invocation"

// Invocation is a stored Invocation.
type Invocation struct {
	entity.Object
	Hash string
	Fields
}

// Fields are what a write sets.
type Fields struct {
	entity.Common
	ToolchainType       string                `json:"ToolchainType"`
	FunctionInvocations []function.Invocation `json:"FunctionInvocations"`
	Parameters          []function.Parameter  `json:"Parameters"`
	// BridgeWorkerID would name a worker to run it instead of the builtin executor: not served, so it
	// must be null.
	BridgeWorkerID *uuid.UUID `json:"BridgeWorkerID"`
}

// Kind is what an Invocation's functions do, which decides how a Trigger may run it.
type Kind struct{ Mutating, Validating bool }

// KindOf: Mutating when every function changes data, Validating when every one validates it (neither
// when they are mixed or read only).
func KindOf(toolchain string, invs []function.Invocation) Kind {
	k := Kind{Mutating: len(invs) > 0, Validating: len(invs) > 0}
	for _, inv := range invs {
		fn, ok := function.Lookup(toolchain, inv.FunctionName)
		k.Mutating = k.Mutating && ok && fn.Mutating
		k.Validating = k.Validating && ok && fn.Validating
	}
	return k
}

// Expand is the Invocation's function invocations filled with values of its Parameters, spending budget;
// field names the values in errors.
func (i Invocation) Expand(values map[string]any, field string, budget *function.Budget) ([]function.Invocation, error) {
	return function.Expand(i.FunctionInvocations, i.Parameters, values, field, budget)
}

// Normalize puts the fields in their stored form and checks them on their own: 1 to 100 invocations of
// functions the ToolchainType has, the Parameters they refer to declared.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Meta = f.Meta.Normalized()
	if err := f.Common.Validate(false); err != nil {
		return f, err
	}
	if err := configdata.CheckToolchain(f.ToolchainType, "unknown ToolchainType"); err != nil {
		return f, err
	}
	if f.BridgeWorkerID != nil {
		return f, apierr.Validation("BridgeWorkerID: Invocations run on hubd's builtin executor; leave it null",
			apierr.Item{Item: "BridgeWorkerID", Description: "not supported"})
	}
	switch n := len(f.FunctionInvocations); {
	case n == 0:
		return f, apierr.Validation("FunctionInvocations needs at least one invocation", apierr.Item{Item: "FunctionInvocations", Description: "empty"})
	case n > unit.MaxInvocations:
		return f, apierr.Validation(fmt.Sprintf("FunctionInvocations holds more than %d invocations", unit.MaxInvocations),
			apierr.Item{Item: "FunctionInvocations", Description: "too many"})
	}
	for i := range f.FunctionInvocations {
		inv := &f.FunctionInvocations[i]
		if inv.Arguments == nil {
			inv.Arguments = []function.Argument{}
		}
	}
	params, err := function.CheckParameters(f.Parameters)
	if err != nil {
		return f, err
	}
	f.Parameters = params
	return f, function.CheckTemplate(f.ToolchainType, f.FunctionInvocations, f.Parameters)
}

// Check keeps the Triggers that run an Invocation able to run it when it changes: the same
// ToolchainType, functions of the kind the Trigger needs, and the Trigger's Params still fitting.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Invocation, f Fields) (Fields, error) {
	if cur == nil {
		return f, nil
	}
	id := cur.ID
	triggers, err := tx.Q.TriggersRunningInvocation(ctx, db.TriggersRunningInvocationParams{OrganizationID: sc.OrganizationID, InvocationID: id})
	if err != nil {
		return f, err
	}
	for _, t := range triggers {
		var params map[string]any
		if err := json.Unmarshal(t.Params, &params); err != nil {
			return f, err
		}
		if err := FitsTrigger(f, t.ToolchainType, t.Validating, params); err != nil {
			return f, apierr.Validation(fmt.Sprintf("Trigger %s runs this Invocation and could not after this change: %s", t.Slug, apierr.MessageOf(err)),
				apierr.Item{Item: "FunctionInvocations", Description: "Trigger " + t.Slug + " could not run it"})
		}
	}
	return f, nil
}

// FitsTrigger checks that a Trigger of toolchain (validating or mutating) can run an Invocation with
// params: the same ToolchainType, functions all of the Trigger's kind, params its Parameters accept
// (expanding within the bound), and the functions taking the filled arguments.
func FitsTrigger(f Fields, toolchain string, validating bool, params map[string]any) error {
	if f.ToolchainType != toolchain {
		return apierr.Validation(fmt.Sprintf("the Invocation is for %s, the Trigger for %s", f.ToolchainType, toolchain),
			apierr.Item{Item: "ToolchainType", Description: "differs"})
	}
	k := KindOf(f.ToolchainType, f.FunctionInvocations)
	switch {
	case validating && !k.Validating, !validating && !k.Mutating:
		return apierr.Validation("a Trigger's Invocation has only validating functions or only mutating ones",
			apierr.Item{Item: "FunctionInvocations", Description: "mixed or reading functions"})
	}
	invs, err := function.Expand(f.FunctionInvocations, f.Parameters, params, "Params", function.NewBudget())
	if err != nil {
		return err
	}
	for i, inv := range invs {
		if _, err := function.Bind(toolchain, inv, fmt.Sprintf("FunctionInvocations.%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// definitionHash is the lowercase hex SHA-256 of what an Invocation does, stored as Hash.
func definitionHash(f Fields) string {
	def, _ := json.Marshal([]any{f.ToolchainType, f.FunctionInvocations, f.Parameters})
	sum := sha256.Sum256(def)
	return hex.EncodeToString(sum[:])
}

func fromRow(r *db.Invocation) (Invocation, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, nil)
	i := Invocation{Object: entity.Object{ID: r.InvocationID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, Hash: r.Hash,
		Fields: Fields{Common: c, ToolchainType: r.ToolchainType}}
	if err != nil {
		return i, err
	}
	if err := json.Unmarshal(r.FunctionInvocations, &i.FunctionInvocations); err != nil {
		return i, err
	}
	return i, json.Unmarshal(r.Parameters, &i.Parameters)
}

// ListEntity is how Invocations are listed (indexes: migration 000025).
var ListEntity = listquery.Standard{Table: "invocation", ID: "InvocationID", InSpace: true}.Define(&listquery.Entity{
	Name: EntityType,
	Attributes: []listquery.Attribute{
		{Name: "ToolchainType", Type: listquery.String, SQL: "invocation.toolchain_type", Filterable: true, Orderable: true},
		{Name: "Hash", Type: listquery.String, SQL: "invocation.hash", Filterable: true, Orderable: true},
		listquery.After("UpdatedAt"),
		{Name: "FunctionInvocations", Type: listquery.Opaque}, {Name: "Parameters", Type: listquery.Opaque},
		{Name: "BridgeWorkerID", Type: listquery.Opaque},
	},
})

func insertParams(sc authz.Scope, spaceID, id uuid.UUID, f Fields) db.InvocationInsertParams {
	k := KindOf(f.ToolchainType, f.FunctionInvocations)
	return db.InvocationInsertParams{InvocationID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug,
		DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), ToolchainType: f.ToolchainType,
		FunctionInvocations: store.EncodeJSON(f.FunctionInvocations), Parameters: store.EncodeJSON(f.Parameters),
		Mutating: k.Mutating, Validating: k.Validating, Hash: definitionHash(f)}
}

// Family declares Invocations to the entity kit: an Invocation lives in a Space and carries no
// Permissions (the role and the Space's grants decide). One a Trigger runs cannot be deleted (409) nor
// changed so that the Trigger could not run it (400).
var Family = entity.Declare(&entity.Family[db.Invocation, Invocation, Fields]{
	Type: EntityType, Event: "invocation", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Invocation, error) {
		return q.InvocationInsert(ctx, insertParams(sc, spaceID, id, f))
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Invocation, f Fields) (*db.Invocation, error) {
		p := insertParams(sc, cur.SpaceID, cur.ID, f)
		return q.InvocationUpdate(ctx, db.InvocationUpdateParams{OrganizationID: p.OrganizationID, InvocationID: p.InvocationID,
			Version: cur.Version, Slug: p.Slug, DisplayName: p.DisplayName, Labels: p.Labels, Annotations: p.Annotations,
			DeleteGates: p.DeleteGates, ToolchainType: p.ToolchainType, FunctionInvocations: p.FunctionInvocations,
			Parameters: p.Parameters, Mutating: p.Mutating, Validating: p.Validating, Hash: p.Hash})
	},
	FromRow: fromRow,
})

type strategy struct{}
