package listquery

import (
	"fmt"
	"strings"

	"github.com/hubd/hubd/internal/authz"
)

// Visibility says where the grants are that let a caller view a listed row, for callers whose role does
// not view the whole organization (guests). Lists compile it into their SQL, so pages are full and
// continue tokens stay correct however many rows are withheld. Every fragment is a constant of the code.
type Visibility struct {
	// Grants is the rows' Permissions column (jsonb); empty when they have none of their own.
	Grants string
	// Space is the column of the Space a row lives in: View or ViewChildren on that Space reaches the
	// row. Empty for what lives in no Space.
	Space string
	// SpacePermissions are what a grant on that Space must give to reach the row (default: View or
	// ViewChildren).
	SpacePermissions []authz.Permission
	// Owner, for rows without Permissions of their own (a Unit's Revisions), is the entity whose View
	// reaches them.
	Owner *Owner
	// Members is a uuid[] expression of Users who see the row whatever their role (a Group's members; a
	// User itself).
	Members string
}

// Owner is an entity whose grants reach the rows of another: its table (with an alias), the condition
// joining it to a row, and its Permissions column.
type Owner struct {
	From, Join, Grants string
}

// visibleTo is the condition keeping a list of e to what sc may view, or "" when sc's role views the
// whole organization (no predicate at all). An entity without Visibility lists nothing to such a caller.
// $1 is the organization.
func visibleTo(e *Entity, sc authz.Scope, b *binder) string {
	if sc.ByRole(authz.View) {
		return ""
	}
	v := e.Visibility
	if v == nil {
		return "FALSE"
	}
	var anyOf []string
	if v.Grants != "" {
		anyOf = append(anyOf, granted(v.Grants, sc, b, authz.View))
	}
	if v.Space != "" {
		perms := v.SpacePermissions
		if perms == nil {
			perms = []authz.Permission{authz.View, authz.ViewChildren}
		}
		if spaces := sc.SpacesReached(perms...); len(spaces) > 0 {
			anyOf = append(anyOf, fmt.Sprintf("%s = ANY(%s::uuid[])", v.Space, b.bind(spaces)))
		}
	}
	if o := v.Owner; o != nil {
		anyOf = append(anyOf, fmt.Sprintf("EXISTS (SELECT 1 FROM %s WHERE %s AND %s)", o.From, o.Join, granted(o.Grants, sc, b, authz.View)))
	}
	if v.Members != "" {
		anyOf = append(anyOf, fmt.Sprintf("%s @> ARRAY[%s::uuid]", v.Members, b.bind(sc.UserID)))
	}
	if len(anyOf) == 0 {
		return "FALSE"
	}
	return "(" + strings.Join(anyOf, " OR ") + ")"
}

// granted is the condition that the Permissions in column grant one of perms to sc's User or one of its
// Groups (the column's GIN index answers it).
func granted(column string, sc authz.Scope, b *binder, perms ...authz.Permission) string {
	return fmt.Sprintf("%s @> ANY(%s::jsonb[])", column, b.bind(authz.Containing(sc.Principal, perms...)))
}
