package httpapi

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/filter"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// copyParams are the query parameters of a bulk copy (clone) beyond its selection (copyParamsOf).
type copyParams struct {
	WhereSpace   *string
	FilterSpace  *string
	NamePrefixes *string
	AllowExists  *string
	DryRun       *bool
}

// prefixes splits name_prefixes.
func (p copyParams) prefixes() []string {
	var out []string
	if p.NamePrefixes != nil {
		for _, prefix := range strings.Split(*p.NamePrefixes, ",") {
			out = append(out, strings.TrimSpace(prefix))
		}
	}
	return out
}

// destinations resolves where_space and filter_space (a Filter of Spaces) into the selection of a copy's
// destination Spaces, made in the copy's transaction; nil when neither is given.
func (s *Server) destinations(ctx context.Context, sc authz.Scope, p copyParams) (func(context.Context, *store.Tx) ([]uuid.UUID, error), error) {
	var byFilter *listquery.FilterDefinition
	if ref := deref(p.FilterSpace); ref != "" {
		f, err := s.visibleFilter(ctx, sc, ref, "filter_space", uuid.Nil)
		if err != nil {
			return nil, err
		}
		def := filter.Definition(f)
		byFilter = &def
	}
	where := deref(p.WhereSpace)
	if strings.TrimSpace(where) == "" && byFilter == nil {
		return nil, nil
	}
	return func(ctx context.Context, tx *store.Tx) ([]uuid.UUID, error) {
		return space.Select(ctx, tx, s.deps.Kit.Tokens, sc, where, byFilter)
	}, nil
}

type bulkCopier[E any] interface {
	Clone(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, opts entity.CloneOptions) ([]entity.BulkItem[E], error)
}

// clonedInBulk runs a bulk copy of a kit family: its selection is required.
func clonedInBulk[E, O any, P interface {
	listParamsStruct
	copyParamsStruct
}](ctx context.Context, s *Server, svc bulkCopier[E], params P, bodies []*json.RawMessage,
	toItem func(entity.BulkItem[E], *api.ResponseError) O) (out []O, multiStatus bool, err error) {
	sel, err := selectionParams(ctx, s, params)
	if err != nil {
		return nil, false, err
	}
	sc := scopeOf(ctx)
	p := copyParamsOf(params)
	dest, err := s.destinations(ctx, sc, p)
	if err != nil {
		return nil, false, err
	}
	patch, err := patchBody(bodies...)
	if err != nil {
		return nil, false, err
	}
	items, err := svc.Clone(ctx, sc, requestPath(ctx), sel, patch, entity.CloneOptions{
		Destinations: dest, Prefixes: p.prefixes(), AllowExists: isTrue(p.AllowExists), DryRun: flag(p.DryRun)})
	if err != nil {
		return nil, false, err
	}
	return bulkItems(items, toItem)
}

type bulkMover[E any] interface {
	Move(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, toSpaceID uuid.UUID, dryRun bool) ([]entity.BulkItem[E], error)
}

// movedInBulk runs a bulk move of a kit family: its selection is required.
func movedInBulk[E, O any, P listParamsStruct](ctx context.Context, s *Server, svc bulkMover[E], params P, dryRun *bool, to uuid.UUID,
	toItem func(entity.BulkItem[E], *api.ResponseError) O) (out []O, multiStatus bool, err error) {
	sel, err := selectionParams(ctx, s, params)
	if err != nil {
		return nil, false, err
	}
	items, err := svc.Move(ctx, scopeOf(ctx), requestPath(ctx), sel, to, flag(dryRun))
	if err != nil {
		return nil, false, err
	}
	return bulkItems(items, toItem)
}
