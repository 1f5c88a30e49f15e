// Package promote takes a change into the next Spaces: a ChangeOrder through the Stages of its workflow
// (gates, plans, Tags, progress), or the upstream changes of clones into the Spaces a request names.
//
// A promotion is one transaction. It plans first (the ChangeOrder locked, the Stage chosen, the target
// Spaces and their Units and what each will do, the gates evaluated), refuses when a gate does not hold
// (Refusal: nothing written) or when the caller's ExpectedPlan is not the plan (412), then writes each
// target Space in its own savepoint and records the ChangeOrder's progress. A dry run does it all and
// rolls back.
package promote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/changeworkflow"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/link"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
	"github.com/hubd/hubd/internal/unit"
)

// Actions of a target Space and of a Unit, and the Reasons a Unit is skipped.
const (
	SpacePromote   = "Promote"
	SpaceUnchanged = "Unchanged"
	SpaceSkipped   = "Skipped"
	SpaceFailed    = "Failed"

	UnitUpgrade   = "Upgrade"
	UnitMark      = "Mark"
	UnitClone     = "Clone"
	UnitInvoke    = "Invoke"
	UnitUnchanged = "Unchanged"
	UnitSkip      = "Skip"

	LinkCreate    = "Create"
	LinkUnchanged = "Unchanged"
	LinkOrphaned  = "Orphaned"

	ReasonAlreadyTaken = "AlreadyTaken"
	ReasonNotCovered   = "NotCovered"

	// FinalStage names the step that evaluates a workflow's Final gates and resolves the ChangeOrder.
	FinalStage = "Final"
)

// Request is a promotion's: which change goes where.
type Request struct {
	ChangeOrderID *uuid.UUID
	ChangeSetID   *uuid.UUID
	TargetStage   string
	WhereSpace    string
	// SpaceFilter is the request's SpaceFilterID, resolved by the caller (a Filter it may view).
	SpaceFilter       *listquery.FilterDefinition
	ChangeDescription string
	Force             bool
	ForceReason       string
	ExpectedPlan      string
	DryRun            bool
	UserAgent         string
}

// Result is what a promotion did (or would do).
type Result struct {
	ChangeOrderID *uuid.UUID
	Complete      bool
	DryRun        bool
	Plan          string
	Stage         string
	Spaces        []SpaceResult
	Stages        []StageResult
}

// SpaceResult is one target Space's outcome.
type SpaceResult struct {
	SpaceID           uuid.UUID
	SpaceSlug         string
	Stage             string
	Action            string
	Reason            string
	UpstreamSpaceID   *uuid.UUID
	UpstreamSpaceSlug string
	Units             []UnitResult
	Links             []LinkResult
	Err               error
}

// UnitResult is one Unit's outcome.
type UnitResult struct {
	UnitID                  *uuid.UUID
	Slug                    string
	UpstreamUnitID          *uuid.UUID
	Action                  string
	Reason                  string
	PreviousHeadRevisionNum int64
	HeadRevisionNum         int64
	UpstreamRevisionNum     int64
	Conflicts               []unit.Conflict
	Err                     error
}

// LinkResult is one Link's outcome (a Link of an upstream Unit recreated for its clone).
type LinkResult struct {
	LinkID, UpstreamLinkID                      *uuid.UUID
	Slug, FromUnitSlug, ToUnitSlug, ToSpaceSlug string
	Action, Reason                              string
	Err                                         error
}

// StageResult is the evaluation of one Stage's gates.
type StageResult struct {
	Name, PreviousStage string
	Chosen, Forced      bool
	Gates               []GateResult
}

// GateResult is one gate evaluated in one Space.
type GateResult struct {
	Prerequisite string
	Satisfied    bool
	Message      string
	SpaceID      uuid.UUID
	SpaceSlug    string
}

// Refusal is a promotion refused by gates: 409 with the Result evaluated.
type Refusal struct {
	Result  Result
	Failing []GateResult
}

func (r *Refusal) Error() string { return r.APIError().Message }

// APIError is the refusal as the shared error: Conflict, one Item per failing gate.
func (r *Refusal) APIError() *apierr.Error {
	items := make([]apierr.Item, len(r.Failing))
	msgs := make([]string, len(r.Failing))
	for i, g := range r.Failing {
		items[i] = apierr.Item{Item: g.Prerequisite + "@" + g.SpaceSlug, Description: g.Message}
		msgs[i] = fmt.Sprintf("%s in %s: %s", g.Prerequisite, g.SpaceSlug, g.Message)
	}
	e := apierr.Conflict("the promotion into Stage %q is refused by its gates: %s", r.Result.Stage, strings.Join(msgs, "; "))
	e.Items = items
	return e
}

// Engine runs promotions.
type Engine struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
	Units  *unit.Service
	Links  *entity.Service[db.Link, link.Link, link.Fields]
	// Filter resolves a Filter ID a ChangeOrder names (the caller must be able to view it).
	Filter func(ctx context.Context, sc authz.Scope, id uuid.UUID, field string) (*listquery.FilterDefinition, error)
}

// Promote runs one promotion.
func (e *Engine) Promote(ctx context.Context, sc authz.Scope, req Request) (Result, error) {
	if !sc.ByRole(authz.Edit) && len(sc.SpacesReached(authz.Edit)) == 0 {
		return Result{}, apierr.Forbidden("promoting needs Edit: your role %q does not hold it, and no Permissions grant it to you on a Space", sc.Role)
	}
	if err := listquery.CheckWhere(space.ListEntity, "WhereSpace", req.WhereSpace); err != nil {
		return Result{}, err
	}
	if req.Force && strings.TrimSpace(req.ForceReason) == "" {
		return Result{}, apierr.Validation("Force needs a ForceReason saying why the gates are overridden",
			apierr.Item{Item: "ForceReason", Description: "required with Force"})
	}
	var res Result
	var failures []GateResult
	var coID uuid.UUID
	err := e.Store.WithTx(ctx, store.TxOptions{DryRun: req.DryRun}, func(tx *store.Tx) error {
		failures = nil
		p, err := e.plan(ctx, sc, tx, req)
		if err != nil {
			return err
		}
		res = p.result
		if p.co != nil {
			coID = p.co.ID
		}
		if req.ExpectedPlan != "" && req.ExpectedPlan != res.Plan {
			return apierr.PreconditionFailed("the promotion's plan is %s, not the ExpectedPlan %s: what it would do changed since the preview; preview it again", res.Plan, req.ExpectedPlan)
		}
		if len(p.failing) > 0 {
			if !req.Force {
				failures = p.failing
				res.Spaces = p.plannedSpaces()
				return &Refusal{Result: res, Failing: p.failing}
			}
			if err := authz.Check(sc, authz.Manage, p.co.Target()); err != nil {
				return apierr.Forbidden("forcing a promotion past its gates needs Manage on the ChangeOrder: your role %q does not hold it", sc.Role)
			}
			for i := range res.Stages {
				if res.Stages[i].Chosen {
					res.Stages[i].Forced = true
				}
			}
		}
		if err := e.apply(ctx, sc, tx, p, &res, req); err != nil {
			return err
		}
		return e.record(ctx, sc, tx, p, &res, req)
	})
	if len(failures) > 0 && !req.DryRun {
		e.recordFailures(ctx, sc, coID, res.Stage, failures)
	}
	return res, err
}

// planned is a promotion's plan.
type planned struct {
	co       *changeorder.ChangeOrder
	spec     *changeworkflow.Spec
	stageIdx int // index of the Stage entered; len(Stages) for the Final step; -1 without a workflow
	spaces   []*plannedSpace
	// prev are the Spaces of the Stage before the one entered (its gates are evaluated there); targets
	// the Spaces promoted into (for the Final step, those whose gates resolve the ChangeOrder).
	prev, targets []db.Space
	failing       []GateResult
	result        Result
	covered       listquery.Params
}

type plannedSpace struct {
	row      db.Space
	upstream *db.Space
	units    []plannedUnit
	// links are the Links of the Units cloned into the Space, to recreate for the clones.
	links  []link.Link
	result *SpaceResult
}

type plannedUnit struct {
	action   string
	unit     *unit.Unit // the target Unit (nil for a Clone)
	upstream *unit.Unit
	result   *UnitResult
}

func (e *Engine) plan(ctx context.Context, sc authz.Scope, tx *store.Tx, req Request) (*planned, error) {
	p := &planned{stageIdx: -1}
	if req.ChangeOrderID != nil {
		co, err := changeorder.LockForPromote(ctx, sc, tx, *req.ChangeOrderID)
		if err != nil {
			return nil, err
		}
		p.co = &co
		switch co.State {
		case changeorder.Aborted, changeorder.Restored, changeorder.RestoreReleased:
			return nil, apierr.Conflict("the ChangeOrder is %s: it cannot be promoted", co.State).WithEntity(changeorder.EntityType, co.ID.String(), co.Slug)
		}
		p.spec = co.ChangeWorkflow
		id := co.ID
		p.result.ChangeOrderID = &id
	}
	if err := e.chooseStage(p, req); err != nil {
		return nil, err
	}
	if p.co != nil {
		var err error
		if p.covered, err = e.unitSelection(ctx, sc, p.co); err != nil {
			return nil, err
		}
	}
	targets, err := e.targetSpaces(ctx, sc, tx, p, req)
	if err != nil {
		return nil, err
	}
	if p.spec != nil && p.stageIdx > 0 && p.stageIdx < len(p.spec.Stages) {
		if p.prev, err = e.stageSpaces(ctx, sc, tx, p, p.stageIdx-1); err != nil {
			return nil, err
		}
	}
	p.targets = targets
	if err := checkComponents(ctx, tx.Q, sc, p, targets); err != nil {
		return nil, err
	}
	if p.stageIdx != finalIdx(p) {
		if err := e.planUnits(ctx, sc, tx, p, req, targets); err != nil {
			return nil, err
		}
	}
	if err := e.evaluateGates(ctx, sc, tx, p, req, targets); err != nil {
		return nil, err
	}
	p.result.DryRun = req.DryRun
	p.result.Plan = digest(p)
	return p, nil
}

func finalIdx(p *planned) int {
	if p.spec == nil {
		return -2
	}
	return len(p.spec.Stages)
}

// chooseStage picks the Stage the promotion enters: TargetStage, else the one after the ChangeOrder's
// current Stage; after the last one, the Final step.
func (e *Engine) chooseStage(p *planned, req Request) error {
	if p.spec == nil || len(p.spec.Stages) == 0 {
		p.spec = nil
		if req.TargetStage != "" {
			return apierr.Validation("TargetStage names a Stage, but the promotion has no ChangeOrder with a ChangeWorkflow",
				apierr.Item{Item: "TargetStage", Description: "no workflow"})
		}
		return nil
	}
	current := -1
	if p.co.Stage != nil {
		current = slices.IndexFunc(p.spec.Stages, func(s changeworkflow.Stage) bool { return s.Name == *p.co.Stage })
	}
	switch {
	case req.TargetStage == FinalStage && !slices.ContainsFunc(p.spec.Stages, func(s changeworkflow.Stage) bool { return s.Name == FinalStage }):
		p.stageIdx = len(p.spec.Stages)
	case req.TargetStage != "":
		p.stageIdx = slices.IndexFunc(p.spec.Stages, func(s changeworkflow.Stage) bool { return s.Name == req.TargetStage })
		if p.stageIdx < 0 {
			names := make([]string, len(p.spec.Stages))
			for i, s := range p.spec.Stages {
				names[i] = s.Name
			}
			return apierr.Validation(fmt.Sprintf("TargetStage %q is not a Stage of the ChangeOrder's workflow (%s)", req.TargetStage, strings.Join(names, ", ")),
				apierr.Item{Item: "TargetStage", Description: "no such Stage"})
		}
	default:
		p.stageIdx = current + 1
	}
	if p.stageIdx == len(p.spec.Stages) {
		if current < len(p.spec.Stages)-1 {
			return apierr.Conflict("the ChangeOrder has not entered its last Stage %q: its Final gates cannot be evaluated yet", p.spec.Stages[len(p.spec.Stages)-1].Name).
				WithEntity(changeorder.EntityType, p.co.ID.String(), p.co.Slug)
		}
		if p.co.State == changeorder.Resolved || p.co.State == changeorder.Released {
			return apierr.Conflict("the ChangeOrder is %s: it has taken every Stage of its workflow", p.co.State).
				WithEntity(changeorder.EntityType, p.co.ID.String(), p.co.Slug)
		}
		p.result.Stage = FinalStage
		return nil
	}
	p.result.Stage = p.spec.Stages[p.stageIdx].Name
	return nil
}

// unitSelection is the Units a ChangeOrder covers, as list parameters.
func (e *Engine) unitSelection(ctx context.Context, sc authz.Scope, co *changeorder.ChangeOrder) (listquery.Params, error) {
	sel := listquery.Params{Where: co.WhereUnit}
	if co.UnitFilterID != nil {
		def, err := e.Filter(ctx, sc, *co.UnitFilterID, "UnitFilterID")
		if err != nil {
			return sel, err
		}
		sel.FilterDefinition = def
	}
	return sel, nil
}

// spacesOf selects Spaces by every where and Filter given (their intersection), ordered by Slug.
func (e *Engine) spacesOf(ctx context.Context, sc authz.Scope, tx *store.Tx, wheres []string, filters []*listquery.FilterDefinition, inScope []uuid.UUID) ([]db.Space, error) {
	var ids []uuid.UUID
	selected := false
	narrow := func(got []uuid.UUID) {
		if !selected {
			ids, selected = got, true
			return
		}
		ids = slices.DeleteFunc(ids, func(id uuid.UUID) bool { return !slices.Contains(got, id) })
	}
	for _, w := range wheres {
		if strings.TrimSpace(w) == "" {
			continue
		}
		got, err := space.Select(ctx, tx, e.Tokens, sc, w, nil)
		if err != nil {
			return nil, err
		}
		narrow(got)
	}
	for _, f := range filters {
		if f == nil {
			continue
		}
		got, err := space.Select(ctx, tx, e.Tokens, sc, "", f)
		if err != nil {
			return nil, err
		}
		narrow(got)
	}
	if len(inScope) > 0 {
		if !selected {
			got, err := space.Select(ctx, tx, e.Tokens, sc, "", nil)
			if err != nil {
				return nil, err
			}
			narrow(got)
		}
		narrow(inScope)
	}
	if !selected || len(ids) == 0 {
		return nil, nil
	}
	rows, err := tx.Q.PromoteSpaces(ctx, db.PromoteSpacesParams{OrganizationID: sc.OrganizationID, SpaceIds: ids})
	if err != nil {
		return nil, err
	}
	out := make([]db.Space, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out, nil
}

// scopeOf is the ChangeOrder's own narrowing of Spaces: its WhereSpace, SpaceFilterID and InScopeSpaceIDs.
func (e *Engine) scopeOf(ctx context.Context, sc authz.Scope, co *changeorder.ChangeOrder) ([]string, []*listquery.FilterDefinition, []uuid.UUID, error) {
	if co == nil {
		return nil, nil, nil, nil
	}
	var filters []*listquery.FilterDefinition
	if co.SpaceFilterID != nil {
		def, err := e.Filter(ctx, sc, *co.SpaceFilterID, "SpaceFilterID")
		if err != nil {
			return nil, nil, nil, err
		}
		filters = append(filters, def)
	}
	return []string{co.WhereSpace}, filters, co.InScopeSpaceIDs, nil
}

// stageSpaces are the Spaces of Stage i of the ChangeOrder's workflow (within its scope).
func (e *Engine) stageSpaces(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, i int) ([]db.Space, error) {
	wheres, filters, inScope, err := e.scopeOf(ctx, sc, p.co)
	if err != nil {
		return nil, err
	}
	wheres = append(wheres, p.spec.Stages[i].WhereSpace)
	if strings.TrimSpace(strings.Join(wheres, "")) == "" && len(filters) == 0 && len(inScope) == 0 {
		wheres = append(wheres, "Slug != ''") // a Stage without a selection is every Space the caller may view
	}
	return e.spacesOf(ctx, sc, tx, wheres, filters, inScope)
}

func (e *Engine) targetSpaces(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, req Request) ([]db.Space, error) {
	if p.spec != nil {
		i := p.stageIdx
		if i == len(p.spec.Stages) {
			i-- // the Final step evaluates the last Stage's Spaces
		}
		spaces, err := e.stageSpaces(ctx, sc, tx, p, i)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(req.WhereSpace) == "" && req.SpaceFilter == nil {
			return spaces, nil
		}
		narrowed, err := e.spacesOf(ctx, sc, tx, []string{req.WhereSpace}, []*listquery.FilterDefinition{req.SpaceFilter}, nil)
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(spaces, func(s db.Space) bool {
			return !slices.ContainsFunc(narrowed, func(n db.Space) bool { return n.SpaceID == s.SpaceID })
		}), nil
	}
	wheres, filters, inScope, err := e.scopeOf(ctx, sc, p.co)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.WhereSpace) == "" && req.SpaceFilter == nil && (p.co == nil || strings.TrimSpace(p.co.WhereSpace) == "" && p.co.SpaceFilterID == nil && len(inScope) == 0) {
		return nil, apierr.Validation("name the Spaces to promote into: WhereSpace or SpaceFilterID (or a ChangeOrder with a workflow or a WhereSpace)",
			apierr.Item{Item: "WhereSpace", Description: "required"})
	}
	return e.spacesOf(ctx, sc, tx, append(wheres, req.WhereSpace), append(filters, req.SpaceFilter), inScope)
}

// planUnits decides, for each target Space, what each Unit will do.
func (e *Engine) planUnits(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, req Request, targets []db.Space) error {
	for _, t := range targets {
		ps := &plannedSpace{row: t, result: &SpaceResult{SpaceID: t.SpaceID, SpaceSlug: t.Slug, Stage: p.result.Stage, Units: []UnitResult{}, Links: []LinkResult{}}}
		units, err := e.Units.SelectIn(ctx, sc, tx, t.SpaceID, p.covered)
		if err != nil {
			return err
		}
		upstreamIDs := map[uuid.UUID]bool{}
		for _, u := range units {
			if u.UpstreamUnitID != nil {
				upstreamIDs[*u.UpstreamUnitID] = true
			}
		}
		upstreams, err := e.upstreamUnits(ctx, sc, tx, units)
		if err != nil {
			return err
		}
		// The upstream Space: the one most of the Space's clones were cloned from, else the previous
		// Stage's when it has one Space.
		ps.upstream, err = upstreamSpace(ctx, tx, sc, units)
		if err != nil {
			return err
		}
		if ps.upstream == nil && len(p.prev) == 1 && p.prev[0].SpaceID != t.SpaceID {
			ps.upstream = &p.prev[0]
		}
		var toClone []unit.Unit
		if ps.upstream != nil {
			id := ps.upstream.SpaceID
			ps.result.UpstreamSpaceID, ps.result.UpstreamSpaceSlug = &id, ps.upstream.Slug
		}
		if ps.upstream != nil && (p.co == nil || p.co.UpdateType != changeorder.Invoke) {
			upUnits, err := e.Units.SelectIn(ctx, sc, tx, ps.upstream.SpaceID, p.covered)
			if err != nil {
				return err
			}
			for _, u := range upUnits {
				if !upstreamIDs[u.ID] {
					toClone = append(toClone, u)
				}
			}
		}
		taken, inSet, err := e.unitMarks(ctx, sc, tx, p, req, units, upstreams)
		if err != nil {
			return err
		}
		for i := range units {
			u := &units[i]
			id := u.ID
			r := &UnitResult{UnitID: &id, Slug: u.Slug, UpstreamUnitID: u.UpstreamUnitID, PreviousHeadRevisionNum: u.HeadRevisionNum, HeadRevisionNum: u.HeadRevisionNum}
			pu := plannedUnit{unit: u, result: r}
			var up *unit.Unit
			if u.UpstreamUnitID != nil {
				if x, ok := upstreams[*u.UpstreamUnitID]; ok {
					up = &x
				}
			}
			switch {
			case taken[u.ID]:
				pu.action, r.Reason = UnitSkip, ReasonAlreadyTaken
			case inSet != nil && !inSet[u.ID] && (up == nil || !inSet[up.ID]):
				pu.action, r.Reason = UnitSkip, ReasonNotCovered
			case p.co != nil && p.co.UpdateType == changeorder.Invoke:
				pu.action = UnitInvoke
			case u.UpstreamUnitID == nil:
				pu.action = UnitMark
				if p.co == nil {
					pu.action = UnitUnchanged
				}
			case up == nil:
				pu.action, r.Reason = UnitSkip, ReasonNotCovered
			case up.HeadRevisionNum > u.UpstreamRevisionNum:
				pu.action, pu.upstream = UnitUpgrade, up
				r.UpstreamRevisionNum = up.HeadRevisionNum
			default:
				pu.action, pu.upstream = UnitUnchanged, up
				r.UpstreamRevisionNum = up.HeadRevisionNum
			}
			r.Action = pu.action
			ps.units = append(ps.units, pu)
		}
		for i := range toClone {
			u := &toClone[i]
			if inSet != nil && !inSet[u.ID] {
				continue
			}
			id := u.ID
			r := &UnitResult{Slug: u.Slug, UpstreamUnitID: &id, Action: UnitClone, UpstreamRevisionNum: u.HeadRevisionNum}
			ps.units = append(ps.units, plannedUnit{action: UnitClone, upstream: u, result: r})
		}
		if err := planLinks(ctx, tx, sc, ps); err != nil {
			return err
		}
		ps.result.Action = spaceAction(ps.units)
		p.spaces = append(p.spaces, ps)
	}
	return nil
}

// plannedSpaces are the Spaces as planned (a refused promotion's answer).
func (p *planned) plannedSpaces() []SpaceResult {
	out := make([]SpaceResult, len(p.spaces))
	for i, ps := range p.spaces {
		out[i] = *ps.result
		out[i].Links = slices.Clone(ps.result.Links)
		out[i].Units = make([]UnitResult, len(ps.units))
		for j, u := range ps.units {
			out[i].Units[j] = *u.result
		}
	}
	return out
}

func spaceAction(units []plannedUnit) string {
	action := SpaceUnchanged
	skipped := len(units) > 0
	for _, u := range units {
		if u.action != UnitSkip {
			skipped = false
		}
		if u.action != UnitSkip && u.action != UnitUnchanged {
			action = SpacePromote
		}
	}
	if skipped {
		return SpaceSkipped
	}
	return action
}

// upstreamUnits reads the upstream Units of the clones among units (those the caller may view).
func (e *Engine) upstreamUnits(ctx context.Context, sc authz.Scope, tx *store.Tx, units []unit.Unit) (map[uuid.UUID]unit.Unit, error) {
	var ids []uuid.UUID
	for _, u := range units {
		if u.UpstreamUnitID != nil {
			ids = append(ids, *u.UpstreamUnitID)
		}
	}
	if len(ids) == 0 {
		return map[uuid.UUID]unit.Unit{}, nil
	}
	return e.Units.UnitsByIDIn(ctx, sc, tx, ids)
}

// upstreamSpace is the Space most of the clones among units were cloned from (nil when none is).
func upstreamSpace(ctx context.Context, tx *store.Tx, sc authz.Scope, units []unit.Unit) (*db.Space, error) {
	counts := map[uuid.UUID]int{}
	var best uuid.UUID
	for _, u := range units {
		if u.UpstreamSpaceID == nil {
			continue
		}
		id := *u.UpstreamSpaceID
		counts[id]++
		if counts[id] > counts[best] || counts[id] == counts[best] && id.String() < best.String() {
			best = id
		}
	}
	if best == uuid.Nil {
		return nil, nil
	}
	row, _, err := space.VisibleParent(ctx, sc, tx.Q, best)
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil, nil
	}
	return row, err
}

// unitMarks reads which Units already took the ChangeOrder (its end Tag) and, with a ChangeSetID, which
// Units (target or upstream) recorded Revisions in that ChangeSet (nil without one).
func (e *Engine) unitMarks(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, req Request, units []unit.Unit, upstreams map[uuid.UUID]unit.Unit) (map[uuid.UUID]bool, map[uuid.UUID]bool, error) {
	ids := make([]uuid.UUID, 0, len(units)+len(upstreams))
	for _, u := range units {
		ids = append(ids, u.ID)
	}
	taken := map[uuid.UUID]bool{}
	var err error
	if p.co != nil && p.co.EndTagID != nil && len(ids) > 0 {
		if taken, err = unit.CarryingTag(ctx, tx.Q, sc.OrganizationID, *p.co.EndTagID, ids); err != nil {
			return nil, nil, err
		}
	}
	if req.ChangeSetID == nil {
		return taken, nil, nil
	}
	for id := range upstreams {
		ids = append(ids, id)
	}
	inSet, err := unit.RecordedInChangeSet(ctx, tx.Q, sc.OrganizationID, *req.ChangeSetID, ids)
	return taken, inSet, err
}

// digest is the Plan: a SHA-256 of what the promotion does, in a canonical order.
func digest(p *planned) string {
	type unitPlan struct {
		Slug     string
		UnitID   *uuid.UUID
		Upstream *uuid.UUID
		Action   string
		Reason   string
		From     int64
		Take     int64
	}
	type spacePlan struct {
		SpaceID  uuid.UUID
		Upstream *uuid.UUID
		Units    []unitPlan
	}
	type gatePlan struct {
		Prerequisite string
		SpaceID      uuid.UUID
		Satisfied    bool
	}
	doc := struct {
		ChangeOrderID *uuid.UUID
		Version       int64
		Stage         string
		Spaces        []spacePlan
		Gates         []gatePlan
	}{ChangeOrderID: p.result.ChangeOrderID, Stage: p.result.Stage, Spaces: []spacePlan{}, Gates: []gatePlan{}}
	if p.co != nil {
		doc.Version = p.co.Version
	}
	for _, s := range p.spaces {
		sp := spacePlan{SpaceID: s.row.SpaceID, Upstream: s.result.UpstreamSpaceID, Units: []unitPlan{}}
		for _, u := range s.units {
			sp.Units = append(sp.Units, unitPlan{Slug: u.result.Slug, UnitID: u.result.UnitID, Upstream: u.result.UpstreamUnitID,
				Action: u.action, Reason: u.result.Reason, From: u.result.PreviousHeadRevisionNum, Take: u.result.UpstreamRevisionNum})
		}
		doc.Spaces = append(doc.Spaces, sp)
	}
	for _, st := range p.result.Stages {
		for _, g := range st.Gates {
			doc.Gates = append(doc.Gates, gatePlan{Prerequisite: g.Prerequisite, SpaceID: g.SpaceID, Satisfied: g.Satisfied})
		}
	}
	b, _ := json.Marshal(doc)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// apply writes each planned Space in its own savepoint.
func (e *Engine) apply(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, res *Result, req Request) error {
	res.Complete = true
	for _, ps := range p.spaces {
		err := tx.Savepoint(ctx, func(sp *store.Tx) error { return e.applySpace(ctx, sc, sp, p, ps, req) })
		if err != nil {
			ae := apierr.From(err)
			if ae.Type == apierr.TypeUnexpected || ae.Type == apierr.TypeGatewayTimeout || ae.Type == apierr.TypeServiceUnavailable {
				return err
			}
			ps.result.Action, ps.result.Err = SpaceFailed, ae
			res.Complete = false
		}
	}
	res.Spaces = p.plannedSpaces()
	return nil
}

func (e *Engine) applySpace(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, ps *plannedSpace, req Request) error {
	desc := req.ChangeDescription
	if desc == "" {
		switch {
		case p.co != nil && p.result.Stage != "":
			desc = fmt.Sprintf("Promoted ChangeOrder %s into Stage %s", p.co.Slug, p.result.Stage)
		case p.co != nil:
			desc = "Promoted ChangeOrder " + p.co.Slug
		default:
			desc = "Promoted from " + ps.result.UpstreamSpaceSlug
		}
	}
	var starts, ends []uuid.UUID
	var invoke *unit.InvokeRequest
	for _, pu := range ps.units {
		r := pu.result
		if pu.unit != nil && pu.unit.HeadRevisionID != nil && pu.action != UnitSkip {
			starts = append(starts, *pu.unit.HeadRevisionID)
		}
		var head *uuid.UUID
		switch pu.action {
		case UnitSkip:
			continue
		case UnitUpgrade:
			w, err := e.Units.UpgradeFromUpstream(ctx, sc, tx, pu.unit.SpaceID, pu.unit.ID, desc)
			if err != nil {
				r.Err = err
				return unitError(err, pu)
			}
			head, r.HeadRevisionNum, r.Conflicts = w.Unit.HeadRevisionID, w.Unit.HeadRevisionNum, w.Conflicts
		case UnitClone:
			c, err := e.Units.CloneInto(ctx, sc, tx, entity.Ref{ID: pu.upstream.ID, SpaceID: pu.upstream.SpaceID, Slug: pu.upstream.Slug}, ps.row.SpaceID)
			if err != nil {
				r.Err = err
				return unitError(err, pu)
			}
			id := c.ID
			r.UnitID, head, r.HeadRevisionNum = &id, c.HeadRevisionID, c.HeadRevisionNum
		case UnitInvoke:
			if invoke == nil {
				ir, err := e.invokeRequest(ctx, sc, tx, p.co, desc, req.UserAgent)
				if err != nil {
					return err
				}
				invoke = &ir
			}
			out, err := e.Units.InvokeOn(ctx, sc, tx, entity.Ref{ID: pu.unit.ID, SpaceID: pu.unit.SpaceID, Slug: pu.unit.Slug}, *invoke)
			if err != nil {
				r.Err = err
				return unitError(err, pu)
			}
			head, r.HeadRevisionNum = out.Unit.HeadRevisionID, out.Unit.HeadRevisionNum
		default: // Mark, Unchanged: the head as it is
			if err := authz.Check(sc, authz.Edit, pu.unit.Target()); err != nil && p.co != nil {
				r.Err = err
				return unitError(err, pu)
			}
			head = pu.unit.HeadRevisionID
		}
		if head != nil {
			ends = append(ends, *head)
		}
	}
	if err := e.recreateLinks(ctx, sc, tx, ps); err != nil {
		return err
	}
	if p.co == nil {
		return nil
	}
	for _, t := range []struct {
		id        *uuid.UUID
		revisions []uuid.UUID
	}{{p.co.StartTagID, starts}, {p.co.EndTagID, ends}} {
		if t.id == nil {
			continue
		}
		if _, err := tag.PutOnRevisions(ctx, tx.Q, sc, *t.id, t.revisions); err != nil {
			return err
		}
	}
	return nil
}

// unitError names the Unit in a Space's failure.
func unitError(err error, pu plannedUnit) error {
	e := apierr.From(err)
	if e.EntityID == "" {
		id := ""
		if pu.result.UnitID != nil {
			id = pu.result.UnitID.String()
		}
		e = e.WithEntity(unit.EntityType, id, pu.result.Slug)
	}
	return e
}

// record moves the ChangeOrder on: its Stage, State, ResolvedSpaceIDs, SkippedUnits and overrides, and
// emits changeorder.promoted.
func (e *Engine) record(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, res *Result, req Request) error {
	if p.co == nil {
		return nil
	}
	co := p.co
	prog := progressOf(*co)
	var promoted []uuid.UUID
	for _, s := range res.Spaces {
		if s.Action == SpaceFailed {
			continue
		}
		promoted = append(promoted, s.SpaceID)
		if !slices.Contains(prog.ResolvedSpaceIDs, s.SpaceID) {
			prog.ResolvedSpaceIDs = append(prog.ResolvedSpaceIDs, s.SpaceID)
		}
		for _, u := range s.Units {
			if u.Action == UnitSkip && u.UnitID != nil {
				prog.SkippedUnits[*u.UnitID] = u.Reason
			}
		}
	}
	switch {
	case p.spec == nil:
		prog.State = changeorder.Resolved
	case p.stageIdx == len(p.spec.Stages):
		prog.State = changeorder.Resolved
		for _, t := range p.targets {
			promoted = append(promoted, t.SpaceID)
		}
	default:
		name := p.spec.Stages[p.stageIdx].Name
		prog.Stage = &name
		prog.State = changeorder.InProgress
		if p.stageIdx == len(p.spec.Stages)-1 && (p.spec.Final == nil || len(p.spec.Final.Prerequisites) == 0) {
			prog.State = changeorder.Resolved
		}
	}
	if !res.Complete && prog.State == changeorder.Resolved {
		prog.State = changeorder.InProgress
	}
	for _, st := range res.Stages {
		if !st.Forced {
			continue
		}
		var names []string
		for _, g := range st.Gates {
			if !g.Satisfied && !slices.Contains(names, g.Prerequisite) {
				names = append(names, g.Prerequisite)
			}
		}
		prog.PromotionOverrides = append(prog.PromotionOverrides, changeorder.PromotionOverride{Stage: st.Name, Prerequisites: names,
			Reason: req.ForceReason, UserID: sc.Principal.UserID, CreatedAt: time.Now().UTC()})
	}
	updated, err := changeorder.SetProgress(ctx, tx, sc.OrganizationID, co.ID, prog)
	if err != nil {
		return err
	}
	sort.Slice(promoted, func(i, j int) bool { return promoted[i].String() < promoted[j].String() })
	tx.Emit(promotedEvent(updated, res.Stage, promoted))
	return nil
}

// recordFailures keeps a refused promotion's failing gates on the ChangeOrder (PromotionFailures), in a
// transaction of its own: the refused one wrote nothing. A failure to record is not the caller's: it is
// logged by the store and the refusal answered.
func (e *Engine) recordFailures(ctx context.Context, sc authz.Scope, coID uuid.UUID, stage string, failing []GateResult) {
	_ = e.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		co, err := changeorder.LockForPromote(ctx, sc, tx, coID)
		if err != nil {
			return err
		}
		prog := progressOf(co)
		now := time.Now().UTC()
		for _, g := range failing {
			prog.PromotionFailures = append(prog.PromotionFailures, changeorder.PromotionFailure{Stage: stage, SpaceID: g.SpaceID,
				Prerequisite: g.Prerequisite, Message: g.Message, CreatedAt: now})
		}
		if n := len(prog.PromotionFailures); n > maxFailures {
			prog.PromotionFailures = prog.PromotionFailures[n-maxFailures:]
		}
		_, err = changeorder.SetProgress(ctx, tx, sc.OrganizationID, coID, prog)
		return err
	})
}

// maxFailures bounds the PromotionFailures a ChangeOrder keeps (the latest).
const maxFailures = 100

// progressOf is the ChangeOrder's progress as it stands, for a promotion to move on.
func progressOf(co changeorder.ChangeOrder) changeorder.Progress {
	skipped := make(map[uuid.UUID]string, len(co.SkippedUnits))
	for id, r := range co.SkippedUnits {
		skipped[id] = r
	}
	return changeorder.Progress{State: co.State, Stage: co.Stage, ResolvedSpaceIDs: slices.Clone(co.ResolvedSpaceIDs),
		RestoredSpaceIDs: slices.Clone(co.RestoredSpaceIDs), SkippedUnits: skipped, PromotionOverrides: slices.Clone(co.PromotionOverrides),
		PromotionFailures: slices.Clone(co.PromotionFailures), RestoreTagID: co.RestoreTagID}
}

// PromotedPayload is the payload of changeorder.promoted: the ChangeOrder, the Stage it entered ("" without
// a workflow, "Final" when it was resolved) and the Spaces promoted.
type PromotedPayload struct {
	EntityType    string
	EntityID      uuid.UUID
	ChangeOrderID uuid.UUID
	Slug          string
	SpaceID       uuid.UUID
	Stage         string
	State         string
	SpaceIDs      []uuid.UUID
}

func promotedEvent(co changeorder.ChangeOrder, stage string, spaceIDs []uuid.UUID) event.Event {
	if spaceIDs == nil {
		spaceIDs = []uuid.UUID{}
	}
	id := co.SpaceID
	return event.Event{OrganizationID: co.OrganizationID, EventType: "changeorder.promoted", SpaceID: &id,
		SubjectEntityType: changeorder.EntityType, SubjectEntityID: co.ID,
		Payload: PromotedPayload{EntityType: changeorder.EntityType, EntityID: co.ID, ChangeOrderID: co.ID, Slug: co.Slug, SpaceID: co.SpaceID,
			Stage: stage, State: co.State, SpaceIDs: spaceIDs}}
}

// planLinks reads, in one query, the Links of the Units a Space will get clones of.
func planLinks(ctx context.Context, tx *store.Tx, sc authz.Scope, ps *plannedSpace) error {
	slugs := map[uuid.UUID]string{}
	var ids []uuid.UUID
	for _, pu := range ps.units {
		if pu.action == UnitClone {
			ids = append(ids, pu.upstream.ID)
			slugs[pu.upstream.ID] = pu.upstream.Slug
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := tx.Q.PromoteLinksFromUnits(ctx, db.PromoteLinksFromUnitsParams{OrganizationID: sc.OrganizationID, UnitIds: ids})
	if err != nil {
		return err
	}
	for _, row := range rows {
		l, err := link.Family.FromRow(row)
		if err != nil {
			return err
		}
		ps.links = append(ps.links, l)
		ps.result.Links = append(ps.result.Links, LinkResult{UpstreamLinkID: &l.ID, Slug: l.Slug, FromUnitSlug: slugs[l.FromUnitID], Action: LinkCreate})
	}
	return nil
}

// recreateLinks gives the Units cloned into a Space the Links of their upstream Units: each reads the
// target Space's counterpart of its upstream's To Unit (the Unit cloned from it), or the same To Unit when
// that lives outside the upstream Space. A Link with no counterpart is Orphaned; one whose Slug the clone
// already has is Unchanged.
func (e *Engine) recreateLinks(ctx context.Context, sc authz.Scope, tx *store.Tx, ps *plannedSpace) error {
	if len(ps.links) == 0 {
		return nil
	}
	counterpart := map[uuid.UUID]uuid.UUID{}
	slugs := map[uuid.UUID]string{}
	for _, pu := range ps.units {
		if pu.result.UnitID == nil || pu.result.UpstreamUnitID == nil {
			continue
		}
		counterpart[*pu.result.UpstreamUnitID] = *pu.result.UnitID
		slugs[*pu.result.UnitID] = pu.result.Slug
	}
	for i, l := range ps.links {
		r := &ps.result.Links[i]
		from, ok := counterpart[l.FromUnitID]
		if !ok {
			r.Action, r.Reason = LinkOrphaned, "its From Unit was not cloned"
			continue
		}
		to, inSpace := counterpart[l.ToUnitID]
		switch {
		case inSpace:
			r.ToUnitSlug, r.ToSpaceSlug = slugs[to], ps.row.Slug
		case ps.upstream != nil && l.ToSpaceID == ps.upstream.SpaceID:
			r.Action, r.Reason = LinkOrphaned, "the Space has no counterpart of its To Unit"
			continue
		default:
			to = l.ToUnitID // a Unit outside the upstream Space, shared by both
		}
		f := l.Fields
		f.FromUnitID, f.ToUnitID = from, to
		created, err := e.Links.CreateIn(ctx, sc, tx, ps.row.SpaceID, f)
		if apierr.Is(err, apierr.TypeAlreadyExists) {
			r.Action = LinkUnchanged
			continue
		}
		if err != nil {
			r.Err = err
			return err
		}
		id := created.ID
		r.LinkID = &id
		if _, err := tx.Q.LinkSetUpstream(ctx, db.LinkSetUpstreamParams{OrganizationID: sc.OrganizationID, LinkID: id, UpstreamLinkID: &l.ID}); err != nil {
			return err
		}
	}
	return nil
}
