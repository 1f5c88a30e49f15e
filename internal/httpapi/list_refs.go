package httpapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/view"
)

// listParams are the list parameters of a request: its generated parameter struct p converted
// (listParamsOf), with the Filter and the View its filter= and view= name read (listReferences) and the
// server's bounds of View data columns. spaceID is the Space of the operation's path, nil for an
// operation outside a Space. It is the one place a list or selection gets its parameters from the request.
func listParams[P listParamsStruct](ctx context.Context, s *Server, spaceID *uuid.UUID, p P) (listquery.Params, error) {
	out := listParamsOf(p)
	out.ViewLimits = s.cfg.ViewLimits
	if out.Filter == "" && out.View == "" {
		return out, nil
	}
	var inSpace uuid.UUID
	if spaceID != nil {
		inSpace = *spaceID
	}
	var err error
	if out.FilterDefinition, out.ViewDefinition, err = s.listReferences(ctx, scopeOf(ctx), inSpace, out.Filter, out.View); err != nil {
		return listquery.Params{}, err
	}
	return out, nil
}

// listReferences reads the Filter and the View a list or selection names (filterRef, viewRef; nil for one
// it does not name) for an operation in Space spaceID (uuid.Nil outside one). Each must be of the caller's
// organization and one the caller may view, and on a list of one Space a Filter must read that Space (be
// of it, or name it in FromSpaceID). A View's Filter is resolved with it. Whether they are of the listed
// entity type, and whether a View's Filter may be combined with filter=, is the list's to check.
func (s *Server) listReferences(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, filterRef, viewRef string) (*listquery.FilterDefinition, *listquery.ViewDefinition, error) {
	var fd *listquery.FilterDefinition
	if filterRef != "" {
		f, err := s.visibleFilter(ctx, sc, filterRef, "filter", spaceID)
		if err != nil {
			return nil, nil, err
		}
		def := filter.Definition(f)
		fd = &def
	}
	if viewRef == "" {
		return fd, nil, nil
	}
	v, err := named(ctx, sc, s.deps.Kit.Store.Conn(), view.Family, viewRef, "view", spaceID)
	if err != nil {
		return nil, nil, err
	}
	vd := v.Definition()
	if v.FilterID != nil {
		f, err := s.visibleFilter(ctx, sc, v.FilterID.String(), "view", spaceID)
		if err != nil {
			return nil, nil, err
		}
		def := filter.Definition(f)
		vd.Filter = &def
	}
	return fd, &vd, nil
}

// selectionParams are the list parameters of a bulk operation's selection, which must select something
// (entity.RequireSelection).
func selectionParams[P listParamsStruct](ctx context.Context, s *Server, p P) (listquery.Params, error) {
	sel, err := listParams(ctx, s, nil, p)
	if err != nil {
		return sel, err
	}
	return sel, entity.RequireSelection(sel)
}

// named reads the entity a list parameter names, by ID, by Slug in the operation's Space (inSpace, uuid.Nil
// outside one) or as <Space Slug>/<Slug> (space.Named); one that does not exist or the caller may not view
// is 400 Validation naming the parameter.
func named[R any, E entity.Entity, F entity.Fields](ctx context.Context, sc authz.Scope, c store.Conn, fam *entity.Family[R, E, F], ref, param string, inSpace uuid.UUID) (E, error) {
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
// spaceID (uuid.Nil when the operation is in none). In a Space, the Filter must read that Space: be of it,
// or name it in FromSpaceID.
func (s *Server) visibleFilter(ctx context.Context, sc authz.Scope, ref, param string, spaceID uuid.UUID) (filter.Filter, error) {
	f, err := named(ctx, sc, s.deps.Kit.Store.Conn(), filter.Family, ref, param, spaceID)
	if err != nil {
		return f, err
	}
	if spaceID == uuid.Nil {
		return f, nil // an operation outside a Space takes a Filter of any
	}
	switch {
	case f.FromSpaceID != nil && *f.FromSpaceID != spaceID:
		return f, apierr.Validation(fmt.Sprintf("%s: Filter %s reads Space %s, not this one", param, ref, f.FromSpaceID),
			apierr.Item{Item: param, Description: "another Space"})
	case f.FromSpaceID == nil && f.SpaceID != spaceID:
		return f, apierr.Validation(fmt.Sprintf("%s: Filter %s is of Space %s; a list of another Space takes its own Space's Filters, or one whose FromSpaceID names it",
			param, ref, f.SpaceID), apierr.Item{Item: param, Description: "another Space"})
	}
	return f, nil
}
