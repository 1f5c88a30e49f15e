package httpapi

import (
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/tag"
	"github.com/hubd/hubd/internal/unit"
)

func (h unitAPI) ListAllRevisions(ctx context.Context, r api.ListAllRevisionsRequestObject) (api.ListAllRevisionsResponseObject, error) {
	sc := scopeOf(ctx)
	all := r.Params.DistinctOn != nil && *r.Params.DistinctOn == api.ListAllRevisionsParamsDistinctOnOff
	page, err := h.s.deps.Units.ListAllRevisions(ctx, sc, requestPath(ctx), listParams(ctx, r.Params), all)
	if err != nil {
		return nil, err
	}
	return h.revisionPage(ctx, sc, page)
}

func (h unitAPI) ListExtendedRevisions(ctx context.Context, r api.ListExtendedRevisionsRequestObject) (api.ListExtendedRevisionsResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.Units.ListRevisions(ctx, sc, r.SpaceId, r.UnitId, requestPath(ctx), listParams(ctx, r.Params))
	if err != nil {
		return nil, err
	}
	return h.revisionPage(ctx, sc, page)
}

func (h unitAPI) revisionPage(ctx context.Context, sc authz.Scope, page listquery.Page[unit.Revision]) (pageResponse, error) {
	out, err := h.extendRevisions(ctx, sc, page.Items, page.Includes)
	if err != nil {
		return pageResponse{}, err
	}
	return newPage(out, unit.RevisionEntityType, page.PageInfo), nil
}

func (h unitAPI) extendRevisions(ctx context.Context, sc authz.Scope, revs []unit.Revision, includes map[string]bool) ([]api.ExtendedRevision, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	units := map[uuid.UUID]unit.Unit{}
	if includes["UnitID"] {
		var ids []uuid.UUID
		for _, r := range revs {
			ids = append(ids, r.UnitID)
		}
		if units, err = h.s.deps.Units.UnitsByID(ctx, sc, ids); err != nil {
			return nil, err
		}
	}
	var ids []uuid.UUID
	for _, r := range revs {
		ids = append(ids, r.SpaceID)
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], ids)
	if err != nil {
		return nil, err
	}
	userIDs := make([]uuid.UUID, len(revs))
	for i, r := range revs {
		userIDs[i] = r.UserID
	}
	users, err := h.includedUsers(ctx, sc, includes, userIDs)
	if err != nil {
		return nil, err
	}
	tags := map[uuid.UUID]tag.Tag{}
	if includes["Tags"] {
		var ids []uuid.UUID
		for _, r := range revs {
			for id := range r.Tags {
				if tagID, err := uuid.Parse(id); err == nil {
					ids = append(ids, tagID)
				}
			}
		}
		if tags, err = h.s.deps.Tags.LoadByIDs(ctx, sc, ids); err != nil {
			return nil, err
		}
	}
	out := make([]api.ExtendedRevision, len(revs))
	for i, r := range revs {
		e := api.ExtendedRevision{Revision: revisionToAPI(r), Organization: org}
		if u, ok := units[r.UnitID]; ok {
			a := unitToAPI(u)
			e.Unit = &a
		}
		if sp, ok := spaces[r.SpaceID]; ok {
			e.Space = &sp
		}
		if u, ok := users[r.UserID]; ok {
			e.User = &u
		}
		if includes["Tags"] {
			e.Tags = revisionTags(r, tags)
		}
		e.Attestations = unservedList[map[string]any](includes, "Attestations")
		e.ChangeOrders = unservedList[map[string]any](includes, "ChangeOrders")
		e.Releases = unservedList[map[string]any](includes, "Releases")
		out[i] = e
	}
	return out, nil
}

// revisionTags are the Tags on a Revision among those loaded (the ones the caller may view), by Slug.
func revisionTags(r unit.Revision, loaded map[uuid.UUID]tag.Tag) *[]api.Tag {
	out := []api.Tag{}
	for id := range r.Tags {
		if tagID, err := uuid.Parse(id); err == nil {
			if t, ok := loaded[tagID]; ok {
				out = append(out, tagToAPI(t))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return &out
}

func (h unitAPI) GetExtendedRevision(ctx context.Context, r api.GetExtendedRevisionRequestObject) (api.GetExtendedRevisionResponseObject, error) {
	sc := scopeOf(ctx)
	fields, includes, err := listquery.Projection(unit.RevisionList, deref(r.Params.Select), deref(r.Params.Include))
	if err != nil {
		return nil, err
	}
	rev, err := h.s.deps.Units.GetRevision(ctx, sc, r.SpaceId, r.UnitId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	ext, err := h.extendRevisions(ctx, sc, []unit.Revision{rev}, includes)
	if err != nil {
		return nil, err
	}
	return itemResponse{item: ext[0], entityField: unit.RevisionEntityType, fields: fields}, nil
}

func (h unitAPI) DownloadRevisionData(ctx context.Context, r api.DownloadRevisionDataRequestObject) (api.DownloadRevisionDataResponseObject, error) {
	sc := scopeOf(ctx)
	data, hash, toolchain, err := h.s.deps.Units.RevisionData(ctx, sc, r.SpaceId, r.UnitId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	return newDataResponse(data, hash, toolchain, r.Params.IfNoneMatch), nil
}

func (h unitAPI) GetRevisionMutationSources(ctx context.Context, r api.GetRevisionMutationSourcesRequestObject) (api.GetRevisionMutationSourcesResponseObject, error) {
	sc := scopeOf(ctx)
	sources, err := h.s.deps.Units.RevisionSources(ctx, sc, r.SpaceId, r.UnitId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	return api.GetRevisionMutationSources200JSONResponse{Body: sourcesToAPI(sources)}, nil
}
