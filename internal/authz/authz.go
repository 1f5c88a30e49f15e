// Package authz is the one permission checker. Every operation asks it the same question — may the
// caller do Permission on this Target? — and the answer combines the caller's organization role with
// the grants in the entity's Permissions field (DESIGN.md). Tenancy is settled before it is asked: an
// entity of another organization is never loaded, so it is 404, never 403.
package authz

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
)

// Permission names one thing a caller may do to an entity.
type Permission string

// Entity permissions (grantable through Permissions) and organization-level ones (role only).
const (
	View           Permission = "View"
	Edit           Permission = "Edit"
	Manage         Permission = "Manage"
	Delete         Permission = "Delete"
	Claim          Permission = "Claim"
	Use            Permission = "Use"
	CreateChildren Permission = "CreateChildren"
	ViewChildren   Permission = "ViewChildren"

	// ManageMembers adds and removes organization members.
	ManageMembers Permission = "ManageMembers"
	// ManageOrganization changes or deletes the organization itself.
	ManageOrganization Permission = "ManageOrganization"
)

// Grantable are the names a Permissions field may hold.
var Grantable = map[Permission]bool{
	View: true, Edit: true, Manage: true, Delete: true, Claim: true, Use: true, CreateChildren: true, ViewChildren: true,
}

var everyday = []Permission{View, ViewChildren, Edit, Delete, CreateChildren, Use}

// roleGrants is what each role holds everywhere in its organization. Admins hold everything. Claim is
// never implied by a role below admin: a bot reads a Channel only when granted (SPEC.md).
var roleGrants = map[auth.Role]map[Permission]bool{
	auth.RoleManager: set(append(everyday, Manage, ManageMembers)...),
	auth.RoleMember:  set(everyday...),
	auth.RoleViewer:  set(View, ViewChildren),
}

func set(ps ...Permission) map[Permission]bool {
	m := map[Permission]bool{}
	for _, p := range ps {
		m[p] = true
	}
	return m
}

// Target is what a permission is asked about.
type Target struct {
	EntityType string
	ID         string
	Grants     Grants
}

// Allowed reports whether p may do perm on t.
func Allowed(p auth.Principal, perm Permission, t Target) bool {
	if p.Role == auth.RoleAdmin || roleGrants[p.Role][perm] {
		return true
	}
	return t.Grants.grants(perm, p.UserID)
}

// Check returns a Permission error unless the request's caller may do perm on t.
func Check(ctx context.Context, perm Permission, t Target) error {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return apierr.Unauthenticated("a bearer token is required")
	}
	if Allowed(p, perm, t) {
		return nil
	}
	// The message names no entity (ErrorMetadata does), so a bulk operation refused for every item
	// reports one shared error.
	return apierr.Forbidden("your role %q does not allow %s on this %s, and no Permissions grant it to you",
		p.Role, perm, t.EntityType).WithEntity(t.EntityType, t.ID, "")
}

// CheckReach refuses to let the caller act on a principal, or grant a role, stronger than their own:
// nobody grants a role stronger than their own, nor registers a key for, changes, removes or acts as a
// stronger principal. act completes "your role X cannot ...", e.g. "grant the role".
func CheckReach(ctx context.Context, role auth.Role, act string) error {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return apierr.Unauthenticated("a bearer token is required")
	}
	if p.Role.AtLeast(role) {
		return nil
	}
	return apierr.Forbidden("your role %q cannot %s %q: it is stronger than yours", p.Role, act, role)
}

// Caller returns the request's Principal; handlers run only after authentication, so its absence is a bug.
func Caller(ctx context.Context) auth.Principal {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		panic("authz: no principal in an authenticated request")
	}
	return p
}

// OrganizationTarget is the caller's organization as a Target, for organization-level checks.
func OrganizationTarget(orgID uuid.UUID) Target {
	return Target{EntityType: "Organization", ID: orgID.String()}
}

// Filter keeps the items p may do perm on (in place): lists read a page, then drop what the caller may
// not see.
func Filter[T any](p auth.Principal, perm Permission, items []T, target func(T) Target) []T {
	kept := items[:0]
	for _, it := range items {
		if Allowed(p, perm, target(it)) {
			kept = append(kept, it)
		}
	}
	return kept
}
