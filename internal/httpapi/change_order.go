package httpapi

import (
	"context"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/changeorder"
)

// The ChangeOrder deletes are the kit's, with detach=true carried to the family's delete check in ctx.

// DeleteChangeOrder serves DELETE /space/{space_id}/change_order/{change_order_id}.
func (h *handlers) DeleteChangeOrder(ctx context.Context, r api.DeleteChangeOrderRequestObject) (api.DeleteChangeOrderResponseObject, error) {
	if flag(r.Params.Detach) {
		ctx = changeorder.WithDetach(ctx)
	}
	out, err := changeOrderEdge.delete(ctx, h.base, r.SpaceId, r.ChangeOrderId.String(), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.DeleteChangeOrder200JSONResponse{Body: out}, nil
}

// BulkDeleteChangeOrders serves DELETE /change_order.
func (h *handlers) BulkDeleteChangeOrders(ctx context.Context, r api.BulkDeleteChangeOrdersRequestObject) (api.BulkDeleteChangeOrdersResponseObject, error) {
	if flag(r.Params.Detach) {
		ctx = changeorder.WithDetach(ctx)
	}
	return answeredInBulk(deletedInBulk(ctx, h.s, changeOrderEdge.of(h.base), changeOrderEdge.listing.Name, r.Params, r.Params.DryRun))
}
