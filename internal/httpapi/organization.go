package httpapi

import (
	"context"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/org"
)

func (h *handlers) ListOrganizations(ctx context.Context, _ api.ListOrganizationsRequestObject) (api.ListOrganizationsResponseObject, error) {
	orgs, err := h.s.deps.Orgs.ListOrganizations(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedOrganization, len(orgs))
	for i, o := range orgs {
		out[i] = api.ExtendedOrganization{Organization: organizationToAPI(o)}
	}
	return api.ListOrganizations200JSONResponse{Body: out}, nil
}

func (h *handlers) GetOrganization(ctx context.Context, r api.GetOrganizationRequestObject) (api.GetOrganizationResponseObject, error) {
	o, err := h.s.deps.Orgs.GetOrganization(ctx, r.OrganizationId)
	if err != nil {
		return nil, err
	}
	return api.GetOrganization200JSONResponse{Body: api.ExtendedOrganization{Organization: organizationToAPI(o)}}, nil
}

func (h *handlers) CreateOrganization(ctx context.Context, r api.CreateOrganizationRequestObject) (api.CreateOrganizationResponseObject, error) {
	o, err := h.s.deps.Orgs.CreateOrganization(ctx, organizationFields(r.Body),
		org.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateOrganization200JSONResponse{Body: organizationToAPI(o)}, nil
}

func (h *handlers) UpdateOrganization(ctx context.Context, r api.UpdateOrganizationRequestObject) (api.UpdateOrganizationResponseObject, error) {
	o, err := h.s.deps.Orgs.UpdateOrganization(ctx, r.OrganizationId, r.Body.Version, organizationFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateOrganization200JSONResponse{Body: organizationToAPI(o)}, nil
}

func (h *handlers) DeleteOrganization(ctx context.Context, r api.DeleteOrganizationRequestObject) (api.DeleteOrganizationResponseObject, error) {
	if err := h.s.deps.Orgs.DeleteOrganization(ctx, r.OrganizationId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteOrganization200JSONResponse{Body: deleted(org.OrganizationType)}, nil
}

func (h *handlers) ListOrganizationMembers(ctx context.Context, r api.ListOrganizationMembersRequestObject) (api.ListOrganizationMembersResponseObject, error) {
	ms, err := h.s.deps.Orgs.ListMembers(ctx, r.OrganizationId)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedOrganizationMember, len(ms))
	for i, m := range ms {
		out[i] = api.ExtendedOrganizationMember{OrganizationMember: memberToAPI(m)}
	}
	return api.ListOrganizationMembers200JSONResponse{Body: out}, nil
}

func (h *handlers) GetOrganizationMember(ctx context.Context, r api.GetOrganizationMemberRequestObject) (api.GetOrganizationMemberResponseObject, error) {
	m, err := h.s.deps.Orgs.GetMember(ctx, r.OrganizationId, r.OrganizationMemberId)
	if err != nil {
		return nil, err
	}
	return api.GetOrganizationMember200JSONResponse{Body: api.ExtendedOrganizationMember{OrganizationMember: memberToAPI(m)}}, nil
}

func (h *handlers) CreateOrganizationMember(ctx context.Context, r api.CreateOrganizationMemberRequestObject) (api.CreateOrganizationMemberResponseObject, error) {
	in := org.MemberInput{UserID: r.Body.UserID, Username: r.Body.Username, DisplayName: r.Body.DisplayName, OrgRole: auth.Role(r.Body.OrgRole)}
	m, err := h.s.deps.Orgs.CreateMember(ctx, r.OrganizationId, in,
		org.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateOrganizationMember200JSONResponse{Body: memberToAPI(m)}, nil
}

func (h *handlers) DeleteOrganizationMember(ctx context.Context, r api.DeleteOrganizationMemberRequestObject) (api.DeleteOrganizationMemberResponseObject, error) {
	if err := h.s.deps.Orgs.DeleteMember(ctx, r.OrganizationId, r.OrganizationMemberId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteOrganizationMember200JSONResponse{Body: deleted(org.MemberType)}, nil
}

func (h *handlers) ListUsers(ctx context.Context, _ api.ListUsersRequestObject) (api.ListUsersResponseObject, error) {
	users, err := h.s.deps.Orgs.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedUser, len(users))
	for i, u := range users {
		out[i] = api.ExtendedUser{User: userToAPI(u)}
	}
	return api.ListUsers200JSONResponse{Body: out}, nil
}

func (h *handlers) GetUser(ctx context.Context, r api.GetUserRequestObject) (api.GetUserResponseObject, error) {
	u, err := h.s.deps.Orgs.GetUser(ctx, r.UserId)
	if err != nil {
		return nil, err
	}
	return api.GetUser200JSONResponse{Body: api.ExtendedUser{User: userToAPI(u)}}, nil
}
