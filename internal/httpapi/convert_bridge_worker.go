package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/org"
)

// bridgeWorkerEdge serves the BridgeWorker operations (edge_bridge_worker.gen.go): include=UserID expands its bot User.
var bridgeWorkerEdge = &edge[bridgeworker.BridgeWorker, bridgeworker.Fields, api.BridgeWorker, api.ExtendedBridgeWorker]{
	service: func(d *Deps) kitService[bridgeworker.BridgeWorker, bridgeworker.Fields] { return d.BridgeWorkers },
	listing: bridgeworker.ListEntity,
	toAPI:   bridgeWorkerToAPI,
	fields:  bridgeWorkerFields,
	relations: []relation[bridgeworker.BridgeWorker]{
		inSpace[bridgeworker.BridgeWorker](),
		byID("UserID", func(w bridgeworker.BridgeWorker) []uuid.UUID { return []uuid.UUID{w.UserID} }, loadUsers)},
	extended: func(w bridgeworker.BridgeWorker, a api.BridgeWorker, r *related) api.ExtendedBridgeWorker {
		return api.ExtendedBridgeWorker{BridgeWorker: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", w.SpaceID),
			User: relatedOne[api.User](r, "UserID", w.UserID)}
	},
}

func bridgeWorkerToAPI(w bridgeworker.BridgeWorker) api.BridgeWorker {
	condition := "Disconnected"
	if w.Ready() {
		condition = "Ready"
	}
	return api.BridgeWorker{BridgeWorkerID: w.ID, SpaceID: w.SpaceID, OrganizationID: w.OrganizationID, UserID: w.UserID, Slug: w.Slug,
		DisplayName: w.DisplayName, Labels: w.Labels, Annotations: w.Annotations, DeleteGates: w.DeleteGates,
		Permissions: permissionsToAPI(w.Permissions), OrgRole: api.OrgRole(w.OrgRole), Secret: w.Secret, Condition: condition,
		LastSeenAt: utcPtr(w.LastSeenAt), ClaimTTLSeconds: w.ClaimTTLSeconds, ProvidedInfo: workerInfoToAPI(w.ProvidedInfo), HiddenReason: w.HiddenReason, EntityType: bridgeworker.EntityType,
		CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC(), Version: w.Version}
}

func bridgeWorkerFields(b *api.BridgeWorker) bridgeworker.Fields {
	types := make([]bridgeworker.SupportedConfigType, len(b.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes))
	for i, t := range b.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes {
		types[i] = bridgeworker.SupportedConfigType{ToolchainType: string(t.ToolchainType), ProviderType: t.ProviderType, LiveStateType: t.LiveStateType}
	}
	return bridgeworker.Fields{BotFields: org.BotFields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}, OrgRole: auth.Role(b.OrgRole)},
		ClaimTTLSeconds: b.ClaimTTLSeconds, ProvidedInfo: bridgeworker.WorkerInfo{BridgeWorkerInfo: bridgeworker.BridgeWorkerInfo{SupportedConfigTypes: types}}}
}

func workerInfoToAPI(info bridgeworker.WorkerInfo) api.WorkerInfo {
	types := make([]api.SupportedConfigType, len(info.BridgeWorkerInfo.SupportedConfigTypes))
	for i, t := range info.BridgeWorkerInfo.SupportedConfigTypes {
		types[i] = api.SupportedConfigType{ToolchainType: api.ToolchainType(t.ToolchainType), ProviderType: t.ProviderType, LiveStateType: t.LiveStateType}
	}
	return api.WorkerInfo{BridgeWorkerInfo: api.BridgeWorkerInfo{SupportedConfigTypes: types}}
}
