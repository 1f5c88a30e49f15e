package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/tag"
)

// tagEdge serves the Tag operations (edge_tag.gen.go).
var tagEdge = &edge[tag.Tag, tag.Fields, api.Tag, api.ExtendedTag]{
	service:   served(tag.Family),
	listing:   tag.ListEntity,
	toAPI:     tagToAPI,
	fields:    tagFields,
	relations: []relation[tag.Tag]{inSpace[tag.Tag]()},
	extended: func(t tag.Tag, a api.Tag, r *related) api.ExtendedTag {
		return api.ExtendedTag{Tag: a, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", t.SpaceID)}
	},
}

func tagToAPI(t tag.Tag) api.Tag {
	return api.Tag{TagID: t.ID, SpaceID: t.SpaceID, OrganizationID: t.OrganizationID, Slug: t.Slug, DisplayName: t.DisplayName,
		Labels: t.Labels, Annotations: t.Annotations, DeleteGates: t.DeleteGates, HiddenReason: t.HiddenReason,
		EntityType: tag.EntityType, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(), Version: t.Version,
		ChangeOrderID: t.ChangeOrderID, ChangeSetID: t.ChangeSetID}
}

func tagFields(b *api.Tag) tag.Fields {
	return tag.Fields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}}
}
