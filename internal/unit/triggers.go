package unit

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// MaxTriggerCalls bounds the function calls one data write runs through the Triggers of its Unit's Space
// (a Trigger running an Invocation counts each of its functions). It is set once at start (hubd serve's
// --max-trigger-calls); a write over it is refused before any Trigger runs.
var MaxTriggerCalls = 1000

// Trigger events: Mutation runs on every new Revision of a matching Unit, PostClone on the first
// Revision of a clone (before the Mutation Triggers).
const (
	TriggerEventMutation  = "Mutation"
	TriggerEventPostClone = "PostClone"
)

// triggerInForce is a Trigger as a data write reads it: its row, as the write's one read returns the
// enabled Triggers of the Unit's Space and ToolchainType (by Slug, the order they run in).
type triggerInForce struct {
	ID            uuid.UUID              `json:"trigger_id"`
	Slug          string                 `json:"slug"`
	Event         string                 `json:"event"`
	FunctionName  string                 `json:"function_name"`
	Arguments     []function.Argument    `json:"arguments"`
	WhereResource string                 `json:"where_resource"`
	Guards        map[string]string      `json:"guards"`
	Clearance     []function.Requirement `json:"clearance"`
	Protect       bool                   `json:"protect"`
	WhereUnit     string                 `json:"where_unit"`
	UnitFilterID  *uuid.UUID             `json:"unit_filter_id"`
	Validating    bool                   `json:"validating"`
	Warn          bool                   `json:"warn"`
	Params        map[string]any         `json:"params"`
	// UnitFilter is the Filter UnitFilterID names, as the list of the Trigger's selection applies it.
	UnitFilter *struct {
		Hash          string `json:"hash"`
		From          string `json:"from_type"`
		Where         string `json:"where_expr"`
		WhereData     string `json:"where_data"`
		ResourceType  string `json:"resource_type"`
		IncludeHidden string `json:"include_hidden"`
	} `json:"unit_filter"`
	// Invocation is the stored Invocation the Trigger runs instead of FunctionName, if any.
	Invocation *StoredInvocation `json:"invocation"`
}

// StoredInvocation is what a Trigger needs of the stored Invocation it runs.
type StoredInvocation struct {
	ID                  uuid.UUID             `json:"invocation_id"`
	FunctionInvocations []function.Invocation `json:"function_invocations"`
	Parameters          []function.Parameter  `json:"parameters"`
}

// TriggerRun is what a Trigger runs: its own call, or the Invocation it names filled with its Params;
// each with the Trigger's Guards added, and its Clearance where the call has none.
type TriggerRun struct {
	TriggerID  uuid.UUID
	Call       function.Invocation // FunctionName, Arguments and WhereResource
	Invocation *StoredInvocation
	Params     map[string]any
	Guards     map[string]string
	Clearance  []function.Requirement
}

// Invocations are the calls the Trigger runs and the Origin their Mutations record, its Invocation's
// expansion spending budget; field names the Params in errors.
func (r TriggerRun) Invocations(field string, budget *function.Budget) ([]function.Invocation, Origin, error) {
	id := r.TriggerID
	origin := Origin{TriggerID: &id}
	invs := []function.Invocation{r.Call}
	if r.Invocation != nil {
		invID := r.Invocation.ID
		origin.InvocationID, origin.Params = &invID, r.Params
		var err error
		if invs, err = function.Expand(r.Invocation.FunctionInvocations, r.Invocation.Parameters, r.Params, field, budget); err != nil {
			return nil, origin, err
		}
	}
	out := make([]function.Invocation, len(invs))
	for i, inv := range invs {
		inv.Guards = mergeGuards(inv.Guards, r.Guards)
		if len(inv.Clearance) == 0 {
			inv.Clearance = r.Clearance
		}
		out[i] = inv
	}
	return out, origin, nil
}

// calls binds what the Trigger runs (TriggerRun) for the ToolchainType, its expansion spending budget.
func (t triggerInForce) calls(toolchain string, budget *function.Budget) ([]*function.Call, Origin, error) {
	run := TriggerRun{TriggerID: t.ID, Call: function.Invocation{FunctionName: t.FunctionName, Arguments: t.Arguments, WhereResource: t.WhereResource},
		Invocation: t.Invocation, Params: t.Params, Guards: t.Guards, Clearance: t.Clearance}
	invs, origin, err := run.Invocations("Params", budget)
	if err != nil {
		return nil, origin, triggerFailed(t, err)
	}
	calls := make([]*function.Call, len(invs))
	for i, inv := range invs {
		c, err := function.Bind(toolchain, inv, "")
		if err != nil {
			return nil, origin, triggerFailed(t, err)
		}
		calls[i] = c
	}
	return calls, origin, nil
}

// ForgetTriggerFindings takes a Trigger's findings off the Units of its Space (a Trigger deleted or
// disabled holds no Unit back): each Unit it had run on gets a new Version and a unit.updated event.
func ForgetTriggerFindings(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID, triggerID uuid.UUID) error {
	rows, err := tx.Q.UnitForgetTriggerFindings(ctx, db.UnitForgetTriggerFindingsParams{OrganizationID: sc.OrganizationID,
		SpaceID: spaceID, TriggerID: triggerID.String()})
	if err != nil || len(rows) == 0 {
		return err
	}
	sp, err := tx.Q.SpaceGetByID(ctx, db.SpaceGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID})
	if err != nil {
		return err
	}
	for _, r := range rows {
		u, err := fromRow(r)
		if err != nil {
			return err
		}
		tx.Emit(u.changeEvent(entity.Updated, sp.Slug))
	}
	return nil
}

// Findings are what the Triggers found on a Revision's data, by TriggerID: failed validations are
// ValidationErrors (the Unit's ApplyGates) or, for Warn Triggers, ValidationWarnings (its
// ApplyWarnings); ValidationPassed (Revisions only) are those that passed. ValidationTriggerIDs and
// ValueTriggerIDs are the validating and mutating Triggers that ran.
type Findings struct {
	ValidationErrors, ValidationWarnings, ValidationPassed map[string]bool
	ValidationTriggerIDs, ValueTriggerIDs                  []uuid.UUID
}

func newFindings() Findings {
	return Findings{ValidationErrors: map[string]bool{}, ValidationWarnings: map[string]bool{}, ValidationPassed: map[string]bool{},
		ValidationTriggerIDs: []uuid.UUID{}, ValueTriggerIDs: []uuid.UUID{}}
}

// decodeFindings reads stored findings (passed is nil for a Unit).
func decodeFindings(errors, warnings, passed, validationIDs, valueIDs json.RawMessage) (Findings, error) {
	f := newFindings()
	return f, decodeColumns(column{errors, &f.ValidationErrors}, column{warnings, &f.ValidationWarnings}, column{passed, &f.ValidationPassed},
		column{validationIDs, &f.ValidationTriggerIDs}, column{valueIDs, &f.ValueTriggerIDs})
}

// column is a JSON column read into a field (left as it is when the column was not read).
type column struct {
	raw json.RawMessage
	to  any
}

func decodeColumns(cols ...column) error {
	for _, c := range cols {
		if len(c.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(c.raw, c.to); err != nil {
			return err
		}
	}
	return nil
}

// triggered is a data change after its Triggers ran: the data, its path model, the steps that made it
// and the path annotations (when a mutating Trigger stamped guards).
type triggered struct {
	data     []byte
	doc      *configdata.Document
	steps    []functionStep
	notes    []PathAnnotation
	findings Findings
}

// runTriggers runs the Triggers in force for a change of the locked Unit: the mutating ones (each a
// further Mutation of the Revision, holding to the Unit's guards like any function), then the
// validating ones over the result.
func (s *Service) runTriggers(ctx context.Context, tx *store.Tx, row *db.Unit, wc writeContext, data []byte, doc *configdata.Document, change dataChange) (triggered, error) {
	out := triggered{data: data, doc: doc, steps: change.steps, notes: change.annotations, findings: newFindings()}
	all, err := store.DecodeJSON[[]triggerInForce](wc.triggers)
	if err != nil || len(all) == 0 {
		return out, err
	}
	var mutating, validating []triggerInForce
	for _, event := range triggerEvents(change.source) {
		for _, t := range all {
			if t.Event != event {
				continue
			}
			selected, err := s.triggerSelects(ctx, tx, row, t)
			if err != nil {
				return out, err
			}
			if !selected {
				continue
			}
			if t.Validating {
				validating = append(validating, t)
			} else {
				mutating = append(mutating, t)
			}
		}
	}
	if len(mutating) == 0 && len(validating) == 0 {
		return out, nil
	}
	if err := checkTriggerWork(mutating, validating); err != nil {
		return out, err
	}
	// The Triggers' expansions of one write share the bound on what templates may expand to.
	budget := function.NewBudget()
	tree, err := configdata.Open(row.ToolchainType, data)
	if err != nil {
		return out, dataError(err)
	}
	if len(mutating) > 0 {
		if err := out.mutate(tree, row, mutating, budget); err != nil {
			return out, err
		}
	}
	for _, t := range validating {
		calls, _, err := t.calls(row.ToolchainType, budget)
		if err != nil {
			return out, err
		}
		passed := true
		for _, c := range calls {
			res, err := c.Run(tree)
			if err != nil {
				return out, triggerFailed(t, err)
			}
			if v, _ := res.(function.Validation); !v.Passed {
				passed = false
			}
		}
		id := t.ID.String()
		out.findings.ValidationTriggerIDs = append(out.findings.ValidationTriggerIDs, t.ID)
		switch {
		case passed:
			out.findings.ValidationPassed[id] = true
		case t.Warn:
			out.findings.ValidationWarnings[id] = true
		default:
			out.findings.ValidationErrors[id] = true
		}
	}
	return out, nil
}

// mutate runs the mutating Triggers on tree and, when they changed it, makes their result the data.
func (out *triggered) mutate(tree *configdata.Tree, row *db.Unit, mutating []triggerInForce, budget *function.Budget) error {
	notes := out.notes
	if notes == nil {
		var err error
		if notes, err = store.DecodeJSON[[]PathAnnotation](row.PathAnnotations); err != nil {
			return err
		}
	}
	guards := annotations(notes)
	doc, err := tree.Document()
	if err != nil {
		return err
	}
	changed := false
	for _, t := range mutating {
		calls, origin, err := t.calls(row.ToolchainType, budget)
		if err != nil {
			return err
		}
		out.findings.ValueTriggerIDs = append(out.findings.ValueTriggerIDs, t.ID)
		for _, c := range calls {
			if _, err := c.Run(tree); err != nil {
				return triggerFailed(t, err)
			}
			w, err := settle(tree, c, doc, guards, c.Clearance, c.Guards, t.Protect)
			if err != nil {
				return err
			}
			guards = w.notes
			if w.notesChanged {
				out.notes = guards.pruned()
			}
			if !w.wrote {
				continue
			}
			if !changed && len(out.steps) == 0 {
				// The change itself is the Revision's first Mutation; each call of a Trigger that changed the data follows.
				out.steps = []functionStep{{doc: out.doc}}
			}
			changed = true
			out.steps = append(out.steps, functionStep{invocation: store.EncodeJSON(c.Invocation), origin: origin, doc: w.after})
			doc = w.after
		}
	}
	if !changed {
		return nil
	}
	data, err := tree.Render()
	if err != nil {
		return apierr.Unprocessable("the Triggers' result cannot be written as %s: %s", row.ToolchainType, err.Error())
	}
	final, err := configdata.Parse(row.ToolchainType, data)
	if err != nil {
		return apierr.Unprocessable("the Triggers' result is not valid %s: %s", row.ToolchainType, err.Error())
	}
	out.data, out.doc = data, final
	return nil
}

// checkTriggerWork refuses a write whose selected Triggers would run more than MaxTriggerCalls calls.
func checkTriggerWork(lists ...[]triggerInForce) error {
	calls := 0
	for _, list := range lists {
		for _, t := range list {
			if t.Invocation != nil {
				calls += len(t.Invocation.FunctionInvocations)
			} else {
				calls++
			}
		}
	}
	if calls > MaxTriggerCalls {
		return apierr.Unprocessable("the Triggers of the Unit's Space would run %d function calls on this write, more than the bound of %d (--max-trigger-calls); disable or narrow some Triggers",
			calls, MaxTriggerCalls)
	}
	return nil
}

// triggerEvents are the events whose Triggers a change of source runs, in order.
func triggerEvents(source string) []string {
	if source == SourceClone {
		return []string{TriggerEventPostClone, TriggerEventMutation}
	}
	return []string{TriggerEventMutation}
}

// triggerSelects reports whether a Trigger's WhereUnit and UnitFilterID select the Unit (as it is when
// the write begins). The selection is the Trigger's, not the writer's: it reads with the system scope.
func (s *Service) triggerSelects(ctx context.Context, tx *store.Tx, row *db.Unit, t triggerInForce) (bool, error) {
	if t.WhereUnit == "" && t.UnitFilterID == nil {
		return true, nil
	}
	params := listquery.Params{Where: t.WhereUnit}
	if t.UnitFilterID != nil && t.UnitFilter != nil {
		f := t.UnitFilter
		params.FilterDefinition = &listquery.FilterDefinition{ID: *t.UnitFilterID, From: f.From, Hash: f.Hash,
			Where: f.Where, WhereData: f.WhereData, ResourceType: f.ResourceType, IncludeHidden: f.IncludeHidden}
	}
	one := 1
	params.Limit = &one
	q := listquery.Query{Entity: ListEntity, Caller: authz.SystemScope(row.OrganizationID, "trigger"), Path: "trigger", Params: params,
		Scope: []listquery.Condition{{Column: "unit.unit_id", Value: row.UnitID}}}
	page, err := listquery.Run[db.Unit](ctx, tx, s.Tokens, q)
	if err != nil {
		return false, apierr.Unprocessable("Trigger %s cannot select Units: %s", t.Slug, err.Error())
	}
	return len(page.Items) > 0, nil
}

// triggerFailed reports a Trigger that could not run: the write is refused (422), naming it.
func triggerFailed(t triggerInForce, err error) error {
	return apierr.Unprocessable("Trigger %s (%s) could not run: %s; fix or disable the Trigger", t.Slug, t.ID, apierr.MessageOf(err))
}

// params are the findings as UnitRecordRevision stores them.
func (f Findings) params() (errors, warnings, passed, validationIDs, valueIDs json.RawMessage) {
	return store.EncodeJSON(f.ValidationErrors), store.EncodeJSON(f.ValidationWarnings), store.EncodeJSON(f.ValidationPassed),
		store.EncodeJSON(f.ValidationTriggerIDs), store.EncodeJSON(f.ValueTriggerIDs)
}
