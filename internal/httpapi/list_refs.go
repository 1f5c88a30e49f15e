package httpapi

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/listquery"
)

// resolveListReferences reads the Filter and the View a list or selection's filter= and view= name, once
// per request, and gives them to the list (listquery.WithFilter, WithView): each must be of the caller's
// organization and one the caller may view, and a Filter reading another Space (FromSpaceID) must name the
// operation's Space. A View's Filter is resolved with it. Whether they are of the listed entity type, and
// whether a View's Filter may be combined with filter=, is the list's to check.
func (s *Server) resolveListReferences(ctx context.Context, c echo.Context, rt *route) (context.Context, error) {
	if rt.operation.Extensions["x-hubd-entity"] == nil {
		return ctx, nil
	}
	sc := scopeOf(ctx)
	spaceID := c.Param("space_id")
	if id, ok := queryUUID(c, "filter"); ok {
		f, err := s.visibleFilter(ctx, sc, id, "filter", spaceID)
		if err != nil {
			return ctx, err
		}
		ctx = listquery.WithFilter(ctx, filterDefinition(f))
	}
	if id, ok := queryUUID(c, "view"); ok {
		found, err := s.deps.Views.LoadByIDs(ctx, sc, []uuid.UUID{id})
		if err != nil {
			return ctx, err
		}
		v, ok := found[id]
		if !ok {
			return ctx, apierr.Validation(fmt.Sprintf("view: no View %s in your organization", id), apierr.Item{Item: "view", Description: "no such View"})
		}
		def := v.Definition()
		if v.FilterID != nil {
			f, err := s.visibleFilter(ctx, sc, *v.FilterID, "view", spaceID)
			if err != nil {
				return ctx, err
			}
			fd := filterDefinition(f)
			def.Filter = &fd
		}
		ctx = listquery.WithView(ctx, def)
	}
	return ctx, nil
}

// queryUUID is the UUID a query parameter holds; a malformed one is left to the document's validation.
func queryUUID(c echo.Context, name string) (uuid.UUID, bool) {
	raw := c.QueryParam(name)
	if raw == "" {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(raw)
	return id, err == nil
}

// visibleFilter reads a Filter the caller may view for the parameter param of an operation in Space
// spaceID (empty when the operation is in none).
func (s *Server) visibleFilter(ctx context.Context, sc authz.Scope, id uuid.UUID, param, spaceID string) (filter.Filter, error) {
	found, err := s.deps.Filters.LoadByIDs(ctx, sc, []uuid.UUID{id})
	if err != nil {
		return filter.Filter{}, err
	}
	f, ok := found[id]
	if !ok {
		return f, apierr.Validation(fmt.Sprintf("%s: no Filter %s in your organization", param, id), apierr.Item{Item: param, Description: "no such Filter"})
	}
	if f.FromSpaceID != nil && spaceID != "" && spaceID != f.FromSpaceID.String() {
		return f, apierr.Validation(fmt.Sprintf("%s: Filter %s reads Space %s, not this one", param, id, f.FromSpaceID),
			apierr.Item{Item: param, Description: "another Space"})
	}
	return f, nil
}

func filterDefinition(f filter.Filter) listquery.FilterDefinition {
	return listquery.FilterDefinition{ID: f.ID, From: f.From, Hash: f.Hash, Where: f.Where, WhereData: f.WhereData,
		ResourceType: f.ResourceType, IncludeHidden: f.IncludeHidden}
}
