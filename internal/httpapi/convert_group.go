package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/group"
)

// groupEdge serves the Group operations (edge_group.gen.go): include=UserIDs expands the members the caller
// may see.
var groupEdge = &edge[group.Group, group.Fields, api.Group, api.ExtendedGroup]{
	service:   served(group.Family),
	listing:   group.ListEntity,
	toAPI:     groupToAPI,
	fields:    groupFields,
	relations: []relation[group.Group]{byID("UserIDs", func(g group.Group) []uuid.UUID { return g.UserIDs }, loadUsers)},
	extended: func(g group.Group, a api.Group, r *related) api.ExtendedGroup {
		return api.ExtendedGroup{Group: a, Organization: r.organization, Users: relatedList[api.User](r, "UserIDs", g.UserIDs)}
	},
}

func groupToAPI(g group.Group) api.Group {
	return api.Group{GroupID: g.ID, OrganizationID: g.OrganizationID, Slug: g.Slug, DisplayName: g.DisplayName,
		UserIDs: g.UserIDs, Labels: g.Labels, Annotations: g.Annotations, DeleteGates: g.DeleteGates,
		HiddenReason: g.HiddenReason, EntityType: group.EntityType, CreatedAt: g.CreatedAt.UTC(), UpdatedAt: g.UpdatedAt.UTC(),
		Version: g.Version}
}

func groupFields(b *api.Group) group.Fields {
	return group.Fields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}, UserIDs: b.UserIDs}
}
