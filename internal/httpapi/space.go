package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
)

func (h *handlers) ListSpaces(ctx context.Context, r api.ListSpacesRequestObject) (api.ListSpacesResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.Spaces.List(ctx, sc, nil, requestPath(ctx), listParams(r.Params))
	if err != nil {
		return nil, err
	}
	orgs, err := h.includedOrganization(ctx, sc, page.Includes)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedSpace, len(page.Items))
	for i, sp := range page.Items {
		out[i] = api.ExtendedSpace{Space: spaceToAPI(sp), Organization: orgs}
	}
	return newPage(out, space.EntityType, page.Fields, page.Continue), nil
}

func (h *handlers) GetSpace(ctx context.Context, r api.GetSpaceRequestObject) (api.GetSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	fields, err := listquery.SelectFields(space.ListEntity, deref(r.Params.Select))
	if err != nil {
		return nil, err
	}
	includes, err := listquery.ParseIncludes(space.ListEntity, deref(r.Params.Include))
	if err != nil {
		return nil, err
	}
	sp, err := h.s.deps.Spaces.Get(ctx, sc, uuid.Nil, r.SpaceId.String())
	if err != nil {
		return nil, err
	}
	orgs, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	return itemResponse{item: api.ExtendedSpace{Space: spaceToAPI(sp), Organization: orgs}, entityField: space.EntityType, fields: fields}, nil
}

func (h *handlers) BulkPatchSpaces(ctx context.Context, r api.BulkPatchSpacesRequestObject) (api.BulkPatchSpacesResponseObject, error) {
	sc := scopeOf(ctx)
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	items, err := h.s.deps.Spaces.BulkPatch(ctx, sc, requestPath(ctx), sel, patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out, multi, err := bulkItems(items, func(it entity.BulkItem[space.Space], e *api.ResponseError) api.SpaceCreateOrUpdateResponse {
		if e != nil {
			return api.SpaceCreateOrUpdateResponse{Error: e}
		}
		written := spaceToAPI(it.Value)
		return api.SpaceCreateOrUpdateResponse{Space: &written}
	})
	switch {
	case err != nil:
		return nil, err
	case multi:
		return api.BulkPatchSpaces207JSONResponse{Body: out}, nil
	}
	return api.BulkPatchSpaces200JSONResponse{Body: out}, nil
}

func (h *handlers) BulkDeleteSpaces(ctx context.Context, r api.BulkDeleteSpacesRequestObject) (api.BulkDeleteSpacesResponseObject, error) {
	sc := scopeOf(ctx)
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	items, err := h.s.deps.Spaces.BulkDelete(ctx, sc, requestPath(ctx), sel, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out, multi, err := bulkRemoved(space.EntityType, items)
	switch {
	case err != nil:
		return nil, err
	case multi:
		return api.BulkDeleteSpaces207JSONResponse{Body: out}, nil
	}
	return api.BulkDeleteSpaces200JSONResponse{Body: out}, nil
}

func (h *handlers) CreateSpace(ctx context.Context, r api.CreateSpaceRequestObject) (api.CreateSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	sp, err := h.s.deps.Spaces.Create(ctx, sc, uuid.Nil, spaceFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h *handlers) UpdateSpace(ctx context.Context, r api.UpdateSpaceRequestObject) (api.UpdateSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	sp, err := h.s.deps.Spaces.Update(ctx, sc, uuid.Nil, r.SpaceId.String(), r.Body.Version, spaceFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateSpace200JSONResponse{Body: spaceToAPI(sp)}, nil
}

func (h *handlers) PatchSpace(ctx context.Context, r api.PatchSpaceRequestObject) (api.PatchSpaceResponseObject, error) {
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

func (h *handlers) DeleteSpace(ctx context.Context, r api.DeleteSpaceRequestObject) (api.DeleteSpaceResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Spaces.Delete(ctx, sc, uuid.Nil, r.SpaceId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteSpace200JSONResponse{Body: deleted(space.EntityType)}, nil
}
