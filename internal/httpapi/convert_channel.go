package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/channel"
	"github.com/hubd/hubd/internal/entity"
)

// channelEdge serves the Channel operations (edge_channel.gen.go; its lease, polls and command runs are
// command_run.go's).
var channelEdge = &edge[channel.Channel, channel.Fields, api.Channel, api.ExtendedChannel]{
	service: func(d *Deps) kitService[channel.Channel, channel.Fields] { return d.Channels },
	listing: channel.ListEntity,
	toAPI:   channelToAPI,
	fields:  channelFields,
	relations: []relation[channel.Channel]{
		inSpace[channel.Channel]()},
	extended: func(c channel.Channel, a api.Channel, r *related) api.ExtendedChannel {
		return api.ExtendedChannel{Channel: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", c.SpaceID)}
	},
}

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
	return channel.Fields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		Commands: commands, Subscriptions: subs, EventBookmark: b.EventBookmark}
}
