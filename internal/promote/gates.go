package promote

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/attestation"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/changeworkflow"
	"github.com/hubd/hubd/internal/component"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// evaluateGates evaluates the chosen Stage's Prerequisites (or the Final ones) in each of its gate
// Spaces: the previous Stage's, or for the first Stage and the Final step, the target Spaces.
func (e *Engine) evaluateGates(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, req Request, targets []db.Space) error {
	if p.spec == nil {
		p.result.Stages = []StageResult{}
		return nil
	}
	st := StageResult{Name: p.result.Stage, Chosen: true, Gates: []GateResult{}}
	var prereqs []string
	gateSpaces := targets
	switch {
	case p.stageIdx == len(p.spec.Stages):
		st.PreviousStage = p.spec.Stages[len(p.spec.Stages)-1].Name
		if p.spec.Final != nil {
			prereqs = p.spec.Final.Prerequisites
		}
	default:
		prereqs = p.spec.Stages[p.stageIdx].Prerequisites
		if p.stageIdx > 0 {
			st.PreviousStage = p.spec.Stages[p.stageIdx-1].Name
			gateSpaces = p.prev
		}
	}
	if len(prereqs) > 0 {
		programs := map[string]changeworkflow.Program{}
		for _, c := range p.spec.CustomPrerequisites {
			if slices.Contains(prereqs, c.Name) {
				prg, err := changeworkflow.CompileExpression(c.Expression)
				if err != nil {
					return err
				}
				programs[c.Name] = prg
			}
		}
		for _, s := range gateSpaces {
			gates, err := e.gatesIn(ctx, sc, tx, p, s, prereqs, programs)
			if err != nil {
				return err
			}
			st.Gates = append(st.Gates, gates...)
		}
		if len(gateSpaces) == 0 {
			for _, name := range prereqs {
				st.Gates = append(st.Gates, GateResult{Prerequisite: name, Message: "no Space of the Stage " + st.PreviousStage + " is in the ChangeOrder's scope"})
			}
		}
	}
	for _, g := range st.Gates {
		if !g.Satisfied {
			p.failing = append(p.failing, g)
		}
	}
	p.result.Stages = []StageResult{st}
	return nil
}

// gateFacts are what the gates read of one Space's covered Units.
type gateFacts struct {
	units        []unit.Unit
	heads        map[uuid.UUID]unit.Revision
	attestations map[uuid.UUID][]db.AttestationsAboutRevisionsRow // by Revision
	releases     map[uuid.UUID][]db.ReleasesHoldingRevisionsRow   // by Revision
	applies      map[uuid.UUID]string
	approvers    map[uuid.UUID][]uuid.UUID // by Revision (attestation.ApprovalsOf)
}

func (e *Engine) factsIn(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, s db.Space, prereqs []string) (*gateFacts, error) {
	units, err := e.Units.SelectIn(ctx, sc, tx, s.SpaceID, p.covered)
	if err != nil {
		return nil, err
	}
	f := &gateFacts{units: units, attestations: map[uuid.UUID][]db.AttestationsAboutRevisionsRow{}, releases: map[uuid.UUID][]db.ReleasesHoldingRevisionsRow{}}
	if f.heads, err = unit.HeadRevisions(ctx, tx.Q, sc.OrganizationID, units); err != nil {
		return nil, err
	}
	revs := make([]uuid.UUID, 0, len(f.heads))
	unitIDs := make([]uuid.UUID, len(units))
	for i, u := range units {
		unitIDs[i] = u.ID
		if r, ok := f.heads[u.ID]; ok {
			revs = append(revs, r.ID)
		}
	}
	if len(revs) > 0 {
		atts, err := tx.Q.AttestationsAboutRevisions(ctx, db.AttestationsAboutRevisionsParams{OrganizationID: sc.OrganizationID, RevisionIDs: revs})
		if err != nil {
			return nil, err
		}
		for _, a := range atts {
			for _, r := range a.RevisionIDs {
				f.attestations[r] = append(f.attestations[r], *a)
			}
		}
		rels, err := tx.Q.ReleasesHoldingRevisions(ctx, db.ReleasesHoldingRevisionsParams{OrganizationID: sc.OrganizationID, SpaceID: s.SpaceID, RevisionIDs: revs})
		if err != nil {
			return nil, err
		}
		for _, r := range rels {
			for _, id := range r.RevisionIDs {
				f.releases[id] = append(f.releases[id], *r)
			}
		}
	}
	if f.applies, err = unit.LatestApplies(ctx, tx.Q, sc.OrganizationID, unitIDs); err != nil {
		return nil, err
	}
	if slices.Contains(prereqs, changeworkflow.Approved) {
		if f.approvers, err = attestation.ApprovalsOf(ctx, tx.Q, sc.OrganizationID, revs); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// gatesIn evaluates each prerequisite in one Space.
func (e *Engine) gatesIn(ctx context.Context, sc authz.Scope, tx *store.Tx, p *planned, s db.Space, prereqs []string, programs map[string]changeworkflow.Program) ([]GateResult, error) {
	f, err := e.factsIn(ctx, sc, tx, p, s, prereqs)
	if err != nil {
		return nil, err
	}
	out := make([]GateResult, 0, len(prereqs))
	for _, name := range prereqs {
		g := GateResult{Prerequisite: name, SpaceID: s.SpaceID, SpaceSlug: s.Slug}
		var bad []string
		switch name {
		case changeworkflow.Promoted:
			if p.stageIdx == 0 || p.co != nil && slices.Contains(p.co.ResolvedSpaceIDs, s.SpaceID) {
				g.Satisfied, g.Message = true, "the ChangeOrder was promoted into "+s.Slug
			} else {
				g.Message = "the ChangeOrder has not been promoted into " + s.Slug + " (Stage " + previousName(p) + ")"
			}
			out = append(out, g)
			continue
		case changeworkflow.Validated:
			bad = f.each(func(u unit.Unit, r *unit.Revision) string {
				if r == nil {
					return ""
				}
				if len(r.ValidationErrors) > 0 {
					return "has ValidationErrors"
				}
				for _, id := range r.ValidationTriggerIDs {
					if !r.ValidationPassed[id.String()] {
						return "a validation did not pass"
					}
				}
				return ""
			})
		case changeworkflow.Released:
			bad = f.each(func(u unit.Unit, r *unit.Revision) string {
				if r == nil {
					return ""
				}
				for _, rel := range f.releases[r.ID] {
					if rel.Published {
						return ""
					}
				}
				return fmt.Sprintf("its Revision %d is in no published Release", r.RevisionNum)
			})
		case changeworkflow.Healthy:
			bad = f.each(func(u unit.Unit, r *unit.Revision) string {
				if u.TargetID == nil {
					return ""
				}
				switch st := f.applies[u.ID]; st {
				case unit.StatusCompleted:
					return ""
				case "":
					return "was never applied"
				default:
					return "its latest apply is " + st
				}
			})
		case changeworkflow.Approved:
			bad = f.each(func(u unit.Unit, r *unit.Revision) string {
				if r == nil {
					return ""
				}
				for _, user := range f.approvers[r.ID] {
					if user != r.UserID {
						return ""
					}
				}
				return fmt.Sprintf("its Revision %d is not approved by anyone but its author", r.RevisionNum)
			})
		default:
			prg, ok := programs[name]
			if !ok {
				return nil, apierr.Validation(fmt.Sprintf("the workflow's prerequisite %q is neither built in nor one of its CustomPrerequisites", name))
			}
			bad = f.each(func(u unit.Unit, r *unit.Revision) string {
				ok, err := prg.Eval(celVars(s, u, r, f, p.co))
				if err != nil {
					return err.Error()
				}
				if !ok {
					return "is false"
				}
				return ""
			})
		}
		g.Satisfied = len(bad) == 0
		if g.Satisfied {
			g.Message = fmt.Sprintf("holds for the %d covered Units of %s", len(f.units), s.Slug)
		} else {
			g.Message = name + ": " + strings.Join(bad, "; ")
		}
		out = append(out, g)
	}
	return out, nil
}

func previousName(p *planned) string {
	if p.stageIdx > 0 && p.stageIdx <= len(p.spec.Stages) {
		return p.spec.Stages[p.stageIdx-1].Name
	}
	return ""
}

// maxNamed bounds how many Units a gate's message names.
const maxNamed = 10

// each applies check to every covered Unit (with its head Revision, nil when it has none) and returns
// "<slug> <problem>" for those it finds a problem with (at most maxNamed, then a count).
func (f *gateFacts) each(check func(u unit.Unit, r *unit.Revision) string) []string {
	var out []string
	n := 0
	for _, u := range f.units {
		var rev *unit.Revision
		if r, ok := f.heads[u.ID]; ok {
			rev = &r
		}
		if msg := check(u, rev); msg != "" {
			n++
			if len(out) < maxNamed {
				out = append(out, u.Slug+" "+msg)
			}
		}
	}
	if n > maxNamed {
		out = append(out, fmt.Sprintf("and %d more Units", n-maxNamed))
	}
	return out
}

// celVars are the variables a custom prerequisite sees for one Unit.
func celVars(s db.Space, u unit.Unit, r *unit.Revision, f *gateFacts, co *changeorder.ChangeOrder) changeworkflow.Vars {
	v := changeworkflow.Vars{
		Space: map[string]any{"SpaceID": s.SpaceID.String(), "Slug": s.Slug, "Labels": jsonMap(s.Labels), "Annotations": jsonMap(s.Annotations),
			"ComponentID": uuidOrNil(s.ComponentID)},
		Unit: map[string]any{"UnitID": u.ID.String(), "Slug": u.Slug, "Labels": u.Labels, "Annotations": u.Annotations,
			"HeadRevisionNum": u.HeadRevisionNum, "UpstreamUnitID": uuidOrNil(u.UpstreamUnitID)},
		Revision:     map[string]any{},
		Attestations: []map[string]any{},
		Releases:     []map[string]any{},
		ChangeOrder:  map[string]any{},
	}
	if r != nil {
		errs := []any{}
		for id := range r.ValidationErrors {
			errs = append(errs, id)
		}
		passed := len(r.ValidationErrors) == 0
		for _, id := range r.ValidationTriggerIDs {
			if !r.ValidationPassed[id.String()] {
				passed = false
			}
		}
		v.Revision = map[string]any{"RevisionID": r.ID.String(), "RevisionNum": r.RevisionNum, "DataHash": r.DataHash,
			"Description": r.Description, "UserID": r.UserID.String(), "ChangeSetID": uuidOrNil(r.ChangeSetID),
			"ValidationPassed": passed, "ValidationErrors": errs}
		for _, a := range f.attestations[r.ID] {
			v.Attestations = append(v.Attestations, map[string]any{"Type": a.Type, "Result": a.Result, "UserID": a.UserID.String(), "CreatedAt": a.CreatedAt})
		}
		for _, rel := range f.releases[r.ID] {
			v.Releases = append(v.Releases, map[string]any{"ReleaseID": rel.ReleaseID.String(), "ReleaseNum": rel.ReleaseNum,
				"Published": rel.Published, "Digest": rel.Digest})
		}
	}
	if co != nil {
		v.ChangeOrder = map[string]any{"ChangeOrderID": co.ID.String(), "Slug": co.Slug, "Labels": co.Labels, "Parameters": co.Parameters}
	}
	return v
}

// checkComponents refuses (422) target Spaces that are Variants of a Component whose workflow policy the
// promotion breaks: a Component that requires a workflow and a promotion without one, or a workflow the
// Component does not allow.
func checkComponents(ctx context.Context, q *db.Queries, sc authz.Scope, p *planned, targets []db.Space) error {
	ids := make([]uuid.UUID, len(targets))
	slugs := map[uuid.UUID]string{}
	for i, t := range targets {
		ids[i] = t.SpaceID
		slugs[t.SpaceID] = t.Slug
	}
	if len(ids) == 0 {
		return nil
	}
	policies, err := component.PolicyForSpaces(ctx, q, sc.OrganizationID, ids)
	if err != nil {
		return err
	}
	var workflow *uuid.UUID
	if p.co != nil && p.spec != nil {
		workflow = p.co.ChangeWorkflowID
	}
	var items []apierr.Item
	for _, id := range ids {
		pol, ok := policies[id]
		if !ok {
			continue
		}
		if ok, why := pol.Allows(workflow); !ok {
			items = append(items, apierr.Item{Item: slugs[id], Description: why})
		}
	}
	if len(items) == 0 {
		return nil
	}
	e := apierr.Unprocessable("the promotion breaks the ChangeWorkflow policy of the Components of %d target Spaces: promote them with a ChangeOrder whose ChangeWorkflow their Component allows", len(items))
	e.Items = items
	return e
}
