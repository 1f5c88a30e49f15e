package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/trigger"
)

// triggerEdge serves the Trigger operations (edge_trigger.gen.go).
var triggerEdge = &edge[trigger.Trigger, trigger.Fields, api.Trigger, api.ExtendedTrigger]{
	service: served(trigger.Family),
	listing: trigger.ListEntity,
	toAPI:   triggerToAPI,
	fields:  triggerFields,
	relations: []relation[trigger.Trigger]{inSpace[trigger.Trigger](),
		byID("UnitFilterID", func(t trigger.Trigger) []uuid.UUID { return optionalID(t.UnitFilterID) }, filterEdge.load),
		byID("InvocationID", func(t trigger.Trigger) []uuid.UUID { return optionalID(t.InvocationID) }, invocationEdge.load)},
	extended: func(t trigger.Trigger, a api.Trigger, r *related) api.ExtendedTrigger {
		return api.ExtendedTrigger{Trigger: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", t.SpaceID),
			UnitFilter: relatedOptional[api.Filter](r, "UnitFilterID", t.UnitFilterID), Invocation: relatedOptional[api.Invocation](r, "InvocationID", t.InvocationID)}
	},
}

func triggerToAPI(t trigger.Trigger) api.Trigger {
	return api.Trigger{TriggerID: t.ID, SpaceID: t.SpaceID, OrganizationID: t.OrganizationID, Slug: t.Slug, DisplayName: t.DisplayName,
		Description: t.Description, Labels: t.Labels, Annotations: t.Annotations, DeleteGates: t.DeleteGates, Event: t.Event,
		ToolchainType: api.ToolchainType(t.ToolchainType), FunctionName: t.FunctionName, Arguments: argumentsToAPI(t.Arguments), WhereResource: t.WhereResource,
		Guards: t.Guards, Clearance: clearanceToAPI(t.Clearance), Protect: t.Protect, Params: t.Params, OtherDataSource: t.OtherDataSource,
		FailOpenAfter: t.FailOpenAfter, WhereUnit: t.WhereUnit, UnitFilterID: t.UnitFilterID, InvocationID: t.InvocationID,
		BridgeWorkerID: t.BridgeWorkerID, Validating: t.Validating(), Warn: t.Warn, Disabled: t.Disabled, Hash: t.Hash,
		HiddenReason: t.HiddenReason, EntityType: trigger.EntityType, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(), Version: t.Version}
}

func triggerFields(b *api.Trigger) trigger.Fields {
	return trigger.Fields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		Description: b.Description, Event: b.Event,
		ToolchainType: string(b.ToolchainType), FunctionName: b.FunctionName, Arguments: argumentsFromAPI(b.Arguments), WhereResource: b.WhereResource,
		Guards: b.Guards, Clearance: clearanceFromAPI(b.Clearance), Protect: b.Protect, Params: b.Params, OtherDataSource: b.OtherDataSource,
		FailOpenAfter: b.FailOpenAfter, WhereUnit: b.WhereUnit, UnitFilterID: b.UnitFilterID, InvocationID: b.InvocationID,
		BridgeWorkerID: b.BridgeWorkerID, Warn: b.Warn, Disabled: b.Disabled}
}

func clearanceToAPI(c []function.Requirement) api.Clearance {
	out := make(api.Clearance, len(c))
	for i, r := range c {
		out[i].Key, out[i].Operator, out[i].Values = r.Key, api.ClearanceOperator(r.Operator), r.Values
		if out[i].Values == nil {
			out[i].Values = []string{}
		}
	}
	return out
}

func clearanceFromAPI(c api.Clearance) []function.Requirement {
	out := make([]function.Requirement, len(c))
	for i, r := range c {
		out[i] = function.Requirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values}
	}
	return out
}
