package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/unit"
)

func (h unitAPI) ListExtendedMutations(ctx context.Context, r api.ListExtendedMutationsRequestObject) (api.ListExtendedMutationsResponseObject, error) {
	params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)
	if err != nil {
		return nil, err
	}
	sc := scopeOf(ctx)
	page, err := h.s.deps.Units.ListMutations(ctx, sc, r.SpaceId, r.UnitId, requestPath(ctx), params)
	return listed(ctx, sc, page, err, unit.MutationEntityType, h.extendMutations)
}

// mutationRelations are what include expands of a Mutation.
var mutationRelations = []relation[unit.Mutation]{
	byID("UnitID", func(m unit.Mutation) []uuid.UUID { return []uuid.UUID{m.UnitID} }, loadUnits),
	byID("RevisionID", func(m unit.Mutation) []uuid.UUID { return []uuid.UUID{m.RevisionID} }, loadRevisions),
	byID("SpaceID", func(m unit.Mutation) []uuid.UUID { return []uuid.UUID{m.SpaceID} }, spaceEdge.load),
	byID("TriggerID", func(m unit.Mutation) []uuid.UUID { return optionalID(m.TriggerID) }, triggerEdge.load),
	byID("InvocationID", func(m unit.Mutation) []uuid.UUID { return optionalID(m.InvocationID) }, invocationEdge.load),
	byID("LinkID", func(m unit.Mutation) []uuid.UUID { return optionalID(m.LinkID) }, linkEdge.load),
	byID("MergeSourceID", func(m unit.Mutation) []uuid.UUID { return optionalID(m.MergeSourceID) }, loadUnits),
}

func (h unitAPI) extendMutations(ctx context.Context, sc authz.Scope, ms []unit.Mutation, includes map[string]bool) ([]api.ExtendedMutation, error) {
	return extendAll(ctx, h.base, sc, ms, includes, mutationRelations, func(m unit.Mutation, r *related) api.ExtendedMutation {
		return api.ExtendedMutation{Mutation: mutationToAPI(m), Organization: r.organization, Unit: relatedOne[api.Unit](r, "UnitID", m.UnitID),
			Revision: relatedOne[api.Revision](r, "RevisionID", m.RevisionID), Space: relatedOne[api.Space](r, "SpaceID", m.SpaceID),
			Trigger:    relatedOptional[api.Trigger](r, "TriggerID", m.TriggerID),
			Invocation: relatedOptional[api.Invocation](r, "InvocationID", m.InvocationID),
			Link:       relatedOptional[api.Link](r, "LinkID", m.LinkID), MergeSource: relatedOptional[api.Unit](r, "MergeSourceID", m.MergeSourceID)}
	})
}

func (h unitAPI) GetExtendedMutation(ctx context.Context, r api.GetExtendedMutationRequestObject) (api.GetExtendedMutationResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, unit.MutationList, r.Params.Select, r.Params.Include, func() (unit.Mutation, error) {
		return h.s.deps.Units.GetMutation(ctx, sc, r.SpaceId, r.UnitId, r.MutationId)
	}, h.extendMutations)
}
