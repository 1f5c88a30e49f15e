package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
)

// bridgeWorkerAPI serves the BridgeWorker operations and the worker event-cursor protocol.
type bridgeWorkerAPI struct{ *base }

func bridgeWorkerToAPI(w bridgeworker.BridgeWorker) api.BridgeWorker {
	condition := "Disconnected"
	if w.Ready() {
		condition = "Ready"
	}
	return api.BridgeWorker{BridgeWorkerID: w.ID, SpaceID: w.SpaceID, OrganizationID: w.OrganizationID, UserID: w.UserID, Slug: w.Slug,
		DisplayName: w.DisplayName, Labels: w.Labels, Annotations: w.Annotations, DeleteGates: w.DeleteGates,
		Permissions: permissionsToAPI(w.Permissions), OrgRole: api.OrgRole(w.OrgRole), Secret: w.Secret, Condition: condition,
		LastSeenAt: utcPtr(w.LastSeenAt), HiddenReason: w.HiddenReason, EntityType: bridgeworker.EntityType,
		CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC(), Version: w.Version}
}

func bridgeWorkerFields(b *api.BridgeWorker) bridgeworker.Fields {
	return bridgeworker.Fields{Slug: b.Slug, DisplayName: b.DisplayName, OrgRole: auth.Role(b.OrgRole),
		Permissions: permissionsFromAPI(b.Permissions),
		Meta:        entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}
}

func (h bridgeWorkerAPI) ListAllBridgeWorkers(ctx context.Context, r api.ListAllBridgeWorkersRequestObject) (api.ListAllBridgeWorkersResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listBridgeWorkers(ctx, sc, nil, listParams(ctx, r.Params))
}

func (h bridgeWorkerAPI) ListBridgeWorkers(ctx context.Context, r api.ListBridgeWorkersRequestObject) (api.ListBridgeWorkersResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listBridgeWorkers(ctx, sc, &r.SpaceId, listParams(ctx, r.Params))
}

func (h bridgeWorkerAPI) listBridgeWorkers(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.BridgeWorkers.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, bridgeworker.EntityType, h.extendBridgeWorkers)
}

func (h bridgeWorkerAPI) extendBridgeWorkers(ctx context.Context, sc authz.Scope, ws []bridgeworker.BridgeWorker, includes map[string]bool) ([]api.ExtendedBridgeWorker, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(ws))
	for i, w := range ws {
		ids[i] = w.SpaceID
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], ids)
	if err != nil {
		return nil, err
	}
	userIDs := make([]uuid.UUID, len(ws))
	for i, w := range ws {
		userIDs[i] = w.UserID
	}
	users, err := h.includedUsers(ctx, sc, includes, userIDs)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedBridgeWorker, len(ws))
	for i, w := range ws {
		out[i] = api.ExtendedBridgeWorker{BridgeWorker: bridgeWorkerToAPI(w), Organization: org}
		if sp, ok := spaces[w.SpaceID]; ok {
			out[i].Space = &sp
		}
		if u, ok := users[w.UserID]; ok {
			out[i].User = &u
		}
	}
	return out, nil
}

func (h bridgeWorkerAPI) GetBridgeWorker(ctx context.Context, r api.GetBridgeWorkerRequestObject) (api.GetBridgeWorkerResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, bridgeworker.ListEntity, r.Params.Select, r.Params.Include, func() (bridgeworker.BridgeWorker, error) {
		return h.s.deps.BridgeWorkers.Get(ctx, sc, r.SpaceId, r.BridgeWorkerId)
	}, h.extendBridgeWorkers)
}

func (h bridgeWorkerAPI) CreateBridgeWorker(ctx context.Context, r api.CreateBridgeWorkerRequestObject) (api.CreateBridgeWorkerResponseObject, error) {
	sc := scopeOf(ctx)
	w, err := h.s.deps.BridgeWorkers.Create(ctx, sc, r.SpaceId, bridgeWorkerFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateBridgeWorker200JSONResponse{Body: bridgeWorkerToAPI(w)}, nil
}

func (h bridgeWorkerAPI) UpdateBridgeWorker(ctx context.Context, r api.UpdateBridgeWorkerRequestObject) (api.UpdateBridgeWorkerResponseObject, error) {
	sc := scopeOf(ctx)
	w, err := h.s.deps.BridgeWorkers.Update(ctx, sc, r.SpaceId, r.BridgeWorkerId, r.Body.Version, bridgeWorkerFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateBridgeWorker200JSONResponse{Body: bridgeWorkerToAPI(w)}, nil
}

func (h bridgeWorkerAPI) PatchBridgeWorker(ctx context.Context, r api.PatchBridgeWorkerRequestObject) (api.PatchBridgeWorkerResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	w, err := h.s.deps.BridgeWorkers.Patch(ctx, sc, r.SpaceId, r.BridgeWorkerId, patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchBridgeWorker200JSONResponse{Body: bridgeWorkerToAPI(w)}, nil
}

func (h bridgeWorkerAPI) DeleteBridgeWorker(ctx context.Context, r api.DeleteBridgeWorkerRequestObject) (api.DeleteBridgeWorkerResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.BridgeWorkers.Delete(ctx, sc, r.SpaceId, r.BridgeWorkerId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteBridgeWorker200JSONResponse{Body: deleted(bridgeworker.EntityType)}, nil
}

func (h bridgeWorkerAPI) PollBridgeWorkerEvents(ctx context.Context, r api.PollBridgeWorkerEventsRequestObject) (api.PollBridgeWorkerEventsResponseObject, error) {
	return longPoll(ctx, h.s, func() (*event.Poll[event.Entry], error) {
		b := r.Body
		if err := bridgeworker.ValidateName(r.Name, b.Name); err != nil {
			return nil, err
		}
		timeout, maxEvents := bridgeworker.DefaultPollSeconds, bridgeworker.DefaultMaxEvents
		if b.TimeoutSeconds != nil {
			timeout = *b.TimeoutSeconds
		}
		if b.MaxEvents != nil {
			maxEvents = *b.MaxEvents
		}
		if timeout < 0 || timeout > bridgeworker.MaxPollSeconds {
			return nil, apierr.Validation("TimeoutSeconds is 0 to 60", apierr.Item{Item: "TimeoutSeconds", Description: "out of range"})
		}
		if maxEvents < 1 || maxEvents > bridgeworker.MaxMaxEvents {
			return nil, apierr.Validation("MaxEvents is 1 to 500", apierr.Item{Item: "MaxEvents", Description: "out of range"})
		}
		sub := bridgeworker.Subscription{Name: r.Name, EventTypes: deref(b.EventTypes), SpaceID: b.SpaceID, TargetID: b.TargetID, FromCursor: b.FromCursor}
		return h.s.deps.BridgeWorkers.Poll(ctx, scopeOf(ctx), r.SpaceId, r.BridgeWorkerId, sub, time.Duration(timeout)*time.Second, maxEvents)
	}, func(events []event.Entry) (api.PollBridgeWorkerEventsResponseObject, error) {
		out := make([][]byte, len(events))
		for i := range events {
			var err error
			if out[i], err = h.s.events.entry(&events[i]); err != nil {
				return nil, err
			}
		}
		return newJSONArray(out), nil
	}, api.PollBridgeWorkerEventsResponseObject.VisitPollBridgeWorkerEventsResponse, api.PollBridgeWorkerEventsResponseObject(parkedResponse{}))
}
