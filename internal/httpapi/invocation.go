package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/invocation"
	"github.com/hubd/hubd/internal/listquery"
)

// invocationAPI serves the Invocation operations.
type invocationAPI struct{ *base }

func invocationToAPI(i invocation.Invocation) api.Invocation {
	return api.Invocation{InvocationID: i.ID, SpaceID: i.SpaceID, OrganizationID: i.OrganizationID, Slug: i.Slug,
		DisplayName: i.DisplayName, Labels: i.Labels, Annotations: i.Annotations, DeleteGates: i.DeleteGates,
		ToolchainType: api.ToolchainType(i.ToolchainType), FunctionInvocations: functionInvocationsToAPI(i.FunctionInvocations),
		Parameters: parametersToAPI(i.Parameters), BridgeWorkerID: i.BridgeWorkerID, Hash: i.Hash, HiddenReason: i.HiddenReason,
		EntityType: invocation.EntityType, CreatedAt: i.CreatedAt.UTC(), UpdatedAt: i.UpdatedAt.UTC(), Version: i.Version}
}

func invocationFields(b *api.Invocation) invocation.Fields {
	return invocation.Fields{Slug: b.Slug, DisplayName: b.DisplayName, ToolchainType: string(b.ToolchainType),
		FunctionInvocations: functionInvocationsFromAPI(b.FunctionInvocations), Parameters: parametersFromAPI(b.Parameters),
		BridgeWorkerID: b.BridgeWorkerID, Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}
}

func (h invocationAPI) ListAllInvocations(ctx context.Context, r api.ListAllInvocationsRequestObject) (api.ListAllInvocationsResponseObject, error) {
	return h.listInvocations(ctx, scopeOf(ctx), nil, listParams(ctx, r.Params))
}

func (h invocationAPI) ListInvocations(ctx context.Context, r api.ListInvocationsRequestObject) (api.ListInvocationsResponseObject, error) {
	return h.listInvocations(ctx, scopeOf(ctx), &r.SpaceId, listParams(ctx, r.Params))
}

func (h invocationAPI) listInvocations(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Invocations.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, invocation.EntityType, h.extendInvocations)
}

func (h invocationAPI) extendInvocations(ctx context.Context, sc authz.Scope, is []invocation.Invocation, includes map[string]bool) ([]api.ExtendedInvocation, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	spaceIDs := make([]uuid.UUID, len(is))
	for i, inv := range is {
		spaceIDs[i] = inv.SpaceID
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], spaceIDs)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedInvocation, len(is))
	for i, inv := range is {
		e := api.ExtendedInvocation{Invocation: invocationToAPI(inv), Organization: org}
		if sp, ok := spaces[inv.SpaceID]; ok {
			e.Space = &sp
		}
		out[i] = e
	}
	return out, nil
}

func (h invocationAPI) GetInvocation(ctx context.Context, r api.GetInvocationRequestObject) (api.GetInvocationResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, invocation.ListEntity, r.Params.Select, r.Params.Include, func() (invocation.Invocation, error) {
		return h.s.deps.Invocations.Get(ctx, sc, r.SpaceId, r.InvocationId.String())
	}, h.extendInvocations)
}

func (h invocationAPI) CreateInvocation(ctx context.Context, r api.CreateInvocationRequestObject) (api.CreateInvocationResponseObject, error) {
	sc := scopeOf(ctx)
	i, err := h.s.deps.Invocations.Create(ctx, sc, r.SpaceId, invocationFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateInvocation200JSONResponse{Body: invocationToAPI(i)}, nil
}

func (h invocationAPI) UpdateInvocation(ctx context.Context, r api.UpdateInvocationRequestObject) (api.UpdateInvocationResponseObject, error) {
	sc := scopeOf(ctx)
	i, err := h.s.deps.Invocations.Update(ctx, sc, r.SpaceId, r.InvocationId.String(), r.Body.Version, invocationFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateInvocation200JSONResponse{Body: invocationToAPI(i)}, nil
}

func (h invocationAPI) PatchInvocation(ctx context.Context, r api.PatchInvocationRequestObject) (api.PatchInvocationResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	i, err := h.s.deps.Invocations.Patch(ctx, sc, r.SpaceId, r.InvocationId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchInvocation200JSONResponse{Body: invocationToAPI(i)}, nil
}

func (h invocationAPI) DeleteInvocation(ctx context.Context, r api.DeleteInvocationRequestObject) (api.DeleteInvocationResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Invocations.Delete(ctx, sc, r.SpaceId, r.InvocationId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteInvocation200JSONResponse{Body: deleted(invocation.EntityType)}, nil
}

func (h invocationAPI) BulkPatchInvocations(ctx context.Context, r api.BulkPatchInvocationsRequestObject) (api.BulkPatchInvocationsResponseObject, error) {
	return answeredInBulk(patchedInBulk[invocation.Invocation](ctx, h.s.deps.Invocations, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, invocationWriteItem))
}

func (h invocationAPI) BulkDeleteInvocations(ctx context.Context, r api.BulkDeleteInvocationsRequestObject) (api.BulkDeleteInvocationsResponseObject, error) {
	return answeredInBulk(deletedInBulk[invocation.Invocation](ctx, h.s.deps.Invocations, invocation.EntityType, r.Params, r.Params.DryRun))
}

func (h invocationAPI) BulkCreateInvocations(ctx context.Context, r api.BulkCreateInvocationsRequestObject) (api.BulkCreateInvocationsResponseObject, error) {
	return answeredInBulk(clonedInBulk[invocation.Invocation](ctx, h.s, h.s.deps.Invocations, r.Params, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, invocationWriteItem))
}

// invocationWriteItem is one item of a bulk write of Invocations: the Invocation written, or why not.
func invocationWriteItem(it entity.BulkItem[invocation.Invocation], e *api.ResponseError) api.InvocationCreateOrUpdateResponse {
	if e != nil {
		return api.InvocationCreateOrUpdateResponse{Error: e}
	}
	written := invocationToAPI(it.Value)
	return api.InvocationCreateOrUpdateResponse{Invocation: &written}
}
