package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/changeset"
	"github.com/hubd/hubd/internal/entity"
)

// changeSetEdge serves the ChangeSet operations (edge_change_set.gen.go; the deletes, which take detach,
// are in change_set.go).
var changeSetEdge = &edge[changeset.ChangeSet, changeset.Fields, api.ChangeSet, api.ExtendedChangeSet]{
	service: served(changeset.Family),
	listing: changeset.ListEntity,
	toAPI:   changeSetToAPI,
	fields:  changeSetFields,
	relations: []relation[changeset.ChangeSet]{inSpace[changeset.ChangeSet](),
		byID("StartTagID", func(c changeset.ChangeSet) []uuid.UUID { return optionalID(c.StartTagID) }, tagEdge.load),
		byID("EndTagID", func(c changeset.ChangeSet) []uuid.UUID { return optionalID(c.EndTagID) }, tagEdge.load),
	},
	extended: func(c changeset.ChangeSet, a api.ChangeSet, r *related) api.ExtendedChangeSet {
		return api.ExtendedChangeSet{ChangeSet: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", c.SpaceID),
			StartTag: relatedOptional[api.Tag](r, "StartTagID", c.StartTagID), EndTag: relatedOptional[api.Tag](r, "EndTagID", c.EndTagID)}
	},
}

func changeSetToAPI(c changeset.ChangeSet) api.ChangeSet {
	reviews := make([]api.ChangeSetReviewRequest, len(c.ReviewRequests))
	for i, r := range c.ReviewRequests {
		reviews[i] = api.ChangeSetReviewRequest{UserID: r.UserID, Status: api.ChangeSetReviewStatus(r.Status)}
	}
	spaces := c.InScopeSpaceIDs
	if spaces == nil {
		spaces = []uuid.UUID{}
	}
	var workflow *api.ChangeWorkflowSpec
	if c.ChangeWorkflow != nil {
		w := changeWorkflowSpecToAPI(*c.ChangeWorkflow)
		workflow = &w
	}
	return api.ChangeSet{
		ChangeSetID: c.ID, SpaceID: c.SpaceID, OrganizationID: c.OrganizationID, UserID: c.UserID, Slug: c.Slug, DisplayName: c.DisplayName,
		Description: c.Description, Labels: c.Labels, Annotations: c.Annotations, DeleteGates: c.DeleteGates,
		Permissions: permissionsToAPI(c.Permissions), State: api.ChangeSetState(c.State), CloseOverride: c.CloseOverride,
		ReviewRequests: reviews, InScopeSpaceIDs: spaces, ChangeWorkflowID: c.ChangeWorkflowID, ChangeWorkflow: workflow,
		StartTagID: c.StartTagID, EndTagID: c.EndTagID, StartTagIsPriorRevision: c.StartTagIsPriorRevision,
		HiddenReason: c.HiddenReason, EntityType: changeset.EntityType, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
		Version: c.Version,
	}
}

func changeSetFields(b *api.ChangeSet) changeset.Fields {
	var reviews []changeset.ReviewRequest
	for _, r := range b.ReviewRequests {
		reviews = append(reviews, changeset.ReviewRequest{UserID: r.UserID, Status: string(r.Status)})
	}
	return changeset.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		Description: b.Description, State: string(b.State), CloseOverride: b.CloseOverride, ReviewRequests: reviews,
		InScopeSpaceIDs: b.InScopeSpaceIDs, ChangeWorkflowID: b.ChangeWorkflowID,
	}
}
