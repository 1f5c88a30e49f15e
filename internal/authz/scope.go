package authz

import (
	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/auth"
)

// Scope is who acts and in which organization. Every service operation takes it as an argument, so
// what a call may see and do is visible in its signature, and work that no request carries (sweepers
// today; triggers, invocations and promotions tomorrow) acts as a named system principal.
type Scope struct {
	auth.Principal
	// System names the background work acting, for a system principal ("sweeper"); empty for a request's
	// caller. A system principal has no User: what it does is recorded as done by no User, and logged
	// under this name.
	System string
}

// RequestScope is the Scope of an authenticated caller.
func RequestScope(p auth.Principal) Scope { return Scope{Principal: p} }

// SystemScope is the Scope of background work of the service itself in one organization: it holds every
// permission there (as an admin would) and acts as no User.
func SystemScope(orgID uuid.UUID, name string) Scope {
	return Scope{Principal: auth.Principal{OrganizationID: orgID, Role: auth.RoleAdmin}, System: name}
}

// IsSystem reports a system principal.
func (s Scope) IsSystem() bool { return s.System != "" }

// Allows reports whether sc may do perm on t: a system principal may do anything in its organization;
// anyone else as Allowed says.
func (s Scope) Allows(perm Permission, t Target) bool {
	return s.IsSystem() || Allowed(s.Principal, perm, t)
}

// ByRole reports whether sc holds perm everywhere in its organization by its role alone (a system
// principal holds everything): then no entity's Permissions need to be read to answer.
func (s Scope) ByRole(perm Permission) bool { return s.IsSystem() || ByRole(s.Role, perm) }

// SpacesReached lists the Spaces whose Permissions grant sc one of perms (what lists of Space-resident
// entities add to what their own Permissions grant).
func (s Scope) SpacesReached(perms ...Permission) []uuid.UUID {
	var out []uuid.UUID
	for id, held := range s.SpacePermissions {
		for _, p := range perms {
			if held[string(p)] {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

// none reports the zero Scope: nobody, in no organization (a bug at the call site, answered as 401 as
// an unauthenticated request would be).
func (s Scope) none() bool { return !s.IsSystem() && s.OrganizationID == uuid.Nil }
