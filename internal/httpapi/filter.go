package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/listquery"
)

// filterAPI serves the Filter operations.
type filterAPI struct{ *base }

func (h filterAPI) ListAllFilters(ctx context.Context, r api.ListAllFiltersRequestObject) (api.ListAllFiltersResponseObject, error) {
	sc := scopeOf(ctx)
	entityType := deref(r.Params.Entity)
	switch {
	case (entityType == "") != (r.Params.Id == nil):
		return nil, apierr.UserInput("entity and id are given together: the Filters that select entity id", apierr.Item{Item: "entity", Description: "entity and id go together"})
	case entityType != "":
		page, err := filter.ListSelecting(ctx, h.s.deps.Filters, sc, requestPath(ctx), listParams(ctx, r.Params), entityType, *r.Params.Id)
		return listed(ctx, sc, page, err, filter.EntityType, h.extendFilters)
	}
	return h.listFilters(ctx, sc, nil, listParams(ctx, r.Params))
}

func (h filterAPI) ListFilters(ctx context.Context, r api.ListFiltersRequestObject) (api.ListFiltersResponseObject, error) {
	return h.listFilters(ctx, scopeOf(ctx), &r.SpaceId, listParams(ctx, r.Params))
}

func (h filterAPI) listFilters(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Filters.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, filter.EntityType, h.extendFilters)
}

func (h filterAPI) extendFilters(ctx context.Context, sc authz.Scope, fs []filter.Filter, includes map[string]bool) ([]api.ExtendedFilter, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(fs))
	for i, f := range fs {
		ids[i] = f.SpaceID
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], ids)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedFilter, len(fs))
	for i, f := range fs {
		e := api.ExtendedFilter{Filter: filterToAPI(f), Organization: org}
		if sp, ok := spaces[f.SpaceID]; ok {
			e.Space = &sp
		}
		out[i] = e
	}
	return out, nil
}

func (h filterAPI) GetFilter(ctx context.Context, r api.GetFilterRequestObject) (api.GetFilterResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, filter.ListEntity, r.Params.Select, r.Params.Include, func() (filter.Filter, error) {
		return h.s.deps.Filters.Get(ctx, sc, r.SpaceId, r.FilterId.String())
	}, h.extendFilters)
}

func (h filterAPI) CreateFilter(ctx context.Context, r api.CreateFilterRequestObject) (api.CreateFilterResponseObject, error) {
	sc := scopeOf(ctx)
	f, err := h.s.deps.Filters.Create(ctx, sc, r.SpaceId, filterFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateFilter200JSONResponse{Body: filterToAPI(f)}, nil
}

func (h filterAPI) UpdateFilter(ctx context.Context, r api.UpdateFilterRequestObject) (api.UpdateFilterResponseObject, error) {
	sc := scopeOf(ctx)
	f, err := h.s.deps.Filters.Update(ctx, sc, r.SpaceId, r.FilterId.String(), r.Body.Version, filterFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateFilter200JSONResponse{Body: filterToAPI(f)}, nil
}

func (h filterAPI) PatchFilter(ctx context.Context, r api.PatchFilterRequestObject) (api.PatchFilterResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	f, err := h.s.deps.Filters.Patch(ctx, sc, r.SpaceId, r.FilterId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchFilter200JSONResponse{Body: filterToAPI(f)}, nil
}

func (h filterAPI) DeleteFilter(ctx context.Context, r api.DeleteFilterRequestObject) (api.DeleteFilterResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Filters.Delete(ctx, sc, r.SpaceId, r.FilterId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteFilter200JSONResponse{Body: deleted(filter.EntityType)}, nil
}

func (h filterAPI) BulkPatchFilters(ctx context.Context, r api.BulkPatchFiltersRequestObject) (api.BulkPatchFiltersResponseObject, error) {
	return answeredInBulk(patchedInBulk[filter.Filter](ctx, h.s.deps.Filters, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, filterWriteItem))
}

func (h filterAPI) BulkDeleteFilters(ctx context.Context, r api.BulkDeleteFiltersRequestObject) (api.BulkDeleteFiltersResponseObject, error) {
	return answeredInBulk(deletedInBulk[filter.Filter](ctx, h.s.deps.Filters, filter.EntityType, r.Params, r.Params.DryRun))
}

func (h filterAPI) GetFilterDocument(ctx context.Context, r api.GetFilterDocumentRequestObject) (api.GetFilterDocumentResponseObject, error) {
	d, err := h.s.deps.Filters.Document(ctx, scopeOf(ctx), r.SpaceId, r.FilterId.String())
	if err != nil {
		return nil, err
	}
	return api.GetFilterDocument200JSONResponse{Body: documentToAPI(d)}, nil
}

func (h filterAPI) UpdateFilterFromDocument(ctx context.Context, r api.UpdateFilterFromDocumentRequestObject) (api.UpdateFilterFromDocumentResponseObject, error) {
	d, err := h.s.deps.Filters.ApplyDocument(ctx, scopeOf(ctx), r.SpaceId, r.FilterId.String(),
		documentFromAPI(r.Body.Base), documentFromAPI(r.Body.Document), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateFilterFromDocument200JSONResponse{Body: documentToAPI(d)}, nil
}

// filterWriteItem is one item of a bulk write of Filters: the Filter written, or why not.
func filterWriteItem(it entity.BulkItem[filter.Filter], e *api.ResponseError) api.FilterCreateOrUpdateResponse {
	if e != nil {
		return api.FilterCreateOrUpdateResponse{Error: e}
	}
	written := filterToAPI(it.Value)
	return api.FilterCreateOrUpdateResponse{Filter: &written}
}

func (h filterAPI) BulkCreateFilters(ctx context.Context, r api.BulkCreateFiltersRequestObject) (api.BulkCreateFiltersResponseObject, error) {
	return answeredInBulk(clonedInBulk[filter.Filter](ctx, h.s, h.s.deps.Filters, r.Params, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, filterWriteItem))
}

func (h filterAPI) BulkMoveFilters(ctx context.Context, r api.BulkMoveFiltersRequestObject) (api.BulkMoveFiltersResponseObject, error) {
	return answeredInBulk(movedInBulk[filter.Filter](ctx, h.s.deps.Filters, r.Params, r.Params.DryRun, r.Body.ToSpaceID, filterWriteItem))
}
