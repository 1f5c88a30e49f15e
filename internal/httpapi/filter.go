package httpapi

import (
	"context"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/filter"
)

// filterAPI serves the Filter operations that are not the kit's (edge_filter.gen.go serves the others).
type filterAPI struct{ *base }

// ListAllFilters lists the Filters of every Space, or, with entity and id, those that select that entity.
func (h filterAPI) ListAllFilters(ctx context.Context, r api.ListAllFiltersRequestObject) (api.ListAllFiltersResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	sc := scopeOf(ctx)
	entityType := deref(r.Params.Entity)
	switch {
	case (entityType == "") != (r.Params.Id == nil):
		return nil, apierr.UserInput("entity and id are given together: the Filters that select entity id", apierr.Item{Item: "entity", Description: "entity and id go together"})
	case entityType != "":
		page, err := filter.ListSelecting(ctx, h.s.deps.Kit, sc, requestPath(ctx), params, entityType, *r.Params.Id)
		return listed(ctx, sc, page, err, filter.EntityType, filterEdge.extend(h.base))
	}
	return filterEdge.list(ctx, h.base, nil, params)
}
