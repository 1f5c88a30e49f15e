package httpapi

import (
	"context"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/attestation"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/release"
	"github.com/hubd/hubd/internal/unit"
)

func (h unitAPI) ListAllRevisions(ctx context.Context, r api.ListAllRevisionsRequestObject) (api.ListAllRevisionsResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	sc := scopeOf(ctx)
	all := r.Params.DistinctOn != nil && *r.Params.DistinctOn == api.ListAllRevisionsParamsDistinctOnOff
	page, err := h.s.deps.Units.ListAllRevisions(ctx, sc, requestPath(ctx), params, all)
	return listed(ctx, sc, page, err, unit.RevisionEntityType, h.extendRevisions)
}

func (h unitAPI) ListExtendedRevisions(ctx context.Context, r api.ListExtendedRevisionsRequestObject) (api.ListExtendedRevisionsResponseObject, error) {
	params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)
	if err != nil {
		return nil, err
	}
	sc := scopeOf(ctx)
	page, err := h.s.deps.Units.ListRevisions(ctx, sc, r.SpaceId, r.UnitId, requestPath(ctx), params)
	return listed(ctx, sc, page, err, unit.RevisionEntityType, h.extendRevisions)
}

// revisionRelations are what include expands of a Revision (Tags: those on it, by Slug; Attestations:
// those naming it, oldest first; Releases: those that bundled it, oldest first).
var revisionRelations = []relation[unit.Revision]{
	byID("UnitID", func(r unit.Revision) []uuid.UUID { return []uuid.UUID{r.UnitID} }, loadUnits),
	byID("SpaceID", func(r unit.Revision) []uuid.UUID { return []uuid.UUID{r.SpaceID} }, spaceEdge.load),
	byID("UserID", func(r unit.Revision) []uuid.UUID { return []uuid.UUID{r.UserID} }, loadUsers),
	byID("Tags", revisionTagIDs, tagEdge.load),
	byID("ChangeSetID", func(r unit.Revision) []uuid.UUID { return optionalID(r.ChangeSetID) }, changeSetEdge.load),
	namedBy("Attestations", func(r unit.Revision) uuid.UUID { return r.ID }, func(ctx context.Context, h *base, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
		return attestation.NamingRevisions(ctx, h.s.deps.Kit.Store.Conn(), sc, ids)
	}, attestationEdge.load),
	{include: "ChangeOrders", load: loadRevisionChangeOrders},
	namedBy("Releases", func(r unit.Revision) uuid.UUID { return r.ID }, func(ctx context.Context, h *base, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
		return release.NamingRevisions(ctx, h.s.deps.Kit.Store.Conn(), sc, ids)
	}, releaseEdge.load),
}

func (h unitAPI) extendRevisions(ctx context.Context, sc authz.Scope, revs []unit.Revision, includes map[string]bool) ([]api.ExtendedRevision, error) {
	return extendAll(ctx, h.base, sc, revs, includes, revisionRelations, func(rev unit.Revision, r *related) api.ExtendedRevision {
		e := api.ExtendedRevision{Revision: revisionToAPI(rev), Organization: r.organization, Unit: relatedOne[api.Unit](r, "UnitID", rev.UnitID),
			Space: relatedOne[api.Space](r, "SpaceID", rev.SpaceID), User: relatedOne[api.User](r, "UserID", rev.UserID),
			Tags:         relatedList[api.Tag](r, "Tags", revisionTagIDs(rev)),
			ChangeSet:    relatedOptional[api.ChangeSet](r, "ChangeSetID", rev.ChangeSetID),
			Attestations: relatedNaming[api.Attestation](r, "Attestations", rev.ID),
			ChangeOrders: revisionChangeOrders(r, rev),
			Releases:     relatedNaming[api.Release](r, "Releases", rev.ID)}
		if e.ChangeOrders != nil {
			e.Revision.ChangeOrders = changeOrderRoles(*e.ChangeOrders, rev)
		}
		if e.Tags != nil {
			sort.Slice(*e.Tags, func(i, j int) bool { return (*e.Tags)[i].Slug < (*e.Tags)[j].Slug })
		}
		return e
	})
}

// loadRevisionChangeOrders is include=ChangeOrders of a page of Revisions: the ChangeOrders that made a Tag
// on one of them (changeorder.TagsAmong, one query for the page's Tags), those the caller may view (one
// more), by ID.
func loadRevisionChangeOrders(ctx context.Context, h *base, sc authz.Scope, revs []unit.Revision) (map[uuid.UUID]any, error) {
	var tagIDs []uuid.UUID
	for _, rev := range revs {
		tagIDs = append(tagIDs, revisionTagIDs(rev)...)
	}
	byTag, err := changeorder.TagsAmong(ctx, h.s.deps.Kit.Store.Conn(), sc, tagIDs)
	if err != nil {
		return nil, err
	}
	seen := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for _, id := range byTag {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return changeOrderEdge.load(ctx, h, sc, ids)
}

// revisionChangeOrders are the ChangeOrders include=ChangeOrders loaded whose start or end Tag is on rev,
// oldest first: nil when include did not name it.
func revisionChangeOrders(r *related, rev unit.Revision) *[]api.ChangeOrder {
	if !r.includes["ChangeOrders"] {
		return nil
	}
	out := []api.ChangeOrder{}
	for _, v := range r.loaded["ChangeOrders"] {
		co := v.(api.ChangeOrder)
		if changeOrderRole(co, rev) != "" {
			out = append(out, co)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ChangeOrderID.String() < out[j].ChangeOrderID.String()
	})
	return &out
}

// changeOrderRoles is Revision.ChangeOrders: each of cos by ID, with where its Tags mark rev.
func changeOrderRoles(cos []api.ChangeOrder, rev unit.Revision) map[string]string {
	out := make(map[string]string, len(cos))
	for _, co := range cos {
		out[co.ChangeOrderID.String()] = changeOrderRole(co, rev)
	}
	return out
}

// changeOrderRole is "Start" when co's start Tag is on rev, "End" when its end Tag is, "Start,End" when
// both are, "" when neither.
func changeOrderRole(co api.ChangeOrder, rev unit.Revision) string {
	on := func(id *uuid.UUID) bool {
		if id == nil {
			return false
		}
		_, ok := rev.Tags[id.String()]
		return ok
	}
	var roles []string
	if on(co.StartTagID) {
		roles = append(roles, "Start")
	}
	if on(co.EndTagID) {
		roles = append(roles, "End")
	}
	return strings.Join(roles, ",")
}

// revisionTagIDs are the IDs of the Tags on a Revision.
func revisionTagIDs(r unit.Revision) []uuid.UUID {
	var out []uuid.UUID
	for id := range r.Tags {
		if tagID, err := uuid.Parse(id); err == nil {
			out = append(out, tagID)
		}
	}
	return out
}

func (h unitAPI) GetExtendedRevision(ctx context.Context, r api.GetExtendedRevisionRequestObject) (api.GetExtendedRevisionResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, unit.RevisionList, r.Params.Select, r.Params.Include, func() (unit.Revision, error) {
		return h.s.deps.Units.GetRevision(ctx, sc, r.SpaceId, r.UnitId, r.RevisionId)
	}, h.extendRevisions)
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
