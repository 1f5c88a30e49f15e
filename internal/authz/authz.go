// Package authz is the one permission checker. Every operation asks it the same question — may this
// Scope do Permission on this Target? — and the answer combines the Scope's organization role with
// the grants in the entity's Permissions field. The Scope is always an argument, never read
// from a context: a request's caller (RequestScope) or the service's own background work (SystemScope). Tenancy is settled before it is asked: an
// entity of another organization is never loaded, so it is 404, never 403.
package authz

import (
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

// GrantableNames lists Grantable, for queries over every grant.
func GrantableNames() []Permission {
	return []Permission{View, Edit, Manage, Delete, Claim, Use, CreateChildren, ViewChildren}
}

var everyday = []Permission{View, ViewChildren, Edit, Delete, CreateChildren, Use}

// roleGrants is what each role holds everywhere in its organization. Admins hold everything; guests
// nothing (only what Permissions grant them). Claim is never implied by a role below admin: a bot reads a
// Channel only when granted.
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
	// SpaceID is the Space the entity lives in (uuid.Nil for what lives in none, Spaces included): a
	// grant on a Space reaches the entities in it, and ViewChildren on it lets one view them.
	SpaceID uuid.UUID
}

// Allowed reports whether p may do perm on t: the rule itself, over a role and the grants. Services ask
// their Scope (Scope.Allows, Check, Filter), which also lets a system principal through.
func Allowed(p auth.Principal, perm Permission, t Target) bool {
	if ByRole(p.Role, perm) {
		return true
	}
	if t.Grants.grants(perm, p) {
		return true
	}
	if t.SpaceID == uuid.Nil {
		return false
	}
	onSpace := p.SpacePermissions[t.SpaceID]
	return onSpace[string(perm)] || (perm == View && onSpace[string(ViewChildren)])
}

// ByRole reports whether a role holds perm everywhere in its organization, whatever Permissions say.
func ByRole(role auth.Role, perm Permission) bool {
	return role == auth.RoleAdmin || roleGrants[role][perm]
}

// Check returns a Permission error unless sc may do perm on t. A system Scope passes every Check.
func Check(sc Scope, perm Permission, t Target) error {
	if sc.none() {
		return apierr.Unauthenticated("a bearer token is required")
	}
	if sc.Allows(perm, t) {
		return nil
	}
	// The message names no entity (ErrorMetadata does), so a bulk operation refused for every item
	// reports one shared error.
	return apierr.Forbidden("your role %q does not allow %s on this %s, and no Permissions grant it to you",
		sc.Role, perm, t.EntityType).WithEntity(t.EntityType, t.ID, "")
}

// CheckReach refuses to let sc act on a principal, or grant a role, stronger than its own: nobody
// grants a role stronger than their own, nor registers a key for, changes, removes or acts as a
// stronger principal. act completes "your role X cannot ...", e.g. "grant the role". A system Scope
// reaches every role.
func CheckReach(sc Scope, role auth.Role, act string) error {
	if sc.none() {
		return apierr.Unauthenticated("a bearer token is required")
	}
	if sc.IsSystem() || sc.Role.AtLeast(role) {
		return nil
	}
	return apierr.Forbidden("your role %q cannot %s %q: it is stronger than yours", sc.Role, act, role)
}

// Viewable returns NotFound (naming ref, as the caller named the entity) unless sc may view t: what a
// caller may not view does not exist for it, and is answered exactly as an unknown ID or Slug.
func Viewable(sc Scope, t Target, ref string) error {
	if sc.none() || sc.Allows(View, t) {
		return nil
	}
	return apierr.NotFound(t.EntityType, ref)
}

// ViewsInside reports whether sc may see what is inside a Space (its target): View or ViewChildren on
// it. A Space a caller may not see into is, for that caller, one that does not exist.
func ViewsInside(sc Scope, space Target) bool {
	return sc.Allows(View, space) || sc.Allows(ViewChildren, space)
}

// OrganizationTarget is the caller's organization as a Target, for organization-level checks.
func OrganizationTarget(orgID uuid.UUID) Target {
	return Target{EntityType: "Organization", ID: orgID.String()}
}

// Filter keeps the items sc may do perm on (in place), for what is read without a list's SQL (lists
// keep to what the caller may view in their SQL: listquery).
func Filter[T any](sc Scope, perm Permission, items []T, target func(T) Target) []T {
	kept := items[:0]
	for _, it := range items {
		if sc.Allows(perm, target(it)) {
			kept = append(kept, it)
		}
	}
	return kept
}
