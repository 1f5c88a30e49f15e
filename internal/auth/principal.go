package auth

import (
	"context"

	"github.com/google/uuid"
)

// Role is a member's role in an organization.
type Role string

// The organization roles, strongest first.
const (
	RoleAdmin   Role = "admin"
	RoleManager Role = "manager"
	RoleMember  Role = "member"
	RoleViewer  Role = "viewer"
	// RoleGuest holds nothing organization-wide: only what entities' Permissions grant it, directly or
	// through a Group.
	RoleGuest Role = "guest"
)

var roleRank = map[Role]int{RoleAdmin: 5, RoleManager: 4, RoleMember: 3, RoleViewer: 2, RoleGuest: 1}

// RoleNames lists the roles, strongest first, for messages.
const RoleNames = "admin, manager, member, viewer or guest"

// Valid reports whether r is one of the five roles.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// AtLeast reports whether r is as strong as other.
func (r Role) AtLeast(other Role) bool { return roleRank[r] >= roleRank[other] }

// Weaker returns the weaker of two roles: a token never grants more than the membership holds now.
func Weaker(a, b Role) Role {
	if roleRank[a] <= roleRank[b] {
		return a
	}
	return b
}

// Principal is the authenticated caller of a request.
type Principal struct {
	UserID         uuid.UUID
	OrganizationID uuid.UUID
	Role           Role
	// GroupIDs are the organization's Groups the User is in, read with the membership on every request
	// (Permissions granted to a Group reach its members).
	GroupIDs []uuid.UUID
	// SpacePermissions are the permission names Spaces' Permissions grant the User or its Groups, by
	// Space, read with the membership for every role but admin: a grant on a Space reaches the entities
	// in it, so checks on them need no further query.
	SpacePermissions map[uuid.UUID]map[string]bool
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the caller, if the request was authenticated.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
