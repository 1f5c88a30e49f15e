package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/group"
)

// groupAPI serves the Group operations.
type groupAPI struct{ *base }

func groupToAPI(g group.Group) api.Group {
	return api.Group{GroupID: g.ID, OrganizationID: g.OrganizationID, Slug: g.Slug, DisplayName: g.DisplayName,
		UserIDs: g.UserIDs, Labels: g.Labels, Annotations: g.Annotations, DeleteGates: g.DeleteGates,
		HiddenReason: g.HiddenReason, EntityType: group.EntityType, CreatedAt: g.CreatedAt.UTC(), UpdatedAt: g.UpdatedAt.UTC(),
		Version: g.Version}
}

func groupFields(b *api.Group) group.Fields {
	return group.Fields{Slug: b.Slug, DisplayName: b.DisplayName, UserIDs: b.UserIDs,
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}
}

func (h groupAPI) ListGroups(ctx context.Context, r api.ListGroupsRequestObject) (api.ListGroupsResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.Groups.List(ctx, sc, nil, requestPath(ctx), listParams(ctx, r.Params))
	return listed(ctx, sc, page, err, group.EntityType, h.extendGroups)
}

// extendGroups builds the Extended forms of a page: the Organization and the members the caller may see,
// each read once for the page.
func (h groupAPI) extendGroups(ctx context.Context, sc authz.Scope, gs []group.Group, includes map[string]bool) ([]api.ExtendedGroup, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	var members []uuid.UUID
	for _, g := range gs {
		members = append(members, g.UserIDs...)
	}
	users, err := h.includedUsers(ctx, sc, map[string]bool{"UserID": includes["UserIDs"]}, members)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedGroup, len(gs))
	for i, g := range gs {
		out[i] = api.ExtendedGroup{Group: groupToAPI(g), Organization: org}
		if includes["UserIDs"] {
			list := []api.User{}
			for _, id := range g.UserIDs {
				if u, ok := users[id]; ok {
					list = append(list, u)
				}
			}
			out[i].Users = &list
		}
	}
	return out, nil
}

func (h groupAPI) GetGroup(ctx context.Context, r api.GetGroupRequestObject) (api.GetGroupResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, group.ListEntity, r.Params.Select, r.Params.Include, func() (group.Group, error) {
		return h.s.deps.Groups.Get(ctx, sc, uuid.Nil, r.GroupId)
	}, h.extendGroups)
}

func (h groupAPI) CreateGroup(ctx context.Context, r api.CreateGroupRequestObject) (api.CreateGroupResponseObject, error) {
	sc := scopeOf(ctx)
	g, err := h.s.deps.Groups.Create(ctx, sc, uuid.Nil, groupFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateGroup200JSONResponse{Body: groupToAPI(g)}, nil
}

func (h groupAPI) UpdateGroup(ctx context.Context, r api.UpdateGroupRequestObject) (api.UpdateGroupResponseObject, error) {
	sc := scopeOf(ctx)
	g, err := h.s.deps.Groups.Update(ctx, sc, uuid.Nil, r.GroupId, r.Body.Version, groupFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateGroup200JSONResponse{Body: groupToAPI(g)}, nil
}

func (h groupAPI) PatchGroup(ctx context.Context, r api.PatchGroupRequestObject) (api.PatchGroupResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	g, err := h.s.deps.Groups.Patch(ctx, sc, uuid.Nil, r.GroupId, patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchGroup200JSONResponse{Body: groupToAPI(g)}, nil
}

func (h groupAPI) DeleteGroup(ctx context.Context, r api.DeleteGroupRequestObject) (api.DeleteGroupResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Groups.Delete(ctx, sc, uuid.Nil, r.GroupId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteGroup200JSONResponse{Body: deleted(group.EntityType)}, nil
}

func (h groupAPI) BulkPatchGroups(ctx context.Context, r api.BulkPatchGroupsRequestObject) (api.BulkPatchGroupsResponseObject, error) {
	return answeredInBulk(patchedInBulk[group.Group](ctx, h.s.deps.Groups, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, func(it entity.BulkItem[group.Group], e *api.ResponseError) api.GroupCreateOrUpdateResponse {
		if e != nil {
			return api.GroupCreateOrUpdateResponse{Error: e}
		}
		written := groupToAPI(it.Value)
		return api.GroupCreateOrUpdateResponse{Group: &written}
	}))
}

func (h groupAPI) BulkDeleteGroups(ctx context.Context, r api.BulkDeleteGroupsRequestObject) (api.BulkDeleteGroupsResponseObject, error) {
	return answeredInBulk(deletedInBulk[group.Group](ctx, h.s.deps.Groups, group.EntityType, r.Params, r.Params.DryRun))
}
