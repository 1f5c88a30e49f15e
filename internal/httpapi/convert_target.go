package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/target"
)

// targetEdge serves the Target operations (edge_target.gen.go): include=BridgeWorkerID expands its
// BridgeWorker; Triggers are not related to Targets yet (include=TriggerIDs answers []).
var targetEdge = &edge[target.Target, target.Fields, api.Target, api.ExtendedTarget]{
	service: served(target.Family),
	listing: target.ListEntity,
	toAPI:   targetToAPI,
	fields:  targetFields,
	relations: []relation[target.Target]{
		inSpace[target.Target](),
		byID("BridgeWorkerID", func(t target.Target) []uuid.UUID { return optionalID(t.BridgeWorkerID) }, bridgeWorkerEdge.load)},
	extended: func(t target.Target, a api.Target, r *related) api.ExtendedTarget {
		return api.ExtendedTarget{Target: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", t.SpaceID),
			BridgeWorker: relatedOptional[api.BridgeWorker](r, "BridgeWorkerID", t.BridgeWorkerID), Triggers: unservedList[api.Trigger](r.includes, "TriggerIDs")}
	},
}

func targetToAPI(t target.Target) api.Target {
	return api.Target{
		TargetID: t.ID, SpaceID: t.SpaceID, OrganizationID: t.OrganizationID, Slug: t.Slug, DisplayName: t.DisplayName,
		Labels: t.Labels, Annotations: t.Annotations, DeleteGates: t.DeleteGates, Permissions: permissionsToAPI(t.Permissions),
		ToolchainType: api.ToolchainType(t.ToolchainType), ProviderType: api.TargetProviderType(t.ProviderType), BridgeWorkerID: t.BridgeWorkerID, BridgeHandle: t.BridgeHandle,
		Options: t.Options, Facts: t.Facts, LiveStateType: t.LiveStateType, ConfigTypes: []map[string]interface{}{},
		TriggerFilterID: nil, TriggerHash: "", TriggerIDs: []uuid.UUID{}, HiddenReason: t.HiddenReason,
		EntityType: target.EntityType, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(), Version: t.Version,
	}
}

func targetFields(b *api.Target) target.Fields {
	return target.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		ToolchainType: string(b.ToolchainType), ProviderType: string(b.ProviderType), BridgeWorkerID: b.BridgeWorkerID,
		BridgeHandle: b.BridgeHandle, Options: b.Options, Facts: b.Facts, LiveStateType: b.LiveStateType,
	}
}
