package httpapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/unit"
)

// unitWriteItem is one item of a bulk write of Units: the Unit written, or why not.
func unitWriteItem(it entity.BulkItem[unit.Unit], e *api.ResponseError) api.UnitCreateOrUpdateResponse {
	if e != nil {
		return api.UnitCreateOrUpdateResponse{Error: e}
	}
	u := unitToAPI(it.Value)
	return api.UnitCreateOrUpdateResponse{Unit: &u}
}

func (h unitAPI) BulkCreateUnits(ctx context.Context, r api.BulkCreateUnitsRequestObject) (api.BulkCreateUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel, err := selectionParams(ctx, h.s, r.Params)
	if err != nil {
		return nil, err
	}
	p := copyParamsOf(r.Params)
	dest, err := h.s.destinations(ctx, sc, p)
	if err != nil {
		return nil, err
	}
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	items, err := h.s.deps.Units.Clone(ctx, sc, requestPath(ctx), sel, patch, unit.CloneOptions{UserAgent: userAgent(ctx),
		CloneOptions: entity.CloneOptions{Destinations: dest, Prefixes: p.prefixes(), AllowExists: isTrue(p.AllowExists), DryRun: flag(p.DryRun)}})
	if err != nil {
		return nil, err
	}
	out, multi, err := bulkItems(items, unitWriteItem)
	return answeredInBulk(out, multi, err)
}

func (h unitAPI) BulkPatchUnits(ctx context.Context, r api.BulkPatchUnitsRequestObject) (api.BulkPatchUnitsResponseObject, error) {
	restore, err := unit.ParseRestore(deref(r.Params.Restore))
	if err != nil {
		return nil, err
	}
	up := upgradeOptions(r.Params.Upgrade, r.Params.MergeEnableSubtraction)
	if restore.IsZero() && up == nil {
		return answeredInBulk(patchedInBulk[unit.Unit](ctx, h.s, h.s.deps.Units, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, unitWriteItem))
	}
	// A data write with the patch: a restore or an upgrade of each selected Unit.
	if !restore.IsZero() && up != nil {
		return nil, apierr.Validation("restore and upgrade cannot be combined: one write makes one Revision",
			apierr.Item{Item: "upgrade", Description: "with restore"})
	}
	sel, err := selectionParams(ctx, h.s, r.Params)
	if err != nil {
		return nil, err
	}
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	opts, err := dataWriteOptions(ctx, r.Params.DryRun, r.Params.LastChangeDescription, r.Params.Clearance, nil, nil)
	if err != nil {
		return nil, err
	}
	var items []entity.BulkItem[unit.Unit]
	if up != nil {
		items, err = h.s.deps.Units.BulkUpgrade(ctx, scopeOf(ctx), requestPath(ctx), sel, patch, opts, *up)
	} else {
		items, err = h.s.deps.Units.BulkRestore(ctx, scopeOf(ctx), requestPath(ctx), sel, patch, restore, opts)
	}
	if err != nil {
		return nil, err
	}
	return answeredInBulk(bulkItems(items, unitWriteItem))
}

func (h unitAPI) BulkDeleteUnits(ctx context.Context, r api.BulkDeleteUnitsRequestObject) (api.BulkDeleteUnitsResponseObject, error) {
	return answeredInBulk(deletedInBulk[unit.Unit](ctx, h.s, h.s.deps.Units, unit.EntityType, r.Params, r.Params.DryRun))
}

func (h unitAPI) BulkMoveUnits(ctx context.Context, r api.BulkMoveUnitsRequestObject) (api.BulkMoveUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel, err := selectionParams(ctx, h.s, r.Params)
	if err != nil {
		return nil, err
	}
	items, err := h.s.deps.Units.Move(ctx, sc, requestPath(ctx), sel, r.Body.ToSpaceID, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out, multi, err := bulkItems(items, func(it entity.BulkItem[unit.Unit], e *api.ResponseError) api.UnitMoveResponse {
		moved := it.Value.MovedLinkSlugs
		if moved == nil || e != nil {
			moved = []string{}
		}
		return api.UnitMoveResponse{UnitID: it.Ref.ID, Slug: it.Ref.Slug, Moved: e == nil, MovedLinkSlugs: moved, Error: e}
	})
	return answeredInBulk(out, multi, err)
}

func (h unitAPI) BulkTagUnits(ctx context.Context, r api.BulkTagUnitsRequestObject) (api.BulkTagUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel, err := selectionParams(ctx, h.s, r.Params)
	if err != nil {
		return nil, err
	}
	remove := r.Body.Revision == "Remove"
	var rev unit.RevisionSelector
	if !remove {
		if rev, err = unit.ParseRevisionSelector("Revision", r.Body.Revision); err != nil {
			return nil, err
		}
	}
	items, err := h.s.deps.Units.BulkTag(ctx, sc, requestPath(ctx), sel, r.Body.TagID, rev, remove, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out, multi, err := bulkItems(items, func(it entity.BulkItem[unit.Tagged], e *api.ResponseError) api.UnitTagResponse {
		switch {
		case e != nil:
			return api.UnitTagResponse{Error: e}
		case remove:
			return api.UnitTagResponse{Message: fmt.Sprintf("Unit %s untagged", it.Ref.Slug)}
		}
		return api.UnitTagResponse{Message: fmt.Sprintf("Unit %s tagged Revision %d", it.Ref.Slug, it.Value.RevisionNum)}
	})
	return answeredInBulk(out, multi, err)
}
