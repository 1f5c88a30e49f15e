package httpapi

import (
	"context"
	"time"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/event"
)

// bridgeWorkerAPI serves the worker event-cursor protocol (edge_bridge_worker.gen.go serves the
// BridgeWorker operations).
type bridgeWorkerAPI struct{ *base }

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
