package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/space"
)

// spaceAPI serves the Space operations.
type spaceAPI struct{ *base }

func (h spaceAPI) ListSpaces(ctx context.Context, r api.ListSpacesRequestObject) (api.ListSpacesResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.Spaces.List(ctx, sc, nil, requestPath(ctx), listParams(ctx, r.Params))
	return listed(ctx, sc, page, err, space.EntityType, h.extendSpaces)
}

func (h spaceAPI) extendSpaces(ctx context.Context, sc authz.Scope, spaces []space.Space, includes map[string]bool) ([]api.ExtendedSpace, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedSpace, len(spaces))
	for i, sp := range spaces {
		out[i] = api.ExtendedSpace{Space: spaceToAPI(sp), Organization: org}
	}
	return out, nil
}

func (h spaceAPI) GetSpace(ctx context.Context, r api.GetSpaceRequestObject) (api.GetSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, space.ListEntity, r.Params.Select, r.Params.Include, func() (space.Space, error) {
		return h.s.deps.Spaces.Get(ctx, sc, uuid.Nil, r.SpaceId.String())
	}, h.extendSpaces)
}

func (h spaceAPI) BulkPatchSpaces(ctx context.Context, r api.BulkPatchSpacesRequestObject) (api.BulkPatchSpacesResponseObject, error) {
	return answeredInBulk(patchedInBulk[space.Space](ctx, h.s.deps.Spaces, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, func(it entity.BulkItem[space.Space], e *api.ResponseError) api.SpaceCreateOrUpdateResponse {
		if e != nil {
			return api.SpaceCreateOrUpdateResponse{Error: e}
		}
		written := spaceToAPI(it.Value)
		return api.SpaceCreateOrUpdateResponse{Space: &written}
	}))
}

func (h spaceAPI) BulkDeleteSpaces(ctx context.Context, r api.BulkDeleteSpacesRequestObject) (api.BulkDeleteSpacesResponseObject, error) {
	return answeredInBulk(deletedInBulk[space.Space](ctx, h.s.deps.Spaces, space.EntityType, r.Params, r.Params.DryRun))
}

func (h spaceAPI) CreateSpace(ctx context.Context, r api.CreateSpaceRequestObject) (api.CreateSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	sp, err := h.s.deps.Spaces.Create(ctx, sc, uuid.Nil, spaceFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h spaceAPI) UpdateSpace(ctx context.Context, r api.UpdateSpaceRequestObject) (api.UpdateSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	sp, err := h.s.deps.Spaces.Update(ctx, sc, uuid.Nil, r.SpaceId.String(), r.Body.Version, spaceFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h spaceAPI) PatchSpace(ctx context.Context, r api.PatchSpaceRequestObject) (api.PatchSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	sp, err := h.s.deps.Spaces.Patch(ctx, sc, uuid.Nil, r.SpaceId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h spaceAPI) DeleteSpace(ctx context.Context, r api.DeleteSpaceRequestObject) (api.DeleteSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Spaces.Delete(ctx, sc, uuid.Nil, r.SpaceId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteSpace200JSONResponse{Body: deleted(space.EntityType)}, nil
}
