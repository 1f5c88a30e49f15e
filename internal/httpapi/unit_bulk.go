package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/unit"
)

// unitWriteItems turns bulk Unit results into UnitCreateOrUpdateResponses and picks the status.
func unitWriteItems(items []entity.BulkItem[unit.Unit]) ([]api.UnitCreateOrUpdateResponse, int, error) {
	out := make([]api.UnitCreateOrUpdateResponse, len(items))
	errs := make([]*apierr.Error, len(items))
	for i, it := range items {
		errs[i] = it.Err
		if it.Err != nil {
			re := responseError(it.Err)
			out[i] = api.UnitCreateOrUpdateResponse{Error: &re}
			continue
		}
		u := unitToAPI(it.Value)
		out[i] = api.UnitCreateOrUpdateResponse{Unit: &u}
	}
	status, err := bulkStatus(errs)
	return out, status, err
}

func (h *handlers) BulkCreateUnits(ctx context.Context, r api.BulkCreateUnitsRequestObject) (api.BulkCreateUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	if r.Params.FilterSpace != nil {
		return nil, apierr.Validation(fmt.Sprintf("Filter %s does not exist in your organization", r.Params.FilterSpace),
			apierr.Item{Item: "filter_space", Description: "no such Filter"})
	}
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	var prefixes []string
	if r.Params.NamePrefixes != nil {
		for _, p := range strings.Split(*r.Params.NamePrefixes, ",") {
			prefixes = append(prefixes, strings.TrimSpace(p))
		}
	}
	items, err := h.s.deps.Units.Clone(ctx, sc, requestPath(ctx), sel, patch, unit.CloneOptions{
		WhereSpace: deref(r.Params.WhereSpace), Prefixes: prefixes, AllowExists: isTrue(r.Params.AllowExists),
		DryRun: flag(r.Params.DryRun), UserAgent: userAgent(ctx),
	})
	if err != nil {
		return nil, err
	}
	out, status, err := unitWriteItems(items)
	if err != nil {
		return nil, err
	}
	if status == http.StatusMultiStatus {
		return api.BulkCreateUnits207JSONResponse{Body: out}, nil
	}
	return api.BulkCreateUnits200JSONResponse{Body: out}, nil
}

func (h *handlers) BulkPatchUnits(ctx context.Context, r api.BulkPatchUnitsRequestObject) (api.BulkPatchUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	items, err := h.s.deps.Units.BulkPatch(ctx, sc, requestPath(ctx), sel, patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out, status, err := unitWriteItems(items)
	if err != nil {
		return nil, err
	}
	if status == http.StatusMultiStatus {
		return api.BulkPatchUnits207JSONResponse{Body: out}, nil
	}
	return api.BulkPatchUnits200JSONResponse{Body: out}, nil
}

func (h *handlers) BulkDeleteUnits(ctx context.Context, r api.BulkDeleteUnitsRequestObject) (api.BulkDeleteUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	items, err := h.s.deps.Units.BulkDelete(ctx, sc, requestPath(ctx), sel, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out := make([]api.DeleteResponse, len(items))
	errs := make([]*apierr.Error, len(items))
	for i, it := range items {
		errs[i] = it.Err
		out[i] = bulkDeleted(unit.EntityType, it.Ref, it.Err)
	}
	status, err := bulkStatus(errs)
	if err != nil {
		return nil, err
	}
	if status == http.StatusMultiStatus {
		return api.BulkDeleteUnits207JSONResponse{Body: out}, nil
	}
	return api.BulkDeleteUnits200JSONResponse{Body: out}, nil
}

func (h *handlers) BulkMoveUnits(ctx context.Context, r api.BulkMoveUnitsRequestObject) (api.BulkMoveUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	items, err := h.s.deps.Units.Move(ctx, sc, requestPath(ctx), sel, r.Body.ToSpaceID, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out := make([]api.UnitMoveResponse, len(items))
	errs := make([]*apierr.Error, len(items))
	for i, it := range items {
		errs[i] = it.Err
		out[i] = api.UnitMoveResponse{UnitID: it.Ref.ID, Slug: it.Ref.Slug, Moved: it.Err == nil}
		if it.Err != nil {
			re := responseError(it.Err)
			out[i].Error = &re
		}
	}
	status, err := bulkStatus(errs)
	if err != nil {
		return nil, err
	}
	if status == http.StatusMultiStatus {
		return api.BulkMoveUnits207JSONResponse{Body: out}, nil
	}
	return api.BulkMoveUnits200JSONResponse{Body: out}, nil
}

func (h *handlers) BulkTagUnits(ctx context.Context, r api.BulkTagUnitsRequestObject) (api.BulkTagUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	remove := r.Body.Revision == api.Remove
	items, err := h.s.deps.Units.BulkTag(ctx, sc, requestPath(ctx), sel, r.Body.TagID, remove, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out := make([]api.UnitTagResponse, len(items))
	errs := make([]*apierr.Error, len(items))
	for i, it := range items {
		errs[i] = it.Err
		if it.Err != nil {
			re := responseError(it.Err)
			out[i] = api.UnitTagResponse{Error: &re}
			continue
		}
		verb := "tagged Revision"
		if remove {
			verb = "untagged"
		}
		out[i] = api.UnitTagResponse{Message: fmt.Sprintf("Unit %s %s %d", it.Ref.Slug, verb, it.Value.HeadRevisionNum)}
		if remove {
			out[i].Message = fmt.Sprintf("Unit %s untagged", it.Ref.Slug)
		}
	}
	status, err := bulkStatus(errs)
	if err != nil {
		return nil, err
	}
	if status == http.StatusMultiStatus {
		return api.BulkTagUnits207JSONResponse{Body: out}, nil
	}
	return api.BulkTagUnits200JSONResponse{Body: out}, nil
}
