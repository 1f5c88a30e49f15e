package httpapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/channel"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
)

// commandRunAPI serves the bot protocol of Channels (lease, poll, result) and CommandRuns.
type commandRunAPI struct{ *base }

func runToAPI(r channel.Run) api.CommandRun {
	var result any
	if r.Result != nil {
		result = r.Result
	}
	return api.CommandRun{CommandRunID: r.ID, ChannelID: r.ChannelID, SpaceID: r.SpaceID, OrganizationID: r.OrganizationID,
		Command: r.Command, Status: api.CommandRunStatus(r.Status), Options: r.Options, Parameters: r.Parameters, Result: result,
		ErrorMessage: r.ErrorMessage, Deadline: r.Deadline.UTC(), CreatedAt: r.CreatedAt.UTC(), DeliveredAt: utcPtr(r.DeliveredAt),
		CompletedAt: utcPtr(r.CompletedAt), UserID: r.UserID, EntityType: channel.RunEntityType}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func eventToAPI(e event.Entry) api.EventLogEntry {
	return api.EventLogEntry{CursorID: e.CursorID, EventType: e.EventType, SpaceID: e.SpaceID, TargetID: e.TargetID,
		SubjectEntityType: e.SubjectEntityType, SubjectEntityID: e.SubjectEntityID, Payload: e.Payload, CreatedAt: e.CreatedAt.UTC()}
}

func (h commandRunAPI) AcquireChannelLease(ctx context.Context, r api.AcquireChannelLeaseRequestObject) (api.AcquireChannelLeaseResponseObject, error) {
	sc := scopeOf(ctx)
	var body api.ChannelLeaseRequest
	if r.Body != nil {
		body = *r.Body
	}
	l, err := h.s.deps.Channels.AcquireLease(ctx, sc, r.SpaceId, r.ChannelId, body.Commands, body.HolderAddress)
	if err != nil {
		return nil, err
	}
	return api.AcquireChannelLease200JSONResponse{Body: api.ChannelLease{ClaimToken: l.ClaimToken, ExpiresAt: l.ExpiresAt.UTC(), LeaseSeconds: l.LeaseSeconds}}, nil
}

func (h commandRunAPI) ReleaseChannelLease(ctx context.Context, r api.ReleaseChannelLeaseRequestObject) (api.ReleaseChannelLeaseResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Channels.ReleaseLease(ctx, sc, r.SpaceId, r.ChannelId, r.Params.ClaimToken); err != nil {
		return nil, err
	}
	return api.ReleaseChannelLease204Response{}, nil
}

func (h commandRunAPI) PollChannel(ctx context.Context, r api.PollChannelRequestObject) (api.PollChannelResponseObject, error) {
	return longPoll(ctx, h.s, func() (*event.Poll[channel.Message], error) {
		timeout, maxRuns := channel.DefaultPollSeconds, channel.DefaultMaxRuns
		if r.Body.TimeoutSeconds != nil {
			timeout = *r.Body.TimeoutSeconds
		}
		if r.Body.MaxRuns != nil {
			maxRuns = *r.Body.MaxRuns
		}
		if timeout < 0 || timeout > channel.MaxPollSeconds {
			return nil, apierr.Validation("TimeoutSeconds is 0 to 60", apierr.Item{Item: "TimeoutSeconds", Description: "out of range"})
		}
		return h.s.deps.Channels.Poll(ctx, scopeOf(ctx), r.SpaceId, r.ChannelId, r.Body.ClaimToken, time.Duration(timeout)*time.Second, maxRuns)
	}, h.s.channelMessages, api.PollChannelResponseObject.VisitPollChannelResponse, api.PollChannelResponseObject(parkedResponse{}))
}

// channelMessages is a Channel poll's answer: 204 when nothing arrived.
func (s *Server) channelMessages(msgs []channel.Message) (api.PollChannelResponseObject, error) {
	if len(msgs) == 0 {
		return api.PollChannel204Response{}, nil
	}
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		var err error
		if m.Run != nil {
			out[i], err = json.Marshal(api.ChannelCommandRunMessage{Type: api.ChannelCommandRunMessageTypeCommandRun, CommandRun: runToAPI(*m.Run)})
		} else {
			out[i], err = s.events.message(m.Event)
		}
		if err != nil {
			return nil, err
		}
	}
	return newJSONArray(out), nil
}

func (h commandRunAPI) ReportCommandRunResult(ctx context.Context, r api.ReportCommandRunResultRequestObject) (api.ReportCommandRunResultResponseObject, error) {
	sc := scopeOf(ctx)
	var result json.RawMessage
	if r.Body.Result != nil {
		b, err := json.Marshal(r.Body.Result)
		if err != nil {
			return nil, apierr.UserInput("Result is not JSON: " + err.Error())
		}
		result = b
	}
	run, err := h.s.deps.Channels.ReportResult(ctx, sc, r.SpaceId, r.ChannelId, r.CommandRunId, string(r.Body.Status), result, r.Body.ErrorMessage)
	if err != nil {
		return nil, err
	}
	return api.ReportCommandRunResult200JSONResponse{Body: runToAPI(run)}, nil
}

func (h commandRunAPI) CreateCommandRun(ctx context.Context, r api.CreateCommandRunRequestObject) (api.CreateCommandRunResponseObject, error) {
	sc := scopeOf(ctx)
	b := r.Body
	run, err := h.s.deps.Channels.CreateRun(ctx, sc, channel.RunRequest{Command: b.Command, SpaceID: b.SpaceID, ChannelID: b.ChannelID,
		Options: b.Options, Parameters: b.Parameters, DeadlineSeconds: b.DeadlineSeconds})
	if err != nil {
		return nil, err
	}
	return api.CreateCommandRun200JSONResponse{Body: runToAPI(run)}, nil
}

func (h commandRunAPI) ListAllCommandRuns(ctx context.Context, r api.ListAllCommandRunsRequestObject) (api.ListAllCommandRunsResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	return h.listRuns(ctx, scopeOf(ctx), nil, "", params)
}

func (h commandRunAPI) ListCommandRuns(ctx context.Context, r api.ListCommandRunsRequestObject) (api.ListCommandRunsResponseObject, error) {
	params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)
	if err != nil {
		return nil, err
	}
	return h.listRuns(ctx, scopeOf(ctx), &r.SpaceId, r.ChannelId, params)
}

func (h commandRunAPI) listRuns(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, ref string, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Channels.ListRuns(ctx, sc, spaceID, ref, requestPath(ctx), params)
	return listed(ctx, sc, page, err, channel.RunEntityType, h.extendRuns)
}

// runRelations are what include expands of a CommandRun.
var runRelations = []relation[channel.Run]{
	byID("SpaceID", func(r channel.Run) []uuid.UUID { return []uuid.UUID{r.SpaceID} }, spaceEdge.load),
}

func (h commandRunAPI) extendRuns(ctx context.Context, sc authz.Scope, runs []channel.Run, includes map[string]bool) ([]api.ExtendedCommandRun, error) {
	return extendAll(ctx, h.base, sc, runs, includes, runRelations, func(run channel.Run, r *related) api.ExtendedCommandRun {
		return api.ExtendedCommandRun{CommandRun: runToAPI(run), Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", run.SpaceID)}
	})
}

func (h commandRunAPI) GetCommandRun(ctx context.Context, r api.GetCommandRunRequestObject) (api.GetCommandRunResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, channel.RunListEntity, r.Params.Select, r.Params.Include, func() (channel.Run, error) {
		return h.s.deps.Channels.GetRun(ctx, sc, r.SpaceId, r.ChannelId, r.CommandRunId)
	}, h.extendRuns)
}

func (h commandRunAPI) CancelCommandRun(ctx context.Context, r api.CancelCommandRunRequestObject) (api.CancelCommandRunResponseObject, error) {
	sc := scopeOf(ctx)
	run, err := h.s.deps.Channels.CancelRun(ctx, sc, r.SpaceId, r.ChannelId, r.CommandRunId)
	if err != nil {
		return nil, err
	}
	return api.CancelCommandRun200JSONResponse{Body: runToAPI(run)}, nil
}
