package httpapi

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/promote"
)

// filterDefinition resolves a Filter ID a ChangeOrder or a promotion names (one the caller may view).
func (s *Server) filterDefinition(ctx context.Context, sc authz.Scope, id uuid.UUID, field string) (*listquery.FilterDefinition, error) {
	f, err := s.visibleFilter(ctx, sc, id.String(), field, uuid.Nil)
	if err != nil {
		return nil, err
	}
	def := filter.Definition(f)
	return &def, nil
}

// Promote takes a change into the next Spaces (internal/promote); a refusal by gates is its own 409 answer.
func (h *handlers) Promote(ctx context.Context, r api.PromoteRequestObject) (api.PromoteResponseObject, error) {
	b := r.Body
	if b == nil {
		return nil, apierr.UserInput("a PromoteRequest body is required")
	}
	sc := scopeOf(ctx)
	req := promote.Request{ChangeOrderID: b.ChangeOrderID, ChangeSetID: b.ChangeSetID, TargetStage: b.TargetStage, WhereSpace: b.WhereSpace,
		ChangeDescription: b.ChangeDescription, Force: b.Force, ForceReason: b.ForceReason, ExpectedPlan: b.ExpectedPlan,
		DryRun: flag(r.Params.DryRun), UserAgent: userAgent(ctx)}
	if b.SpaceFilterID != nil {
		def, err := h.s.filterDefinition(ctx, sc, *b.SpaceFilterID, "SpaceFilterID")
		if err != nil {
			return nil, err
		}
		req.SpaceFilter = def
	}
	res, err := h.s.promoter.Promote(ctx, sc, req)
	var refusal *promote.Refusal
	if errors.As(err, &refusal) {
		out := promoteResultToAPI(refusal.Result)
		e := refusal.APIError()
		return api.Promote409JSONResponse{Body: api.PromoteRefusal{Error: responseError(e), Message: e.Summary(),
			ChangeOrderID: out.ChangeOrderID, Complete: out.Complete, DryRun: out.DryRun, Plan: out.Plan, Spaces: out.Spaces,
			Stage: out.Stage, Stages: out.Stages}}, nil
	}
	if e := apierr.From(err); err != nil && e.Type == apierr.TypeConflict {
		// A ChangeOrder whose State refuses the promotion: the same 409 body, with nothing evaluated.
		return api.Promote409JSONResponse{Body: api.PromoteRefusal{Error: responseError(e), Message: e.Summary(),
			ChangeOrderID: b.ChangeOrderID, DryRun: req.DryRun, Spaces: []api.PromoteSpaceResult{}, Stages: []api.PromoteStageResult{}}}, nil
	}
	if err != nil {
		return nil, err
	}
	out := promoteResultToAPI(res)
	if !res.Complete {
		return api.Promote207JSONResponse{Body: out}, nil
	}
	return api.Promote200JSONResponse{Body: out}, nil
}

func promoteResultToAPI(r promote.Result) api.PromoteResult {
	out := api.PromoteResult{ChangeOrderID: r.ChangeOrderID, Complete: r.Complete, DryRun: r.DryRun, Plan: r.Plan, Stage: r.Stage,
		Spaces: make([]api.PromoteSpaceResult, len(r.Spaces)), Stages: make([]api.PromoteStageResult, len(r.Stages))}
	for i, s := range r.Spaces {
		sp := api.PromoteSpaceResult{SpaceID: s.SpaceID, SpaceSlug: s.SpaceSlug, Stage: s.Stage, Action: api.PromoteSpaceResultAction(s.Action),
			Reason: s.Reason, UpstreamSpaceID: s.UpstreamSpaceID, UpstreamSpaceSlug: s.UpstreamSpaceSlug, PreviewedAgainstCurrentUpstream: true,
			Units: make([]api.PromoteUnitResult, len(s.Units)), Links: make([]api.PromoteLinkResult, len(s.Links)), Error: errorOrNil(s.Err)}
		for j, u := range s.Units {
			var conflicts []api.MutationConflict
			if u.UnitID != nil {
				conflicts = conflictsToAPI(*u.UnitID, u.Conflicts)
			} else {
				conflicts = []api.MutationConflict{}
			}
			sp.Units[j] = api.PromoteUnitResult{UnitID: u.UnitID, Slug: u.Slug, UpstreamUnitID: u.UpstreamUnitID, Action: api.PromoteUnitResultAction(u.Action),
				Reason: u.Reason, PreviousHeadRevisionNum: u.PreviousHeadRevisionNum, HeadRevisionNum: u.HeadRevisionNum,
				UpstreamRevisionNum: u.UpstreamRevisionNum, Conflicts: conflicts, Error: errorOrNil(u.Err)}
		}
		for j, l := range s.Links {
			sp.Links[j] = api.PromoteLinkResult{LinkID: l.LinkID, UpstreamLinkID: l.UpstreamLinkID, Slug: l.Slug, FromUnitSlug: l.FromUnitSlug,
				ToUnitSlug: l.ToUnitSlug, ToSpaceSlug: l.ToSpaceSlug, Action: api.PromoteLinkResultAction(l.Action), Reason: l.Reason, Error: errorOrNil(l.Err)}
		}
		out.Spaces[i] = sp
	}
	for i, st := range r.Stages {
		gates := make([]api.PromoteGateResult, len(st.Gates))
		for j, g := range st.Gates {
			gates[j] = api.PromoteGateResult{Prerequisite: g.Prerequisite, Satisfied: g.Satisfied, Message: g.Message, SpaceID: g.SpaceID, SpaceSlug: g.SpaceSlug}
		}
		out.Stages[i] = api.PromoteStageResult{Name: st.Name, PreviousStage: st.PreviousStage, Chosen: st.Chosen, Forced: st.Forced, Gates: gates}
	}
	return out
}

// errorOrNil is err as a ResponseError, nil when there is none.
func errorOrNil(err error) *api.ResponseError {
	if err == nil {
		return nil
	}
	re := responseError(apierr.From(err))
	return &re
}
