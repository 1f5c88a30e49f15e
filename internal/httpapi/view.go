package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/view"
)

// viewAPI serves the View operations.
type viewAPI struct{ *base }

func (h viewAPI) ListAllViews(ctx context.Context, r api.ListAllViewsRequestObject) (api.ListAllViewsResponseObject, error) {
	return h.listViews(ctx, scopeOf(ctx), nil, listParams(ctx, r.Params))
}

func (h viewAPI) ListViews(ctx context.Context, r api.ListViewsRequestObject) (api.ListViewsResponseObject, error) {
	return h.listViews(ctx, scopeOf(ctx), &r.SpaceId, listParams(ctx, r.Params))
}

func (h viewAPI) listViews(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Views.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, view.EntityType, h.extendViews)
}

func (h viewAPI) extendViews(ctx context.Context, sc authz.Scope, vs []view.View, includes map[string]bool) ([]api.ExtendedView, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	spaceIDs := make([]uuid.UUID, len(vs))
	var filterIDs []uuid.UUID
	for i, v := range vs {
		spaceIDs[i] = v.SpaceID
		if v.FilterID != nil && includes["FilterID"] {
			filterIDs = append(filterIDs, *v.FilterID)
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
	out := make([]api.ExtendedView, len(vs))
	for i, v := range vs {
		e := api.ExtendedView{View: viewToAPI(v), Organization: org}
		if sp, ok := spaces[v.SpaceID]; ok {
			e.Space = &sp
		}
		if v.FilterID != nil {
			if f, ok := filters[*v.FilterID]; ok {
				wire := filterToAPI(f)
				e.Filter = &wire
			}
		}
		out[i] = e
	}
	return out, nil
}

func (h viewAPI) GetView(ctx context.Context, r api.GetViewRequestObject) (api.GetViewResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, view.ListEntity, r.Params.Select, r.Params.Include, func() (view.View, error) {
		return h.s.deps.Views.Get(ctx, sc, r.SpaceId, r.ViewId.String())
	}, h.extendViews)
}

func (h viewAPI) CreateView(ctx context.Context, r api.CreateViewRequestObject) (api.CreateViewResponseObject, error) {
	sc := scopeOf(ctx)
	f, err := h.s.deps.Views.Create(ctx, sc, r.SpaceId, viewFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateView200JSONResponse{Body: viewToAPI(f)}, nil
}

func (h viewAPI) UpdateView(ctx context.Context, r api.UpdateViewRequestObject) (api.UpdateViewResponseObject, error) {
	sc := scopeOf(ctx)
	f, err := h.s.deps.Views.Update(ctx, sc, r.SpaceId, r.ViewId.String(), r.Body.Version, viewFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateView200JSONResponse{Body: viewToAPI(f)}, nil
}

func (h viewAPI) PatchView(ctx context.Context, r api.PatchViewRequestObject) (api.PatchViewResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	f, err := h.s.deps.Views.Patch(ctx, sc, r.SpaceId, r.ViewId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchView200JSONResponse{Body: viewToAPI(f)}, nil
}

func (h viewAPI) DeleteView(ctx context.Context, r api.DeleteViewRequestObject) (api.DeleteViewResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Views.Delete(ctx, sc, r.SpaceId, r.ViewId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteView200JSONResponse{Body: deleted(view.EntityType)}, nil
}

func (h viewAPI) BulkPatchViews(ctx context.Context, r api.BulkPatchViewsRequestObject) (api.BulkPatchViewsResponseObject, error) {
	return answeredInBulk(patchedInBulk[view.View](ctx, h.s.deps.Views, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, viewWriteItem))
}

func (h viewAPI) BulkDeleteViews(ctx context.Context, r api.BulkDeleteViewsRequestObject) (api.BulkDeleteViewsResponseObject, error) {
	return answeredInBulk(deletedInBulk[view.View](ctx, h.s.deps.Views, view.EntityType, r.Params, r.Params.DryRun))
}

func (h viewAPI) GetViewDocument(ctx context.Context, r api.GetViewDocumentRequestObject) (api.GetViewDocumentResponseObject, error) {
	d, err := h.s.deps.Views.Document(ctx, scopeOf(ctx), r.SpaceId, r.ViewId.String())
	if err != nil {
		return nil, err
	}
	return api.GetViewDocument200JSONResponse{Body: documentToAPI(d)}, nil
}

func (h viewAPI) UpdateViewFromDocument(ctx context.Context, r api.UpdateViewFromDocumentRequestObject) (api.UpdateViewFromDocumentResponseObject, error) {
	d, err := h.s.deps.Views.ApplyDocument(ctx, scopeOf(ctx), r.SpaceId, r.ViewId.String(),
		documentFromAPI(r.Body.Base), documentFromAPI(r.Body.Document), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateViewFromDocument200JSONResponse{Body: documentToAPI(d)}, nil
}

// viewWriteItem is one item of a bulk write of Views: the View written, or why not.
func viewWriteItem(it entity.BulkItem[view.View], e *api.ResponseError) api.ViewCreateOrUpdateResponse {
	if e != nil {
		return api.ViewCreateOrUpdateResponse{Error: e}
	}
	written := viewToAPI(it.Value)
	return api.ViewCreateOrUpdateResponse{View: &written}
}

func (h viewAPI) BulkCreateViews(ctx context.Context, r api.BulkCreateViewsRequestObject) (api.BulkCreateViewsResponseObject, error) {
	return answeredInBulk(clonedInBulk[view.View](ctx, h.s, h.s.deps.Views, r.Params, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, viewWriteItem))
}

func (h viewAPI) BulkMoveViews(ctx context.Context, r api.BulkMoveViewsRequestObject) (api.BulkMoveViewsResponseObject, error) {
	return answeredInBulk(movedInBulk[view.View](ctx, h.s.deps.Views, r.Params, r.Params.DryRun, r.Body.ToSpaceID, viewWriteItem))
}
