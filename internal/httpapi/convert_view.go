package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/view"
)

// viewEdge serves the View operations (edge_view.gen.go).
var viewEdge = &edge[view.View, view.Fields, api.View, api.ExtendedView]{
	service: served(view.Family),
	listing: view.ListEntity,
	toAPI:   viewToAPI,
	fields:  viewFields,
	relations: []relation[view.View]{inSpace[view.View](),
		byID("FilterID", func(v view.View) []uuid.UUID { return optionalID(v.FilterID) }, filterEdge.load)},
	extended: func(v view.View, a api.View, r *related) api.ExtendedView {
		return api.ExtendedView{View: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", v.SpaceID),
			Filter: relatedOptional[api.Filter](r, "FilterID", v.FilterID)}
	},
}

func viewToAPI(v view.View) api.View {
	cols := make([]api.Column, len(v.Columns))
	for i, c := range v.Columns {
		cols[i] = api.Column{Name: c.Name, ColumnSource: api.ColumnSource{MetadataAttribute: c.ColumnSource.MetadataAttribute}}
		if d := c.ColumnSource.DataPath; d != nil {
			cols[i].ColumnSource.DataPath = &api.AttributeSelector{Path: d.Path, ResourceType: d.ResourceType}
		}
	}
	return api.View{
		ViewID: v.ID, SpaceID: v.SpaceID, OrganizationID: v.OrganizationID, Slug: v.Slug, DisplayName: v.DisplayName,
		Labels: v.Labels, Annotations: v.Annotations, DeleteGates: v.DeleteGates, Permissions: permissionsToAPI(v.Permissions),
		Of: v.Of, Columns: cols, FilterID: v.FilterID, GroupBy: v.GroupBy, OrderBy: v.OrderBy,
		OrderByDirection: api.ViewOrderByDirection(v.OrderByDirection), Hash: v.Hash, UpstreamViewID: v.UpstreamViewID,
		BackingUnitID: v.BackingUnitID, HiddenReason: v.HiddenReason, EntityType: view.EntityType,
		CreatedAt: v.CreatedAt.UTC(), UpdatedAt: v.UpdatedAt.UTC(), Version: v.Version,
	}
}

func viewFields(b *api.View) view.Fields {
	f := view.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		Of: b.Of, FilterID: b.FilterID, GroupBy: b.GroupBy, OrderBy: b.OrderBy, OrderByDirection: string(b.OrderByDirection),
	}
	for _, c := range b.Columns {
		col := view.Column{Name: c.Name, ColumnSource: view.ColumnSource{MetadataAttribute: c.ColumnSource.MetadataAttribute}}
		if d := c.ColumnSource.DataPath; d != nil {
			col.ColumnSource.DataPath = &view.AttributeSelector{Path: d.Path, ResourceType: d.ResourceType}
		}
		f.Columns = append(f.Columns, col)
	}
	return f
}
