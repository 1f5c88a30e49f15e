package httpapi

import (
	"context"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/changeset"
)

// The ChangeSet deletes are the kit's, with detach=true carried to the family's delete check in ctx.

// DeleteChangeSet serves DELETE /space/{space_id}/change_set/{change_set_id}.
func (h *handlers) DeleteChangeSet(ctx context.Context, r api.DeleteChangeSetRequestObject) (api.DeleteChangeSetResponseObject, error) {
	if flag(r.Params.Detach) {
		ctx = changeset.WithDetach(ctx)
	}
	out, err := changeSetEdge.delete(ctx, h.base, r.SpaceId, r.ChangeSetId.String(), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.DeleteChangeSet200JSONResponse{Body: out}, nil
}

// BulkDeleteChangeSets serves DELETE /change_set.
func (h *handlers) BulkDeleteChangeSets(ctx context.Context, r api.BulkDeleteChangeSetsRequestObject) (api.BulkDeleteChangeSetsResponseObject, error) {
	if flag(r.Params.Detach) {
		ctx = changeset.WithDetach(ctx)
	}
	return answeredInBulk(deletedInBulk(ctx, h.s, changeSetEdge.of(h.base), changeSetEdge.listing.Name, r.Params, r.Params.DryRun))
}
