package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/reviewcomment"
)

// reviewCommentEdge serves the ReviewComment operations. Those under a Unit's path are hand-written
// (review_comment.go): they also check that the ReviewComment is the Unit's.
var reviewCommentEdge = &edge[reviewcomment.ReviewComment, reviewcomment.Fields, api.ReviewComment, api.ExtendedReviewComment]{
	service: served(reviewcomment.Family),
	listing: reviewcomment.ListEntity,
	toAPI:   reviewCommentToAPI,
	fields:  reviewCommentFields,
	relations: []relation[reviewcomment.ReviewComment]{inSpace[reviewcomment.ReviewComment](),
		byID("UnitID", func(c reviewcomment.ReviewComment) []uuid.UUID { return []uuid.UUID{c.UnitID} }, loadUnits),
		byID("RevisionID", func(c reviewcomment.ReviewComment) []uuid.UUID { return optionalID(c.RevisionID) }, loadRevisions)},
	extended: func(c reviewcomment.ReviewComment, x api.ReviewComment, r *related) api.ExtendedReviewComment {
		return api.ExtendedReviewComment{ReviewComment: x, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", c.SpaceID),
			Unit: relatedOne[api.Unit](r, "UnitID", c.UnitID), Revision: relatedOptional[api.Revision](r, "RevisionID", c.RevisionID)}
	},
}

func reviewCommentToAPI(c reviewcomment.ReviewComment) api.ReviewComment {
	return api.ReviewComment{ReviewCommentID: c.ID, SpaceID: c.SpaceID, OrganizationID: c.OrganizationID, UnitID: c.UnitID,
		RevisionID: c.RevisionID, RevisionNum: c.RevisionNum, Path: c.Path, Text: c.Text, ReplyToID: c.ReplyToID, UserID: c.UserID,
		UserAgent: c.UserAgent, HiddenReason: c.HiddenReason, EntityType: reviewcomment.EntityType, CreatedAt: c.CreatedAt.UTC(),
		UpdatedAt: c.UpdatedAt.UTC(), Version: c.Version}
}

func reviewCommentFields(b *api.ReviewComment) reviewcomment.Fields {
	return reviewcomment.Fields{RevisionID: b.RevisionID, RevisionNum: b.RevisionNum, Path: b.Path, Text: b.Text, ReplyToID: b.ReplyToID}
}
