// Package org holds the rules of the Organization, OrganizationMember and User families. The
// organization of every request is the one its token names: an organization ID in a path that is not
// the caller's is NotFound, and Users are visible only while they are members of it.
package org
