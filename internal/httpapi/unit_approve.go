package httpapi

import (
	"context"
	"fmt"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/unit"
)

// approveSelector reads the revision parameter of an approval (absent: the head).
func approveSelector(p *string) (unit.RevisionSelector, error) {
	s := ""
	if p != nil {
		s = *p
	}
	return unit.ParseRevisionSelector("revision", s)
}

// approvedToAPI is the answer for one Unit an approval went through.
func approvedToAPI(a unit.Approved) api.ApproveResponse {
	u := unitToAPI(a.Unit)
	msg := fmt.Sprintf("Revision %d of Unit %s approved", a.RevisionNum, a.Slug)
	if !a.Recorded {
		msg = fmt.Sprintf("Revision %d of Unit %s is already approved by you; nothing recorded", a.RevisionNum, a.Slug)
	}
	return api.ApproveResponse{Unit: &u, Message: msg}
}

func (h unitAPI) ApproveUnit(ctx context.Context, r api.ApproveUnitRequestObject) (api.ApproveUnitResponseObject, error) {
	rev, err := approveSelector(r.Params.Revision)
	if err != nil {
		return nil, err
	}
	a, err := h.s.deps.Units.Approve(ctx, scopeOf(ctx), r.SpaceId, r.UnitId, rev, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.ApproveUnit200JSONResponse{Body: approvedToAPI(a)}, nil
}

func (h unitAPI) BulkApproveUnits(ctx context.Context, r api.BulkApproveUnitsRequestObject) (api.BulkApproveUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	sel, err := selectionParams(ctx, h.s, r.Params)
	if err != nil {
		return nil, err
	}
	rev, err := approveSelector(r.Params.Revision)
	if err != nil {
		return nil, err
	}
	items, err := h.s.deps.Units.BulkApprove(ctx, sc, requestPath(ctx), sel, rev, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return answeredInBulk(bulkItems(items, func(it entity.BulkItem[unit.Approved], e *api.ResponseError) api.ApproveResponse {
		if e != nil {
			return api.ApproveResponse{Error: e, Message: e.Message}
		}
		return approvedToAPI(it.Value)
	}))
}
