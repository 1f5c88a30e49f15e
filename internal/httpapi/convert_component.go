package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/component"
	"github.com/hubd/hubd/internal/entity"
)

// componentEdge serves the Component operations (edge_component.gen.go; the create, which takes
// with_backing_units, is CreateComponent below).
var componentEdge = &edge[component.Component, component.Fields, api.Component, api.ExtendedComponent]{
	service: served(component.Family),
	listing: component.ListEntity,
	toAPI:   componentToAPI,
	fields:  componentFields,
	extended: func(_ component.Component, a api.Component, r *related) api.ExtendedComponent {
		return api.ExtendedComponent{Component: a, Organization: r.organization}
	},
}

// CreateComponent serves POST /component: the kit's create, with with_backing_units and backing_unit_space
// carried to the family's write in ctx.
func (h *handlers) CreateComponent(ctx context.Context, r api.CreateComponentRequestObject) (api.CreateComponentResponseObject, error) {
	var spaceRef string
	if r.Params.BackingUnitSpace != nil {
		spaceRef = *r.Params.BackingUnitSpace
	}
	ctx, err := component.WithBackingUnits(ctx, flag(r.Params.WithBackingUnits), spaceRef)
	if err != nil {
		return nil, err
	}
	out, err := componentEdge.create(ctx, h.base, uuid.Nil, r.Body, flag(r.Params.DryRun), isTrue(r.Params.AllowExists))
	if err != nil {
		return nil, err
	}
	return api.CreateComponent200JSONResponse{Body: out}, nil
}

func componentToAPI(c component.Component) api.Component {
	ids := c.AllowedChangeWorkflowIDs
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return api.Component{
		ComponentID: c.ID, OrganizationID: c.OrganizationID, Slug: c.Slug, DisplayName: c.DisplayName,
		Labels: c.Labels, Annotations: c.Annotations, DeleteGates: c.DeleteGates, Permissions: permissionsToAPI(c.Permissions),
		AllowedChangeWorkflowIDs: ids, ChangeWorkflowRequired: c.ChangeWorkflowRequired,
		UpstreamComponentID: c.UpstreamComponentID, BackingUnitID: c.BackingUnitID,
		HiddenReason: c.HiddenReason, EntityType: component.EntityType, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC(),
		Version: c.Version,
	}
}

func componentFields(b *api.Component) component.Fields {
	return component.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		AllowedChangeWorkflowIDs: b.AllowedChangeWorkflowIDs, ChangeWorkflowRequired: b.ChangeWorkflowRequired,
		UpstreamComponentID: b.UpstreamComponentID,
	}
}
