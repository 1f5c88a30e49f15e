package httpapi

import (
	"context"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/space"
)

func (h *handlers) ListSpaces(ctx context.Context, _ api.ListSpacesRequestObject) (api.ListSpacesResponseObject, error) {
	spaces, err := h.s.deps.Spaces.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedSpace, len(spaces))
	for i, sp := range spaces {
		out[i] = api.ExtendedSpace{Space: spaceToAPI(sp)}
	}
	return api.ListSpaces200JSONResponse{Body: out}, nil
}

func (h *handlers) GetSpace(ctx context.Context, r api.GetSpaceRequestObject) (api.GetSpaceResponseObject, error) {
	sp, err := h.s.deps.Spaces.Get(ctx, r.SpaceId)
	if err != nil {
		return nil, err
	}
	return api.GetSpace200JSONResponse{Body: api.ExtendedSpace{Space: spaceToAPI(sp)}}, nil
}

func (h *handlers) CreateSpace(ctx context.Context, r api.CreateSpaceRequestObject) (api.CreateSpaceResponseObject, error) {
	sp, err := h.s.deps.Spaces.Create(ctx, spaceFields(r.Body),
		space.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h *handlers) UpdateSpace(ctx context.Context, r api.UpdateSpaceRequestObject) (api.UpdateSpaceResponseObject, error) {
	sp, err := h.s.deps.Spaces.Update(ctx, r.SpaceId, r.Body.Version, spaceFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h *handlers) PatchSpace(ctx context.Context, r api.PatchSpaceRequestObject) (api.PatchSpaceResponseObject, error) {
	patch := r.JSONBody
	if patch == nil {
		patch = r.ApplicationMergePatchPlusJSONBody
	}
	sp, err := h.s.deps.Spaces.Patch(ctx, r.SpaceId, *patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h *handlers) DeleteSpace(ctx context.Context, r api.DeleteSpaceRequestObject) (api.DeleteSpaceResponseObject, error) {
	if err := h.s.deps.Spaces.Delete(ctx, r.SpaceId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteSpace200JSONResponse{Body: deleted(space.EntityType)}, nil
}
