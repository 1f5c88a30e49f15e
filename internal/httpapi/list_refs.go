package httpapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/view"
)

// listReferences are the Filter and View a request's filter= and view= name, resolved; nil when it names
// none.
type listReferences struct {
	filter *listquery.FilterDefinition
	view   *listquery.ViewDefinition
}

type listReferencesKey struct{}

// resolveListReferences reads the Filter and the View a list or selection's filter= and view= name, once
// per request, before its handler runs; listParams hands them to the list in its listquery.Params. Each
// must be of the caller's organization and one the caller may view, and on a list of one Space a Filter
// must read that Space (be of it, or name it in FromSpaceID). A View's Filter is resolved with it. Whether
// they are of the listed entity type, and whether a View's Filter may be combined with filter=, is the
// list's to check.
func (s *Server) resolveListReferences(ctx context.Context, c echo.Context, rt *route) (context.Context, error) {
	if rt.operation.Extensions["x-hubd-entity"] == nil {
		return ctx, nil
	}
	sc := scopeOf(ctx)
	spaceID := c.Param("space_id")
	var refs listReferences
	if ref := c.QueryParam("filter"); ref != "" {
		f, err := s.visibleFilter(ctx, sc, ref, "filter", spaceID)
		if err != nil {
			return ctx, err
		}
		def := filter.Definition(f)
		refs.filter = &def
	}
	if ref := c.QueryParam("view"); ref != "" {
		v, err := named(ctx, sc, s.deps.Kit.Store.Conn(), view.Family, ref, "view", spaceID)
		if err != nil {
			return ctx, err
		}
		def := v.Definition()
		if v.FilterID != nil {
			f, err := s.visibleFilter(ctx, sc, v.FilterID.String(), "view", spaceID)
			if err != nil {
				return ctx, err
			}
			fd := filter.Definition(f)
			def.Filter = &fd
		}
		refs.view = &def
	}
	if refs == (listReferences{}) {
		return ctx, nil
	}
	return context.WithValue(ctx, listReferencesKey{}, refs), nil
}

// listParams are the list parameters of the request in ctx: its generated parameter struct p converted
// (listParamsOf), with the Filter and View its filter= and view= name as the contract middleware resolved
// them. It is the one place a list or selection gets its parameters from the request.
func listParams[P listParamsStruct](ctx context.Context, p P) listquery.Params {
	out := listParamsOf(p)
	refs, _ := ctx.Value(listReferencesKey{}).(listReferences)
	out.FilterDefinition, out.ViewDefinition = refs.filter, refs.view
	return out
}

// named reads the entity a list parameter names, by ID, by Slug in the operation's Space (pathSpace, empty
// outside one) or as <Space Slug>/<Slug> (space.Named); one that does not exist or the caller may not view
// is 400 Validation naming the parameter.
func named[R any, E entity.Entity, F entity.Fields](ctx context.Context, sc authz.Scope, c store.Conn, fam *entity.Family[R, E, F], ref, param, pathSpace string) (E, error) {
	inSpace, _ := uuid.Parse(pathSpace)
	if _, err := uuid.Parse(ref); err != nil && !strings.Contains(ref, "/") && inSpace == uuid.Nil {
		var zero E
		return zero, apierr.Validation(fmt.Sprintf("%s: outside a Space, name a %s by ID or as <Space Slug>/<Slug>, not %q", param, fam.Type, ref),
			apierr.Item{Item: param, Description: "a Slug needs its Space"})
	}
	e, err := space.Named(ctx, sc, c, fam, inSpace, ref)
	if apierr.Is(err, apierr.TypeNotFound) {
		return e, apierr.Validation(fmt.Sprintf("%s: no %s %q in your organization", param, fam.Type, ref),
			apierr.Item{Item: param, Description: "no such " + fam.Type})
	}
	return e, err
}

// visibleFilter reads a Filter the caller may view for the parameter param of an operation in Space
// spaceID (empty when the operation is in none). In a Space, the Filter must read that Space: be of it,
// or name it in FromSpaceID.
func (s *Server) visibleFilter(ctx context.Context, sc authz.Scope, ref, param, spaceID string) (filter.Filter, error) {
	f, err := named(ctx, sc, s.deps.Kit.Store.Conn(), filter.Family, ref, param, spaceID)
	if err != nil {
		return f, err
	}
	opSpace, err := uuid.Parse(spaceID)
	if err != nil {
		return f, nil // an operation outside a Space takes a Filter of any
	}
	switch {
	case f.FromSpaceID != nil && *f.FromSpaceID != opSpace:
		return f, apierr.Validation(fmt.Sprintf("%s: Filter %s reads Space %s, not this one", param, ref, f.FromSpaceID),
			apierr.Item{Item: param, Description: "another Space"})
	case f.FromSpaceID == nil && f.SpaceID != opSpace:
		return f, apierr.Validation(fmt.Sprintf("%s: Filter %s is of Space %s; a list of another Space takes its own Space's Filters, or one whose FromSpaceID names it",
			param, ref, f.SpaceID), apierr.Item{Item: param, Description: "another Space"})
	}
	return f, nil
}
