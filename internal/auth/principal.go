package auth

import (
	"context"

	"github.com/google/uuid"
)

// Role is a member's role in an organization.
type Role string

// The organization roles of DESIGN.md, strongest first.
const (
	RoleAdmin   Role = "admin"
	RoleManager Role = "manager"
	RoleMember  Role = "member"
	RoleViewer  Role = "viewer"
)

var roleRank = map[Role]int{RoleAdmin: 4, RoleManager: 3, RoleMember: 2, RoleViewer: 1}

// Valid reports whether r is one of the four roles.
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
