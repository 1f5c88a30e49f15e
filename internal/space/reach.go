package space

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// PermissionsHeld returns, by Space, the permissions Spaces' Permissions grant p's User or its Groups
// (what a Principal carries as SpacePermissions), in one query.
func PermissionsHeld(ctx context.Context, q *db.Queries, p auth.Principal) (map[uuid.UUID]map[string]bool, error) {
	rows, err := q.SpaceGrantsContaining(ctx, db.SpaceGrantsContainingParams{OrganizationID: p.OrganizationID,
		Docs: authz.Containing(p, authz.GrantableNames()...)})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]map[string]bool, len(rows))
	for _, r := range rows {
		g, err := store.DecodeJSON[authz.Grants](r.Permissions)
		if err != nil {
			return nil, err
		}
		out[r.SpaceID] = g.Holds(p)
	}
	return out, nil
}
