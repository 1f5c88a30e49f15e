package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/entity"
)

// changeOrderEdge serves the ChangeOrder operations (edge_change_order.gen.go; the deletes, which take
// detach, are in change_order.go).
var changeOrderEdge = &edge[changeorder.ChangeOrder, changeorder.Fields, api.ChangeOrder, api.ExtendedChangeOrder]{
	service: served(changeorder.Family),
	listing: changeorder.ListEntity,
	toAPI:   changeOrderToAPI,
	fields:  changeOrderFields,
	relations: []relation[changeorder.ChangeOrder]{inSpace[changeorder.ChangeOrder](),
		byID("StartTagID", func(c changeorder.ChangeOrder) []uuid.UUID { return optionalID(c.StartTagID) }, tagEdge.load),
		byID("EndTagID", func(c changeorder.ChangeOrder) []uuid.UUID { return optionalID(c.EndTagID) }, tagEdge.load),
		byID("RestoreTagID", func(c changeorder.ChangeOrder) []uuid.UUID { return optionalID(c.RestoreTagID) }, tagEdge.load),
		byID("InvocationID", func(c changeorder.ChangeOrder) []uuid.UUID { return optionalID(c.InvocationID) }, invocationEdge.load),
		byID("SpaceFilterID", func(c changeorder.ChangeOrder) []uuid.UUID { return optionalID(c.SpaceFilterID) }, filterEdge.load),
		byID("UnitFilterID", func(c changeorder.ChangeOrder) []uuid.UUID { return optionalID(c.UnitFilterID) }, filterEdge.load)},
	extended: func(c changeorder.ChangeOrder, a api.ChangeOrder, r *related) api.ExtendedChangeOrder {
		return api.ExtendedChangeOrder{ChangeOrder: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", c.SpaceID),
			StartTag: relatedOptional[api.Tag](r, "StartTagID", c.StartTagID), EndTag: relatedOptional[api.Tag](r, "EndTagID", c.EndTagID),
			RestoreTag:  relatedOptional[api.Tag](r, "RestoreTagID", c.RestoreTagID),
			Invocation:  relatedOptional[api.Invocation](r, "InvocationID", c.InvocationID),
			SpaceFilter: relatedOptional[api.Filter](r, "SpaceFilterID", c.SpaceFilterID),
			UnitFilter:  relatedOptional[api.Filter](r, "UnitFilterID", c.UnitFilterID)}
	},
}

func changeOrderToAPI(c changeorder.ChangeOrder) api.ChangeOrder {
	overrides := make([]api.ChangeOrderPromotionOverride, len(c.PromotionOverrides))
	for i, o := range c.PromotionOverrides {
		prereqs := o.Prerequisites
		if prereqs == nil {
			prereqs = []string{}
		}
		overrides[i] = api.ChangeOrderPromotionOverride{Stage: o.Stage, Prerequisites: prereqs, Reason: o.Reason, UserID: o.UserID,
			CreatedAt: o.CreatedAt.UTC()}
	}
	failures := make([]api.ChangeOrderPromotionFailure, len(c.PromotionFailures))
	for i, f := range c.PromotionFailures {
		failures[i] = api.ChangeOrderPromotionFailure{Stage: f.Stage, SpaceID: f.SpaceID, Prerequisite: f.Prerequisite, Message: f.Message,
			CreatedAt: f.CreatedAt.UTC()}
	}
	skipped := make(map[string]string, len(c.SkippedUnits))
	for id, why := range c.SkippedUnits {
		skipped[id.String()] = why
	}
	var workflow *api.ChangeWorkflowSpec
	if c.ChangeWorkflow != nil {
		w := changeWorkflowSpecToAPI(*c.ChangeWorkflow)
		workflow = &w
	}
	params := c.Parameters
	if params == nil {
		params = map[string]any{}
	}
	return api.ChangeOrder{
		ChangeOrderID: c.ID, SpaceID: c.SpaceID, OrganizationID: c.OrganizationID, Slug: c.Slug, DisplayName: c.DisplayName,
		Description: c.Description, Labels: c.Labels, Annotations: c.Annotations, DeleteGates: c.DeleteGates,
		Permissions: permissionsToAPI(c.Permissions), UpdateType: api.ChangeOrderUpdateType(c.UpdateType), WhereSpace: c.WhereSpace,
		WhereUnit: c.WhereUnit, SpaceFilterID: c.SpaceFilterID, UnitFilterID: c.UnitFilterID, InScopeSpaceIDs: nonNil(c.InScopeSpaceIDs),
		Parameters: params, InvocationID: c.InvocationID, ChangeWorkflowID: c.ChangeWorkflowID, ChangeWorkflow: workflow,
		AbortedReason: c.AbortedReason, State: api.ChangeOrderState(c.State), Stage: c.Stage, StartTagID: c.StartTagID,
		EndTagID: c.EndTagID, RestoreTagID: c.RestoreTagID, AdoptedEndTagID: c.AdoptedEndTagID, PromotionOverrides: overrides,
		PromotionFailures: failures, ResolvedSpaceIDs: nonNil(c.ResolvedSpaceIDs), ReleasedSpaceIDs: nonNil(c.ReleasedSpaceIDs),
		RestoredSpaceIDs: nonNil(c.RestoredSpaceIDs), ReleasedRestoredSpaceIDs: nonNil(c.ReleasedRestoredSpaceIDs), SkippedUnits: skipped,
		HiddenReason: c.HiddenReason, EntityType: changeorder.EntityType, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
		Version: c.Version,
	}
}

func nonNil(ids []uuid.UUID) []uuid.UUID {
	if ids == nil {
		return []uuid.UUID{}
	}
	return ids
}

func changeOrderFields(b *api.ChangeOrder) changeorder.Fields {
	return changeorder.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		Description: b.Description, UpdateType: string(b.UpdateType), WhereSpace: b.WhereSpace, WhereUnit: b.WhereUnit,
		SpaceFilterID: b.SpaceFilterID, UnitFilterID: b.UnitFilterID, InScopeSpaceIDs: b.InScopeSpaceIDs, Parameters: b.Parameters,
		InvocationID: b.InvocationID, ChangeWorkflowID: b.ChangeWorkflowID, AbortedReason: b.AbortedReason, EndTagID: b.EndTagID,
	}
}
