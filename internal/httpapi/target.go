package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/target"
)

// targetAPI serves the Target operations.
type targetAPI struct{ *base }

func (h targetAPI) ListAllTargets(ctx context.Context, r api.ListAllTargetsRequestObject) (api.ListAllTargetsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listTargets(ctx, sc, nil, listParams(ctx, r.Params))
}

func (h targetAPI) ListTargets(ctx context.Context, r api.ListTargetsRequestObject) (api.ListTargetsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listTargets(ctx, sc, &r.SpaceId, listParams(ctx, r.Params))
}

func (h targetAPI) listTargets(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Targets.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, target.EntityType, h.extendTargets)
}

func (h targetAPI) extendTargets(ctx context.Context, sc authz.Scope, ts []target.Target, includes map[string]bool) ([]api.ExtendedTarget, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(ts))
	for i, t := range ts {
		ids[i] = t.SpaceID
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], ids)
	if err != nil {
		return nil, err
	}
	workers := map[uuid.UUID]api.BridgeWorker{}
	if includes["BridgeWorkerID"] {
		var ids []uuid.UUID
		for _, t := range ts {
			if t.BridgeWorkerID != nil {
				ids = append(ids, *t.BridgeWorkerID)
			}
		}
		found, err := h.s.deps.BridgeWorkers.LoadByIDs(ctx, sc, ids)
		if err != nil {
			return nil, err
		}
		for id, w := range found {
			workers[id] = bridgeWorkerToAPI(w)
		}
	}
	out := make([]api.ExtendedTarget, len(ts))
	for i, t := range ts {
		e := api.ExtendedTarget{Target: targetToAPI(t), Organization: org}
		if sp, ok := spaces[t.SpaceID]; ok {
			e.Space = &sp
		}
		if t.BridgeWorkerID != nil {
			if w, ok := workers[*t.BridgeWorkerID]; ok {
				e.BridgeWorker = &w
			}
		}
		e.Triggers = unservedList[api.Trigger](includes, "TriggerIDs")
		out[i] = e
	}
	return out, nil
}

func (h targetAPI) GetTarget(ctx context.Context, r api.GetTargetRequestObject) (api.GetTargetResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, target.ListEntity, r.Params.Select, r.Params.Include, func() (target.Target, error) {
		return h.s.deps.Targets.Get(ctx, sc, r.SpaceId, r.TargetId.String())
	}, h.extendTargets)
}

func (h targetAPI) CreateTarget(ctx context.Context, r api.CreateTargetRequestObject) (api.CreateTargetResponseObject, error) {
	sc := scopeOf(ctx)
	t, err := h.s.deps.Targets.Create(ctx, sc, r.SpaceId, targetFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateTarget200JSONResponse{Body: targetToAPI(t)}, nil
}

func (h targetAPI) UpdateTarget(ctx context.Context, r api.UpdateTargetRequestObject) (api.UpdateTargetResponseObject, error) {
	sc := scopeOf(ctx)
	t, err := h.s.deps.Targets.Update(ctx, sc, r.SpaceId, r.TargetId.String(), r.Body.Version, targetFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateTarget200JSONResponse{Body: targetToAPI(t)}, nil
}

func (h targetAPI) PatchTarget(ctx context.Context, r api.PatchTargetRequestObject) (api.PatchTargetResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	t, err := h.s.deps.Targets.Patch(ctx, sc, r.SpaceId, r.TargetId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchTarget200JSONResponse{Body: targetToAPI(t)}, nil
}

func (h targetAPI) DeleteTarget(ctx context.Context, r api.DeleteTargetRequestObject) (api.DeleteTargetResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Targets.Delete(ctx, sc, r.SpaceId, r.TargetId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteTarget200JSONResponse{Body: deleted(target.EntityType)}, nil
}

func (h targetAPI) BulkPatchTargets(ctx context.Context, r api.BulkPatchTargetsRequestObject) (api.BulkPatchTargetsResponseObject, error) {
	return answeredInBulk(patchedInBulk[target.Target](ctx, h.s.deps.Targets, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, func(it entity.BulkItem[target.Target], e *api.ResponseError) api.TargetCreateOrUpdateResponse {
		if e != nil {
			return api.TargetCreateOrUpdateResponse{Error: e}
		}
		written := targetToAPI(it.Value)
		return api.TargetCreateOrUpdateResponse{Target: &written}
	}))
}

func (h targetAPI) BulkDeleteTargets(ctx context.Context, r api.BulkDeleteTargetsRequestObject) (api.BulkDeleteTargetsResponseObject, error) {
	return answeredInBulk(deletedInBulk[target.Target](ctx, h.s.deps.Targets, target.EntityType, r.Params, r.Params.DryRun))
}
