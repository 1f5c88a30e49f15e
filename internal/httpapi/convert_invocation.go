package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/invocation"
)

// invocationEdge serves the Invocation operations (edge_invocation.gen.go).
var invocationEdge = &edge[invocation.Invocation, invocation.Fields, api.Invocation, api.ExtendedInvocation]{
	service:   served(invocation.Family),
	listing:   invocation.ListEntity,
	toAPI:     invocationToAPI,
	fields:    invocationFields,
	relations: []relation[invocation.Invocation]{inSpace[invocation.Invocation]()},
	extended: func(i invocation.Invocation, a api.Invocation, r *related) api.ExtendedInvocation {
		return api.ExtendedInvocation{Invocation: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", i.SpaceID)}
	},
}

func invocationToAPI(i invocation.Invocation) api.Invocation {
	return api.Invocation{InvocationID: i.ID, SpaceID: i.SpaceID, OrganizationID: i.OrganizationID, Slug: i.Slug,
		DisplayName: i.DisplayName, Labels: i.Labels, Annotations: i.Annotations, DeleteGates: i.DeleteGates,
		ToolchainType: api.ToolchainType(i.ToolchainType), FunctionInvocations: functionInvocationsToAPI(i.FunctionInvocations),
		Parameters: parametersToAPI(i.Parameters), BridgeWorkerID: i.BridgeWorkerID, Hash: i.Hash, HiddenReason: i.HiddenReason,
		EntityType: invocation.EntityType, CreatedAt: i.CreatedAt.UTC(), UpdatedAt: i.UpdatedAt.UTC(), Version: i.Version}
}

func invocationFields(b *api.Invocation) invocation.Fields {
	return invocation.Fields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		ToolchainType: string(b.ToolchainType), FunctionInvocations: functionInvocationsFromAPI(b.FunctionInvocations),
		Parameters: parametersFromAPI(b.Parameters), BridgeWorkerID: b.BridgeWorkerID}
}
