package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/reviewcomment"
)

// The ReviewComment operations under a Unit's path: the Unit must be one the caller may view (else 404),
// and a ReviewComment on another Unit is as absent as one that does not exist.

// unitComment checks that the Unit may be viewed and, when id is given, that the ReviewComment is on it.
func (h *handlers) unitComment(ctx context.Context, spaceID, unitID uuid.UUID, id *uuid.UUID) error {
	sc := scopeOf(ctx)
	if _, err := h.s.deps.Units.Get(ctx, sc, spaceID, unitID); err != nil {
		return err
	}
	if id == nil {
		return nil
	}
	c, err := reviewCommentEdge.of(h.base).Get(ctx, sc, spaceID, id.String())
	if err != nil {
		return err
	}
	if c.UnitID != unitID {
		return apierr.NotFound(reviewcomment.EntityType, id.String())
	}
	return nil
}

// ListReviewComments serves GET /space/{space_id}/unit/{unit_id}/review_comment.
func (h *handlers) ListReviewComments(ctx context.Context, r api.ListReviewCommentsRequestObject) (api.ListReviewCommentsResponseObject, error) {
	if err := h.unitComment(ctx, r.SpaceId, r.UnitId, nil); err != nil {
		return nil, err
	}
	params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)
	if err != nil {
		return nil, err
	}
	sc := scopeOf(ctx)
	page, err := reviewCommentEdge.of(h.base).List(ctx, sc, &r.SpaceId, requestPath(ctx), params,
		listquery.Condition{Column: "review_comment.unit_id", Value: r.UnitId})
	return listed(ctx, sc, page, err, reviewcomment.EntityType, reviewCommentEdge.extend(h.base))
}

// GetReviewComment serves GET /space/{space_id}/unit/{unit_id}/review_comment/{review_comment_id}.
func (h *handlers) GetReviewComment(ctx context.Context, r api.GetReviewCommentRequestObject) (api.GetReviewCommentResponseObject, error) {
	if err := h.unitComment(ctx, r.SpaceId, r.UnitId, &r.ReviewCommentId); err != nil {
		return nil, err
	}
	return reviewCommentEdge.get(ctx, h.base, r.SpaceId, r.ReviewCommentId.String(), r.Params.Select, r.Params.Include)
}

// CreateReviewComment serves POST /space/{space_id}/unit/{unit_id}/review_comment.
func (h *handlers) CreateReviewComment(ctx context.Context, r api.CreateReviewCommentRequestObject) (api.CreateReviewCommentResponseObject, error) {
	if err := h.unitComment(ctx, r.SpaceId, r.UnitId, nil); err != nil {
		return nil, err
	}
	f := reviewCommentFields(r.Body)
	f.UnitID, f.UserAgent = r.UnitId, userAgent(ctx)
	c, err := reviewCommentEdge.of(h.base).Create(ctx, scopeOf(ctx), r.SpaceId, f, entity.WriteOptions{DryRun: flag(r.Params.DryRun)})
	if err != nil {
		return nil, err
	}
	return api.CreateReviewComment200JSONResponse{Body: reviewCommentToAPI(c)}, nil
}

// UpdateReviewComment serves PUT /space/{space_id}/unit/{unit_id}/review_comment/{review_comment_id}.
func (h *handlers) UpdateReviewComment(ctx context.Context, r api.UpdateReviewCommentRequestObject) (api.UpdateReviewCommentResponseObject, error) {
	if err := h.unitComment(ctx, r.SpaceId, r.UnitId, &r.ReviewCommentId); err != nil {
		return nil, err
	}
	out, err := reviewCommentEdge.update(ctx, h.base, r.SpaceId, r.ReviewCommentId.String(), r.Body, r.Body.Version, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateReviewComment200JSONResponse{Body: out}, nil
}

// PatchReviewComment serves PATCH /space/{space_id}/unit/{unit_id}/review_comment/{review_comment_id}.
func (h *handlers) PatchReviewComment(ctx context.Context, r api.PatchReviewCommentRequestObject) (api.PatchReviewCommentResponseObject, error) {
	if err := h.unitComment(ctx, r.SpaceId, r.UnitId, &r.ReviewCommentId); err != nil {
		return nil, err
	}
	out, err := reviewCommentEdge.patch(ctx, h.base, r.SpaceId, r.ReviewCommentId.String(), flag(r.Params.DryRun), r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	return api.PatchReviewComment200JSONResponse{Body: out}, nil
}

// DeleteReviewComment serves DELETE /space/{space_id}/unit/{unit_id}/review_comment/{review_comment_id}.
func (h *handlers) DeleteReviewComment(ctx context.Context, r api.DeleteReviewCommentRequestObject) (api.DeleteReviewCommentResponseObject, error) {
	if err := h.unitComment(ctx, r.SpaceId, r.UnitId, &r.ReviewCommentId); err != nil {
		return nil, err
	}
	out, err := reviewCommentEdge.delete(ctx, h.base, r.SpaceId, r.ReviewCommentId.String(), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.DeleteReviewComment200JSONResponse{Body: out}, nil
}
