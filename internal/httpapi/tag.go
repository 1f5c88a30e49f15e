package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/tag"
)

// tagAPI serves the Tag operations.
type tagAPI struct{ *base }

func tagToAPI(t tag.Tag) api.Tag {
	return api.Tag{TagID: t.ID, SpaceID: t.SpaceID, OrganizationID: t.OrganizationID, Slug: t.Slug, DisplayName: t.DisplayName,
		Labels: t.Labels, Annotations: t.Annotations, DeleteGates: t.DeleteGates, HiddenReason: t.HiddenReason,
		EntityType: tag.EntityType, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(), Version: t.Version}
}

func tagFields(b *api.Tag) tag.Fields {
	return tag.Fields{Slug: b.Slug, DisplayName: b.DisplayName,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}
}

func (h tagAPI) ListAllTags(ctx context.Context, r api.ListAllTagsRequestObject) (api.ListAllTagsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listTags(ctx, sc, nil, listParams(ctx, r.Params))
}

func (h tagAPI) ListTags(ctx context.Context, r api.ListTagsRequestObject) (api.ListTagsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listTags(ctx, sc, &r.SpaceId, listParams(ctx, r.Params))
}

func (h tagAPI) listTags(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params) (pageResponse, error) {
	page, err := h.s.deps.Tags.List(ctx, sc, spaceID, requestPath(ctx), params)
	return listed(ctx, sc, page, err, tag.EntityType, h.extendTags)
}

func (h tagAPI) extendTags(ctx context.Context, sc authz.Scope, ts []tag.Tag, includes map[string]bool) ([]api.ExtendedTag, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(ts))
	for i, t := range ts {
		ids[i] = t.SpaceID
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], ids)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedTag, len(ts))
	for i, t := range ts {
		out[i] = api.ExtendedTag{Tag: tagToAPI(t), Organization: org}
		if sp, ok := spaces[t.SpaceID]; ok {
			out[i].Space = &sp
		}
	}
	return out, nil
}

func (h tagAPI) GetTag(ctx context.Context, r api.GetTagRequestObject) (api.GetTagResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, tag.ListEntity, r.Params.Select, r.Params.Include, func() (tag.Tag, error) {
		return h.s.deps.Tags.Get(ctx, sc, r.SpaceId, r.TagId.String())
	}, h.extendTags)
}

func (h tagAPI) CreateTag(ctx context.Context, r api.CreateTagRequestObject) (api.CreateTagResponseObject, error) {
	sc := scopeOf(ctx)
	t, err := h.s.deps.Tags.Create(ctx, sc, r.SpaceId, tagFields(r.Body), entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateTag200JSONResponse{Body: tagToAPI(t)}, nil
}

func (h tagAPI) UpdateTag(ctx context.Context, r api.UpdateTagRequestObject) (api.UpdateTagResponseObject, error) {
	sc := scopeOf(ctx)
	t, err := h.s.deps.Tags.Update(ctx, sc, r.SpaceId, r.TagId.String(), r.Body.Version, tagFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateTag200JSONResponse{Body: tagToAPI(t)}, nil
}

func (h tagAPI) PatchTag(ctx context.Context, r api.PatchTagRequestObject) (api.PatchTagResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	t, err := h.s.deps.Tags.Patch(ctx, sc, r.SpaceId, r.TagId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchTag200JSONResponse{Body: tagToAPI(t)}, nil
}

func (h tagAPI) DeleteTag(ctx context.Context, r api.DeleteTagRequestObject) (api.DeleteTagResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Tags.Delete(ctx, sc, r.SpaceId, r.TagId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteTag200JSONResponse{Body: deleted(tag.EntityType)}, nil
}
