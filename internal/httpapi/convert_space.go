package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/space"
)

// spaceEdge serves the Space operations (edge_space.gen.go).
var spaceEdge = &edge[space.Space, space.Fields, api.Space, api.ExtendedSpace]{
	service: served(space.Family),
	listing: space.ListEntity,
	toAPI:   spaceToAPI,
	fields:  spaceFields,
	relations: []relation[space.Space]{
		byID("ComponentID", func(s space.Space) []uuid.UUID { return optionalID(s.ComponentID) }, componentEdge.load)},
	extended: func(s space.Space, a api.Space, r *related) api.ExtendedSpace {
		return api.ExtendedSpace{Space: a, Organization: r.organization, Component: relatedOptional[api.Component](r, "ComponentID", s.ComponentID)}
	},
}

func spaceToAPI(s space.Space) api.Space {
	return api.Space{
		SpaceID: s.ID, OrganizationID: s.OrganizationID, Slug: s.Slug, DisplayName: s.DisplayName,
		Labels: s.Labels, Annotations: s.Annotations, DeleteGates: s.DeleteGates,
		Permissions: permissionsToAPI(s.Permissions), ComponentID: s.ComponentID,
		TriggerIDs: s.TriggerIDs, HiddenReason: s.HiddenReason, EntityType: space.EntityType,
		CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), Version: s.Version,
	}
}

func spaceFields(b *api.Space) space.Fields {
	return space.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		ComponentID: b.ComponentID,
	}
}
