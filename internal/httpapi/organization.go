package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/org"
)

// organizationAPI serves the OrganizationMember and User operations (edge_organization.gen.go serves the
// Organization operations).
type organizationAPI struct{ *base }

func (h organizationAPI) ListOrganizationMembers(ctx context.Context, r api.ListOrganizationMembersRequestObject) (api.ListOrganizationMembersResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	sc := scopeOf(ctx)
	page, err := h.s.deps.Orgs.ListMembers(ctx, sc, r.OrganizationId, requestPath(ctx), params)
	return listed(ctx, sc, page, err, org.MemberType, extendMembers)
}

var extendMembers = extendPlain(func(m org.Member) api.ExtendedOrganizationMember {
	return api.ExtendedOrganizationMember{OrganizationMember: memberToAPI(m)}
})

func (h organizationAPI) GetOrganizationMember(ctx context.Context, r api.GetOrganizationMemberRequestObject) (api.GetOrganizationMemberResponseObject, error) {
	sc := scopeOf(ctx)
	m, err := h.s.deps.Orgs.GetMember(ctx, sc, r.OrganizationId, r.OrganizationMemberId)
	if err != nil {
		return nil, err
	}
	return api.GetOrganizationMember200JSONResponse{Body: api.ExtendedOrganizationMember{OrganizationMember: memberToAPI(m)}}, nil
}

func (h organizationAPI) CreateOrganizationMember(ctx context.Context, r api.CreateOrganizationMemberRequestObject) (api.CreateOrganizationMemberResponseObject, error) {
	sc := scopeOf(ctx)
	var userID *uuid.UUID // absent when the User is named by Username
	if r.Body.UserID != uuid.Nil {
		userID = &r.Body.UserID
	}
	in := org.MemberInput{UserID: userID, Username: r.Body.Username, DisplayName: r.Body.DisplayName, OrgRole: auth.Role(r.Body.OrgRole)}
	m, err := h.s.deps.Orgs.CreateMember(ctx, sc, r.OrganizationId, in,
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateOrganizationMember200JSONResponse{Body: memberToAPI(m)}, nil
}

func (h organizationAPI) DeleteOrganizationMember(ctx context.Context, r api.DeleteOrganizationMemberRequestObject) (api.DeleteOrganizationMemberResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Orgs.DeleteMember(ctx, sc, r.OrganizationId, r.OrganizationMemberId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteOrganizationMember200JSONResponse{Body: deleted(org.MemberType)}, nil
}

func (h organizationAPI) ListUsers(ctx context.Context, r api.ListUsersRequestObject) (api.ListUsersResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	sc := scopeOf(ctx)
	page, err := h.s.deps.Orgs.ListUsers(ctx, sc, requestPath(ctx), params)
	return listed(ctx, sc, page, err, org.UserType, extendUsers)
}

var extendUsers = extendPlain(func(u org.User) api.ExtendedUser { return api.ExtendedUser{User: userToAPI(u)} })

func (h organizationAPI) GetUser(ctx context.Context, r api.GetUserRequestObject) (api.GetUserResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, org.UserList, r.Params.Select, nil, func() (org.User, error) { return h.s.deps.Orgs.GetUser(ctx, sc, r.UserId) }, extendUsers)
}
