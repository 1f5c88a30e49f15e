package entity

import (
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
)

// CheckGrantees requires every User that the Permissions field after grants to, and before did not, to
// be a member of the caller's organization; each other one is named by its dot path
// (Permissions.Edit.UserIDs.<id>), with the same answer whether the User is unknown or another
// organization's. Users before already named pass again: a member removed since keeps grants that grant
// nothing (a token needs a current membership), and the entity stays writable without Manage.
// GroupIDs are not checked: the Group family does not exist yet.
func CheckGrantees(ctx context.Context, sc authz.Scope, q *db.Queries, field string, before, after authz.Grants) error {
	paths := map[uuid.UUID][]string{}
	for perm, subjects := range after {
		for id := range subjects.UserIDs {
			if before[perm].UserIDs[id] {
				continue
			}
			uid, err := uuid.Parse(id)
			if err != nil {
				continue // Grants.Validate names it
			}
			paths[uid] = append(paths[uid], field+"."+perm+".UserIDs."+id)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(paths))
	for id := range paths {
		ids = append(ids, id)
	}
	members, err := q.OrganizationMembersAmong(ctx, db.OrganizationMembersAmongParams{OrganizationID: sc.OrganizationID, UserIds: ids})
	if err != nil {
		return err
	}
	for _, id := range members {
		delete(paths, id)
	}
	var bad []string
	for _, p := range paths {
		bad = append(bad, p...)
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return apierr.NoSuchReference("User", "among the members of your organization", bad...)
}
