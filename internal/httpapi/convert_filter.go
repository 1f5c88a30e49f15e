package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
)

// filterEdge serves the Filter operations (edge_filter.gen.go).
var filterEdge = &edge[filter.Filter, filter.Fields, api.Filter, api.ExtendedFilter]{
	service:   served(filter.Family),
	listing:   filter.ListEntity,
	toAPI:     filterToAPI,
	fields:    filterFields,
	relations: []relation[filter.Filter]{inSpace[filter.Filter]()},
	extended: func(f filter.Filter, a api.Filter, r *related) api.ExtendedFilter {
		return api.ExtendedFilter{Filter: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", f.SpaceID)}
	},
}

func filterToAPI(f filter.Filter) api.Filter {
	return api.Filter{
		FilterID: f.ID, SpaceID: f.SpaceID, OrganizationID: f.OrganizationID, Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: f.Labels, Annotations: f.Annotations, DeleteGates: f.DeleteGates, Permissions: permissionsToAPI(f.Permissions),
		From: f.From, Where: f.Where, WhereData: f.WhereData, ResourceType: f.ResourceType, FromSpaceID: f.FromSpaceID,
		IncludeHidden: f.IncludeHidden, Hash: f.Hash, UpstreamFilterID: f.UpstreamFilterID, BackingUnitID: f.BackingUnitID,
		HiddenReason: f.HiddenReason, EntityType: filter.EntityType, CreatedAt: f.CreatedAt.UTC(), UpdatedAt: f.UpdatedAt.UTC(),
		Version: f.Version,
	}
}

func filterFields(b *api.Filter) filter.Fields {
	return filter.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		From: b.From, Where: b.Where, WhereData: b.WhereData, ResourceType: b.ResourceType, FromSpaceID: b.FromSpaceID,
		IncludeHidden: b.IncludeHidden,
	}
}
