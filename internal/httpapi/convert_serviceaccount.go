package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/serviceaccount"
)

// serviceAccountEdge serves the ServiceAccount operations (edge_service_account.gen.go): include=UserID expands its bot
// User.
var serviceAccountEdge = &edge[serviceaccount.ServiceAccount, serviceaccount.Fields, api.ServiceAccount, api.ExtendedServiceAccount]{
	service: served(serviceaccount.Family),
	listing: serviceaccount.ListEntity,
	toAPI:   serviceAccountToAPI,
	fields:  serviceAccountFields,
	relations: []relation[serviceaccount.ServiceAccount]{
		byID("UserID", func(sa serviceaccount.ServiceAccount) []uuid.UUID { return []uuid.UUID{sa.UserID} }, loadUsers)},
	extended: func(sa serviceaccount.ServiceAccount, a api.ServiceAccount, r *related) api.ExtendedServiceAccount {
		return api.ExtendedServiceAccount{ServiceAccount: a, Organization: r.organization, User: relatedOne[api.User](r, "UserID", sa.UserID)}
	},
}

func serviceAccountToAPI(s serviceaccount.ServiceAccount) api.ServiceAccount {
	return api.ServiceAccount{ServiceAccountID: s.ID, UserID: s.UserID, OrganizationID: s.OrganizationID, Slug: s.Slug,
		DisplayName: s.DisplayName, Labels: s.Labels, Annotations: s.Annotations, DeleteGates: s.DeleteGates,
		Permissions: permissionsToAPI(s.Permissions), OrgRole: api.OrgRole(s.OrgRole), HiddenReason: s.HiddenReason,
		EntityType: serviceaccount.EntityType, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), Version: s.Version}
}

func serviceAccountFields(b *api.ServiceAccount) serviceaccount.Fields {
	return serviceaccount.Fields{Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}, OrgRole: auth.Role(b.OrgRole)}
}
