package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/trigger"
)

// triggerAPI serves the Trigger operations.
type triggerAPI struct{ *base }

func triggerToAPI(t trigger.Trigger) api.Trigger {
	return api.Trigger{TriggerID: t.ID, SpaceID: t.SpaceID, OrganizationID: t.OrganizationID, Slug: t.Slug, DisplayName: t.DisplayName,
		Description: t.Description, Labels: t.Labels, Annotations: t.Annotations, DeleteGates: t.DeleteGates, Event: t.Event,
		ToolchainType: api.ToolchainType(t.ToolchainType), FunctionName: t.FunctionName, Arguments: argumentsToAPI(t.Arguments), WhereResource: t.WhereResource,
		Guards: t.Guards, Clearance: clearanceToAPI(t.Clearance), Protect: t.Protect, Params: t.Params, OtherDataSource: t.OtherDataSource,
		FailOpenAfter: t.FailOpenAfter, WhereUnit: t.WhereUnit, UnitFilterID: t.UnitFilterID, InvocationID: t.InvocationID,
		BridgeWorkerID: t.BridgeWorkerID, Validating: t.Validating(), Warn: t.Warn, Disabled: t.Disabled, Hash: t.Hash,
		HiddenReason: t.HiddenReason, EntityType: trigger.EntityType, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(), Version: t.Version}
}

func triggerFields(b *api.Trigger) trigger.Fields {
	return trigger.Fields{Slug: b.Slug, DisplayName: b.DisplayName, Description: b.Description, Event: b.Event,
		ToolchainType: string(b.ToolchainType), FunctionName: b.FunctionName, Arguments: argumentsFromAPI(b.Arguments), WhereResource: b.WhereResource,
		Guards: b.Guards, Clearance: clearanceFromAPI(b.Clearance), Protect: b.Protect, Params: b.Params, OtherDataSource: b.OtherDataSource,
		FailOpenAfter: b.FailOpenAfter, WhereUnit: b.WhereUnit, UnitFilterID: b.UnitFilterID, InvocationID: b.InvocationID,
		BridgeWorkerID: b.BridgeWorkerID, Warn: b.Warn, Disabled: b.Disabled,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}
}

func clearanceToAPI(c []function.Requirement) api.Clearance {
	out := make(api.Clearance, len(c))
	for i, r := range c {
		out[i].Key, out[i].Operator, out[i].Values = r.Key, api.ClearanceOperator(r.Operator), r.Values
		if out[i].Values == nil {
			out[i].Values = []string{}
		}
	}
	return out
}

func clearanceFromAPI(c api.Clearance) []function.Requirement {
	out := make([]function.Requirement, len(c))
	for i, r := range c {
		out[i] = function.Requirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values}
	}
	return out
}

func (h triggerAPI) ListAllTriggers(ctx context.Context, r api.ListAllTriggersRequestObject) (api.ListAllTriggersResponseObject, error) {
	return h.listTriggers(ctx, scopeOf(ctx), nil, listParams(ctx, r.Params))
}

func (h triggerAPI) ListTriggers(ctx context.Context, r api.ListTriggersRequestObject) (api.ListTriggersResponseObject, error) {
	return h.listTriggers(ctx, scopeOf(ctx), &r.SpaceId, listParams(ctx, r.Params))
}

func (h triggerAPI) listTriggers(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Triggers.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, trigger.EntityType, h.extendTriggers)
}

func (h triggerAPI) extendTriggers(ctx context.Context, sc authz.Scope, ts []trigger.Trigger, includes map[string]bool) ([]api.ExtendedTrigger, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	spaceIDs := make([]uuid.UUID, len(ts))
	var filterIDs, invocationIDs []uuid.UUID
	for i, t := range ts {
		spaceIDs[i] = t.SpaceID
		if t.UnitFilterID != nil && includes["UnitFilterID"] {
			filterIDs = append(filterIDs, *t.UnitFilterID)
		}
		if t.InvocationID != nil && includes["InvocationID"] {
			invocationIDs = append(invocationIDs, *t.InvocationID)
		}
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], spaceIDs)
	if err != nil {
		return nil, err
	}
	filters, err := h.s.deps.Filters.LoadByIDs(ctx, sc, filterIDs)
	if err != nil {
		return nil, err
	}
	invocations, err := h.s.deps.Invocations.LoadByIDs(ctx, sc, invocationIDs)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedTrigger, len(ts))
	for i, t := range ts {
		e := api.ExtendedTrigger{Trigger: triggerToAPI(t), Organization: org}
		if sp, ok := spaces[t.SpaceID]; ok {
			e.Space = &sp
		}
		if t.UnitFilterID != nil {
			if f, ok := filters[*t.UnitFilterID]; ok {
				wire := filterToAPI(f)
				e.UnitFilter = &wire
			}
		}
		if t.InvocationID != nil {
			if inv, ok := invocations[*t.InvocationID]; ok {
				wire := invocationToAPI(inv)
				e.Invocation = &wire
			}
		}
		out[i] = e
	}
	return out, nil
}

func (h triggerAPI) GetTrigger(ctx context.Context, r api.GetTriggerRequestObject) (api.GetTriggerResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, trigger.ListEntity, r.Params.Select, r.Params.Include, func() (trigger.Trigger, error) {
		return h.s.deps.Triggers.Get(ctx, sc, r.SpaceId, r.TriggerId.String())
	}, h.extendTriggers)
}

func (h triggerAPI) CreateTrigger(ctx context.Context, r api.CreateTriggerRequestObject) (api.CreateTriggerResponseObject, error) {
	sc := scopeOf(ctx)
	t, err := h.s.deps.Triggers.Create(ctx, sc, r.SpaceId, triggerFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateTrigger200JSONResponse{Body: triggerToAPI(t)}, nil
}

func (h triggerAPI) UpdateTrigger(ctx context.Context, r api.UpdateTriggerRequestObject) (api.UpdateTriggerResponseObject, error) {
	sc := scopeOf(ctx)
	t, err := h.s.deps.Triggers.Update(ctx, sc, r.SpaceId, r.TriggerId.String(), r.Body.Version, triggerFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateTrigger200JSONResponse{Body: triggerToAPI(t)}, nil
}

func (h triggerAPI) PatchTrigger(ctx context.Context, r api.PatchTriggerRequestObject) (api.PatchTriggerResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	t, err := h.s.deps.Triggers.Patch(ctx, sc, r.SpaceId, r.TriggerId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchTrigger200JSONResponse{Body: triggerToAPI(t)}, nil
}

func (h triggerAPI) DeleteTrigger(ctx context.Context, r api.DeleteTriggerRequestObject) (api.DeleteTriggerResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Triggers.Delete(ctx, sc, r.SpaceId, r.TriggerId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteTrigger200JSONResponse{Body: deleted(trigger.EntityType)}, nil
}

func (h triggerAPI) BulkPatchTriggers(ctx context.Context, r api.BulkPatchTriggersRequestObject) (api.BulkPatchTriggersResponseObject, error) {
	return answeredInBulk(patchedInBulk[trigger.Trigger](ctx, h.s.deps.Triggers, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, triggerWriteItem))
}

func (h triggerAPI) BulkDeleteTriggers(ctx context.Context, r api.BulkDeleteTriggersRequestObject) (api.BulkDeleteTriggersResponseObject, error) {
	return answeredInBulk(deletedInBulk[trigger.Trigger](ctx, h.s.deps.Triggers, trigger.EntityType, r.Params, r.Params.DryRun))
}

func (h triggerAPI) BulkCreateTriggers(ctx context.Context, r api.BulkCreateTriggersRequestObject) (api.BulkCreateTriggersResponseObject, error) {
	return answeredInBulk(clonedInBulk[trigger.Trigger](ctx, h.s, h.s.deps.Triggers, r.Params, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, triggerWriteItem))
}

// triggerWriteItem is one item of a bulk write of Triggers: the Trigger written, or why not.
func triggerWriteItem(it entity.BulkItem[trigger.Trigger], e *api.ResponseError) api.TriggerCreateOrUpdateResponse {
	if e != nil {
		return api.TriggerCreateOrUpdateResponse{Error: e}
	}
	written := triggerToAPI(it.Value)
	return api.TriggerCreateOrUpdateResponse{Trigger: &written}
}
