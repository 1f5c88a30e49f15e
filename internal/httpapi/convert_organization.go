package httpapi

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/org"
)

// organizationEdge serves the Organization operations (edge_organization.gen.go): only the caller's is read or
// written, and its Extended form includes nothing.
var organizationEdge = &edge[org.Organization, org.OrganizationFields, api.Organization, api.ExtendedOrganization]{
	service: func(d *Deps) kitService[org.Organization, org.OrganizationFields] { return d.Orgs },
	listing: org.OrganizationList,
	toAPI:   organizationToAPI,
	fields:  organizationFields,
	extended: func(_ org.Organization, a api.Organization, _ *related) api.ExtendedOrganization {
		return api.ExtendedOrganization{Organization: a}
	},
}

func organizationToAPI(o org.Organization) api.Organization {
	return api.Organization{
		OrganizationID: o.ID, Slug: o.Slug, DisplayName: o.DisplayName, EmailDomain: o.EmailDomain,
		Labels: o.Labels, Annotations: o.Annotations, DeleteGates: o.DeleteGates,
		ExternalID: o.ExternalID, HiddenReason: o.HiddenReason, EntityType: org.OrganizationType,
		CreatedAt: o.CreatedAt.UTC(), UpdatedAt: o.UpdatedAt.UTC(), Version: o.Version,
		SignInProvisionRole: string(o.SignInProvisionRole),
	}
}

func organizationFields(b *api.Organization) org.OrganizationFields {
	return org.OrganizationFields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName,
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		EmailDomain: b.EmailDomain, SignInProvisionRole: auth.Role(b.SignInProvisionRole),
	}
}

func memberToAPI(m org.Member) api.OrganizationMember {
	return api.OrganizationMember{
		OrganizationID: m.OrganizationID, UserID: m.UserID, Username: m.Username, Slug: m.Slug,
		DisplayName: m.DisplayName, ExternalID: m.ExternalID, ExternalOrganizationID: m.ExternalOrganizationID,
		ProfilePictureURL: m.ProfilePictureURL, OrgRole: api.OrgRole(m.OrgRole),
	}
}

func userToAPI(u org.User) api.User {
	return api.User{
		UserID: u.ID, Slug: u.Slug, Username: u.Username, DisplayName: u.DisplayName, ExternalID: u.ExternalID,
		ProfilePictureURL: u.ProfilePictureURL, GroupIDs: append([]uuid.UUID{}, u.GroupIDs...), HiddenReason: u.HiddenReason,
		EntityType: org.UserType, CreatedAt: u.CreatedAt.UTC(), UpdatedAt: u.UpdatedAt.UTC(), Version: u.Version,
	}
}
