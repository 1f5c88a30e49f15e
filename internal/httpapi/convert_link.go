package httpapi

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/link"
)

// linkEdge serves the Link operations (edge_link.gen.go): include expands the From and To Units and the
// To Unit's Space; TransformInvocationID is always null (include answers null).
var linkEdge = &edge[link.Link, link.Fields, api.Link, api.ExtendedLink]{
	service: served(link.Family),
	listing: link.ListEntity,
	toAPI:   linkToAPI,
	fields:  linkFields,
	relations: []relation[link.Link]{
		inSpace[link.Link](),
		byID("FromUnitID", func(l link.Link) []uuid.UUID { return []uuid.UUID{l.FromUnitID} }, loadUnits),
		byID("ToUnitID", func(l link.Link) []uuid.UUID { return []uuid.UUID{l.ToUnitID} }, loadUnits),
		byID("ToSpaceID", func(l link.Link) []uuid.UUID { return []uuid.UUID{l.ToSpaceID} }, spaceEdge.load)},
	extended: func(l link.Link, a api.Link, r *related) api.ExtendedLink {
		return api.ExtendedLink{Link: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", l.SpaceID),
			FromUnit: relatedOne[api.Unit](r, "FromUnitID", l.FromUnitID), ToUnit: relatedOne[api.Unit](r, "ToUnitID", l.ToUnitID),
			ToSpace: relatedOne[api.Space](r, "ToSpaceID", l.ToSpaceID)}
	},
}

func namedPathToAPI(p configdata.NamedPath) api.LinkNamedPath {
	return api.LinkNamedPath{Name: p.Name, ResourceType: p.ResourceType, Path: p.Path}
}

func pathExpressionToAPI(p configdata.PathExpression) api.LinkPathExpression {
	return api.LinkPathExpression{Name: p.Name, ResourceType: p.ResourceType, ResourceName: p.ResourceName, Path: p.Path, Required: p.Required}
}

func linkToAPI(l link.Link) api.Link {
	up := make([]api.LinkNamedPath, len(l.UpstreamPaths))
	for i, p := range l.UpstreamPaths {
		up[i] = namedPathToAPI(p)
	}
	down := make([]api.LinkPathExpression, len(l.DownstreamPaths))
	for i, p := range l.DownstreamPaths {
		down[i] = pathExpressionToAPI(p)
	}
	return api.Link{
		LinkID: l.ID, SpaceID: l.SpaceID, OrganizationID: l.OrganizationID, Slug: l.Slug, DisplayName: l.DisplayName,
		Labels: l.Labels, Annotations: l.Annotations, DeleteGates: l.DeleteGates, Permissions: permissionsToAPI(l.Permissions),
		FromUnitID: l.FromUnitID, ToUnitID: l.ToUnitID, ToSpaceID: l.ToSpaceID, UpstreamSpaceID: l.ToSpaceID,
		UpdateType: l.UpdateType, AutoUpdate: l.AutoUpdate, UpstreamPaths: up, DownstreamPaths: down,
		Bindings: objectsToAPI(l.Bindings), ManualBindings: objectsToAPI(l.ManualBindings),
		DownstreamSetters: objectsToAPI(l.DownstreamSetters), UpstreamGetters: objectsToAPI(l.UpstreamGetters),
		Clearance: clearanceToAPI(l.Clearance), Guards: l.Guards, Protect: l.Protect, Squash: l.Squash,
		MergeEnableSubtraction: l.MergeEnableSubtraction, WhereMutation: l.WhereMutation, WhereResource: l.WhereResource,
		TransformInvocationID: l.TransformInvocationID, UpstreamLinkID: l.UpstreamLinkID, BackingUnitID: l.BackingUnitID,
		Hash: l.Hash, UpstreamLastMergedRevisionNum: l.UpstreamLastMergedRevisionNum,
		DownstreamLastMergedRevisionNum: l.DownstreamLastMergedRevisionNum, Stale: l.Stale,
		HiddenReason: l.HiddenReason, EntityType: link.EntityType, CreatedAt: l.CreatedAt.UTC(), UpdatedAt: l.UpdatedAt.UTC(),
		Version: l.Version,
	}
}

func linkFields(b *api.Link) link.Fields {
	up := make([]configdata.NamedPath, len(b.UpstreamPaths))
	for i, p := range b.UpstreamPaths {
		up[i] = configdata.NamedPath{Name: p.Name, ResourceType: p.ResourceType, Path: p.Path}
	}
	down := make([]configdata.PathExpression, len(b.DownstreamPaths))
	for i, p := range b.DownstreamPaths {
		down[i] = configdata.PathExpression{Name: p.Name, ResourceType: p.ResourceType, ResourceName: p.ResourceName, Path: p.Path, Required: p.Required}
	}
	return link.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		FromUnitID: b.FromUnitID, ToUnitID: b.ToUnitID, UpdateType: b.UpdateType, AutoUpdate: b.AutoUpdate,
		UpstreamPaths: up, DownstreamPaths: down,
		Bindings: objectsFromAPI(b.Bindings), ManualBindings: objectsFromAPI(b.ManualBindings),
		DownstreamSetters: objectsFromAPI(b.DownstreamSetters), UpstreamGetters: objectsFromAPI(b.UpstreamGetters),
		Clearance: clearanceFromAPI(b.Clearance), Guards: b.Guards, Protect: b.Protect, Squash: b.Squash,
		MergeEnableSubtraction: b.MergeEnableSubtraction, WhereMutation: b.WhereMutation, WhereResource: b.WhereResource,
		TransformInvocationID: b.TransformInvocationID,
	}
}

// objectsToAPI is a list of JSON objects as the API holds them ([] when empty).
func objectsToAPI(list []json.RawMessage) []map[string]any {
	out := make([]map[string]any, 0, len(list))
	for _, raw := range list {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil && m != nil {
			out = append(out, m)
		}
	}
	return out
}

// objectsFromAPI is objectsToAPI's inverse.
func objectsFromAPI(list []map[string]any) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(list))
	for _, m := range list {
		raw, _ := json.Marshal(m)
		out = append(out, raw)
	}
	return out
}
