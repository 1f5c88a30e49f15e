package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/channel"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
)

// channelAPI serves the Channel operations.
type channelAPI struct{ *base }

func channelToAPI(c channel.Channel) api.Channel {
	commands := map[string]api.ChannelCommand{}
	for name, cmd := range c.Commands {
		opts := make([]api.ChannelCommandOption, len(cmd.Options))
		for i, o := range cmd.Options {
			opts[i] = api.ChannelCommandOption{Name: o.Name, DataType: api.ChannelCommandOptionDataType(o.DataType), Required: o.Required}
		}
		commands[name] = api.ChannelCommand{Description: cmd.Description, Options: opts}
	}
	subs := make([]api.ChannelSubscription, len(c.Subscriptions))
	for i, s := range c.Subscriptions {
		subs[i] = api.ChannelSubscription{EventTypes: s.EventTypes, TargetID: s.TargetID}
	}
	condition := "Disconnected"
	if c.Connected {
		condition = "Connected"
	}
	return api.Channel{ChannelID: c.ID, SpaceID: c.SpaceID, OrganizationID: c.OrganizationID, Slug: c.Slug, DisplayName: c.DisplayName,
		Labels: c.Labels, Annotations: c.Annotations, DeleteGates: c.DeleteGates, Permissions: permissionsToAPI(c.Permissions),
		Commands: commands, Subscriptions: subs, EventBookmark: c.EventBookmark, Condition: condition, LastSeenAt: c.LastSeenAt,
		LeaseHolderAddress: c.LeaseHolderAddress, HiddenReason: c.HiddenReason, EntityType: channel.EntityType,
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(), Version: c.Version}
}

func channelFields(b *api.Channel) channel.Fields {
	commands := map[string]channel.Command{}
	for name, cmd := range b.Commands {
		opts := make([]channel.Option, len(cmd.Options))
		for i, o := range cmd.Options {
			opts[i] = channel.Option{Name: o.Name, DataType: string(o.DataType), Required: o.Required}
		}
		commands[name] = channel.Command{Description: cmd.Description, Options: opts}
	}
	subs := make([]channel.Subscription, len(b.Subscriptions))
	for i, s := range b.Subscriptions {
		subs[i] = channel.Subscription{EventTypes: s.EventTypes, TargetID: s.TargetID}
	}
	return channel.Fields{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
		Commands: commands, Subscriptions: subs, EventBookmark: b.EventBookmark,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}
}

func (h channelAPI) ListAllChannels(ctx context.Context, r api.ListAllChannelsRequestObject) (api.ListAllChannelsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listChannels(ctx, sc, nil, listParams(ctx, r.Params))
}

func (h channelAPI) ListChannels(ctx context.Context, r api.ListChannelsRequestObject) (api.ListChannelsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listChannels(ctx, sc, &r.SpaceId, listParams(ctx, r.Params))
}

func (h channelAPI) listChannels(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Channels.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, channel.EntityType, h.extendChannels)
}

func (h channelAPI) extendChannels(ctx context.Context, sc authz.Scope, cs []channel.Channel, includes map[string]bool) ([]api.ExtendedChannel, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		ids[i] = c.SpaceID
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], ids)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedChannel, len(cs))
	for i, c := range cs {
		out[i] = api.ExtendedChannel{Channel: channelToAPI(c), Organization: org}
		if sp, ok := spaces[c.SpaceID]; ok {
			out[i].Space = &sp
		}
	}
	return out, nil
}

func (h channelAPI) GetChannel(ctx context.Context, r api.GetChannelRequestObject) (api.GetChannelResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, channel.ListEntity, r.Params.Select, r.Params.Include, func() (channel.Channel, error) {
		return h.s.deps.Channels.Get(ctx, sc, r.SpaceId, r.ChannelId)
	}, h.extendChannels)
}

func (h channelAPI) CreateChannel(ctx context.Context, r api.CreateChannelRequestObject) (api.CreateChannelResponseObject, error) {
	sc := scopeOf(ctx)
	c, err := h.s.deps.Channels.Create(ctx, sc, r.SpaceId, channelFields(r.Body), entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateChannel200JSONResponse{Body: channelToAPI(c)}, nil
}

func (h channelAPI) UpdateChannel(ctx context.Context, r api.UpdateChannelRequestObject) (api.UpdateChannelResponseObject, error) {
	sc := scopeOf(ctx)
	c, err := h.s.deps.Channels.Update(ctx, sc, r.SpaceId, r.ChannelId, r.Body.Version, channelFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateChannel200JSONResponse{Body: channelToAPI(c)}, nil
}

func (h channelAPI) PatchChannel(ctx context.Context, r api.PatchChannelRequestObject) (api.PatchChannelResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	c, err := h.s.deps.Channels.Patch(ctx, sc, r.SpaceId, r.ChannelId, patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchChannel200JSONResponse{Body: channelToAPI(c)}, nil
}

func (h channelAPI) DeleteChannel(ctx context.Context, r api.DeleteChannelRequestObject) (api.DeleteChannelResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Channels.Delete(ctx, sc, r.SpaceId, r.ChannelId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteChannel200JSONResponse{Body: deleted(channel.EntityType)}, nil
}
