package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/unit"
)

func (h unitAPI) ListExtendedMutations(ctx context.Context, r api.ListExtendedMutationsRequestObject) (api.ListExtendedMutationsResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.Units.ListMutations(ctx, sc, r.SpaceId, r.UnitId, requestPath(ctx), listParams(ctx, r.Params))
	if err != nil {
		return nil, err
	}
	out, err := h.extendMutations(ctx, sc, page.Items, page.Includes)
	if err != nil {
		return nil, err
	}
	return newPage(out, unit.MutationEntityType, page.PageInfo), nil
}

// extendMutations fills what include asks for, one query per family. Upstream merges and Links are not
// served yet: MergeSource and Link stay null.
func (h unitAPI) extendMutations(ctx context.Context, sc authz.Scope, ms []unit.Mutation, includes map[string]bool) ([]api.ExtendedMutation, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	var unitIDs, revIDs, spaceIDs, triggerIDs, invocationIDs []uuid.UUID
	for _, m := range ms {
		unitIDs, revIDs, spaceIDs = append(unitIDs, m.UnitID), append(revIDs, m.RevisionID), append(spaceIDs, m.SpaceID)
		if m.TriggerID != nil && includes["TriggerID"] {
			triggerIDs = append(triggerIDs, *m.TriggerID)
		}
		if m.InvocationID != nil && includes["InvocationID"] {
			invocationIDs = append(invocationIDs, *m.InvocationID)
		}
	}
	triggers, err := h.s.deps.Triggers.LoadByIDs(ctx, sc, triggerIDs)
	if err != nil {
		return nil, err
	}
	invocations, err := h.s.deps.Invocations.LoadByIDs(ctx, sc, invocationIDs)
	if err != nil {
		return nil, err
	}
	units := map[uuid.UUID]unit.Unit{}
	if includes["UnitID"] {
		if units, err = h.s.deps.Units.UnitsByID(ctx, sc, unitIDs); err != nil {
			return nil, err
		}
	}
	revs := map[uuid.UUID]unit.Revision{}
	if includes["RevisionID"] {
		if revs, err = h.s.deps.Units.RevisionsByID(ctx, sc, revIDs); err != nil {
			return nil, err
		}
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], spaceIDs)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedMutation, len(ms))
	for i, m := range ms {
		e := api.ExtendedMutation{Mutation: mutationToAPI(m), Organization: org}
		if u, ok := units[m.UnitID]; ok {
			a := unitToAPI(u)
			e.Unit = &a
		}
		if rv, ok := revs[m.RevisionID]; ok {
			a := revisionToAPI(rv)
			e.Revision = &a
		}
		if sp, ok := spaces[m.SpaceID]; ok {
			e.Space = &sp
		}
		if m.TriggerID != nil {
			if t, ok := triggers[*m.TriggerID]; ok {
				a := triggerToAPI(t)
				e.Trigger = &a
			}
		}
		if m.InvocationID != nil {
			if inv, ok := invocations[*m.InvocationID]; ok {
				a := invocationToAPI(inv)
				e.Invocation = &a
			}
		}
		out[i] = e
	}
	return out, nil
}

func (h unitAPI) GetExtendedMutation(ctx context.Context, r api.GetExtendedMutationRequestObject) (api.GetExtendedMutationResponseObject, error) {
	sc := scopeOf(ctx)
	fields, includes, err := listquery.Projection(unit.MutationList, deref(r.Params.Select), deref(r.Params.Include))
	if err != nil {
		return nil, err
	}
	m, err := h.s.deps.Units.GetMutation(ctx, sc, r.SpaceId, r.UnitId, r.MutationId)
	if err != nil {
		return nil, err
	}
	ext, err := h.extendMutations(ctx, sc, []unit.Mutation{m}, includes)
	if err != nil {
		return nil, err
	}
	return itemResponse{item: ext[0], entityField: unit.MutationEntityType, fields: fields}, nil
}
