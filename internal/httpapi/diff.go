package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/unit"
)

// unitReadAPI serves the diffs and the streamed bulk reads of Units and Revisions.
type unitReadAPI struct{ *base }

func diffToAPI(from, to int64, d configdata.Diff) api.Diff {
	changes := make([]api.PathChange, len(d.Changes))
	for i, c := range d.Changes {
		changes[i] = api.PathChange{ResourceType: c.ResourceType, ResourceName: c.ResourceName, Path: c.Path,
			Change: api.PathChangeChange(c.Change), OldValue: c.Old, NewValue: c.New}
	}
	return api.Diff{FromRevisionNum: from, ToRevisionNum: to, UnifiedDiff: d.Unified, Changes: changes}
}

func (h unitReadAPI) DiffConfigData(ctx context.Context, r api.DiffConfigDataRequestObject) (api.DiffConfigDataResponseObject, error) {
	d, err := unit.DiffTexts(string(r.Body.ToolchainType), []byte(r.Body.From), []byte(r.Body.To))
	if err != nil {
		return nil, err
	}
	return api.DiffConfigData200JSONResponse{Body: diffToAPI(0, 0, d)}, nil
}

func (h unitReadAPI) GetUnitDiff(ctx context.Context, r api.GetUnitDiffRequestObject) (api.GetUnitDiffResponseObject, error) {
	sc := scopeOf(ctx)
	d, err := h.s.deps.Units.Diff(ctx, sc, r.SpaceId, r.UnitId, r.Params.From, r.Params.To)
	if err != nil {
		return nil, err
	}
	return api.GetUnitDiff200JSONResponse{Body: diffToAPI(d.From, d.To, d.Diff)}, nil
}

// unitPages adapts a Unit pager to stream's producer.
func unitPages(p *listquery.Pager[unit.Unit]) func() ([]unit.Unit, string, bool, error) {
	return func() ([]unit.Unit, string, bool, error) {
		page, ok, err := p.Next()
		return page.Items, page.Continue, ok, err
	}
}

func revisionPages(p *listquery.Pager[unit.Revision]) func() ([]unit.Revision, string, bool, error) {
	return func() ([]unit.Revision, string, bool, error) {
		page, ok, err := p.Next()
		return page.Items, page.Continue, ok, err
	}
}

func (h unitReadAPI) SearchUnitDiff(ctx context.Context, r api.SearchUnitDiffRequestObject) (api.SearchUnitDiffResponseObject, error) {
	pager, err := searchedUnits(ctx, h.s, r.Params, dataFilterOf(r.Params))
	if err != nil {
		return nil, err
	}
	return stream(unitPages(pager), func(units []unit.Unit) ([]any, error) {
		out := make([]any, len(units))
		for i, u := range units {
			item := api.UnitDiff{UnitID: u.ID, SpaceID: u.SpaceID, Slug: u.Slug}
			d, err := h.s.deps.Units.DiffUnit(ctx, u, r.Params.From, r.Params.To)
			if err != nil {
				e := apierr.From(err)
				if e.HTTPStatus() >= 500 {
					return nil, err
				}
				re := responseError(e.WithEntity(unit.EntityType, u.ID.String(), u.Slug))
				item.Error = &re
			} else {
				a := diffToAPI(d.From, d.To, d.Diff)
				item.Diff = &a
			}
			out[i] = item
		}
		return out, nil
	})
}

func (h unitReadAPI) SearchUnitData(ctx context.Context, r api.SearchUnitDataRequestObject) (api.SearchUnitDataResponseObject, error) {
	pager, err := searchedUnits(ctx, h.s, r.Params, dataFilterOf(r.Params))
	if err != nil {
		return nil, err
	}
	return stream(unitPages(pager), func(units []unit.Unit) ([]any, error) {
		hashes := make([]string, len(units))
		for i, u := range units {
			hashes[i] = u.DataHash
		}
		data, err := h.s.deps.Units.DataByHash(ctx, hashes)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(units))
		for i, u := range units {
			out[i] = api.UnitData{UnitID: u.ID, SpaceID: u.SpaceID, Slug: u.Slug, Data: string(data[u.DataHash]), DataHash: u.DataHash, DataSize: u.DataSize}
		}
		return out, nil
	})
}

func (h unitReadAPI) SearchUnitMutationSources(ctx context.Context, r api.SearchUnitMutationSourcesRequestObject) (api.SearchUnitMutationSourcesResponseObject, error) {
	pager, err := searchedUnits(ctx, h.s, r.Params, dataFilterOf(r.Params))
	if err != nil {
		return nil, err
	}
	return stream(unitPages(pager), func(units []unit.Unit) ([]any, error) {
		var ids []uuid.UUID
		for _, u := range units {
			if u.HeadRevisionID != nil {
				ids = append(ids, *u.HeadRevisionID)
			}
		}
		sources, err := h.s.deps.Units.SourcesByRevision(ctx, scopeOf(ctx), ids)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(units))
		for i, u := range units {
			var src []unit.Source
			if u.HeadRevisionID != nil {
				src = sources[*u.HeadRevisionID]
			}
			out[i] = api.UnitMutationSources{UnitID: u.ID, SpaceID: u.SpaceID, Slug: u.Slug, Sources: sourcesToAPI(u.Annotate(src)).Sources}
		}
		return out, nil
	})
}

func (h unitReadAPI) SearchRevisionData(ctx context.Context, r api.SearchRevisionDataRequestObject) (api.SearchRevisionDataResponseObject, error) {
	all := r.Params.DistinctOn != nil && *r.Params.DistinctOn == api.SearchRevisionDataParamsDistinctOnOff
	pager, err := searchedRevisions(ctx, h.s, r.Params, all, r.Params.Limit)
	if err != nil {
		return nil, err
	}
	return stream(revisionPages(pager), func(revs []unit.Revision) ([]any, error) {
		hashes := make([]string, len(revs))
		for i, rev := range revs {
			hashes[i] = rev.DataHash
		}
		data, err := h.s.deps.Units.DataByHash(ctx, hashes)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(revs))
		for i, rev := range revs {
			out[i] = api.RevisionData{RevisionID: rev.ID, RevisionNum: rev.RevisionNum, UnitID: rev.UnitID, SpaceID: rev.SpaceID,
				Data: string(data[rev.DataHash]), DataHash: rev.DataHash, DataSize: rev.DataSize}
		}
		return out, nil
	})
}

func (h unitReadAPI) SearchRevisionMutationSources(ctx context.Context, r api.SearchRevisionMutationSourcesRequestObject) (api.SearchRevisionMutationSourcesResponseObject, error) {
	all := r.Params.DistinctOn != nil && *r.Params.DistinctOn == api.SearchRevisionMutationSourcesParamsDistinctOnOff
	pager, err := searchedRevisions(ctx, h.s, r.Params, all, r.Params.Limit)
	if err != nil {
		return nil, err
	}
	return stream(revisionPages(pager), func(revs []unit.Revision) ([]any, error) {
		ids := make([]uuid.UUID, len(revs))
		for i, rev := range revs {
			ids[i] = rev.ID
		}
		sources, err := h.s.deps.Units.SourcesByRevision(ctx, scopeOf(ctx), ids)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(revs))
		for i, rev := range revs {
			out[i] = api.RevisionMutationSources{RevisionID: rev.ID, RevisionNum: rev.RevisionNum, UnitID: rev.UnitID, SpaceID: rev.SpaceID,
				Sources: sourcesToAPI(sources[rev.ID]).Sources}
		}
		return out, nil
	})
}

// searchedUnits pages through the Units a search's list parameters and data filter select.
func searchedUnits[P listParamsStruct](ctx context.Context, s *Server, p P, df unit.DataFilter) (*listquery.Pager[unit.Unit], error) {
	params, err := listParams(ctx, s, nil, p)
	if err != nil {
		return nil, err
	}
	return s.deps.Units.UnitPager(ctx, scopeOf(ctx), requestPath(ctx), params, df), nil
}

// searchedRevisions pages through the Revisions a search's list parameters select: the latest of each
// Unit, or with all (distinct_on=Off, which needs a limit) every one.
func searchedRevisions[P listParamsStruct](ctx context.Context, s *Server, p P, all bool, limit *int) (*listquery.Pager[unit.Revision], error) {
	params, err := listParams(ctx, s, nil, p)
	if err != nil {
		return nil, err
	}
	if err := requireLimitForAll(all, limit); err != nil {
		return nil, err
	}
	return s.deps.Units.RevisionPager(ctx, scopeOf(ctx), requestPath(ctx), params, all), nil
}

// requireLimitForAll: distinct_on=Off returns every Revision and needs an explicit limit.
func requireLimitForAll(all bool, limit *int) error {
	if all && limit == nil {
		return apierr.UserInput("distinct_on=Off returns every Revision and needs an explicit limit",
			apierr.Item{Item: "distinct_on", Description: "Off requires limit"})
	}
	return nil
}
