package entity

import (
	"context"
	"sort"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
)

// Among returns which of ids name entities of sc's organization, in one query: a family's resolver for
// references to many of its entities at once.
type Among func(ctx context.Context, sc authz.Scope, q *db.Queries, ids []uuid.UUID) ([]uuid.UUID, error)

// Grantees resolve the subjects Permissions grant to: the organization's members (the org family's
// resolver) and its Groups (the Group family's).
type Grantees struct {
	Users, Groups Among
}

// Check requires every User that the Permissions field after grants to, and before did not, to
// be a member of the caller's organization, and every Group to be one of its Groups; each other one is
// named by its dot path (Permissions.Edit.UserIDs.<id>, Permissions.View.GroupIDs.<id>), with the same
// answer whether it is unknown or another organization's. Subjects before already named pass again: a
// member removed since, or a Group deleted since, keeps grants that grant nothing, and the entity stays
// writable without Manage.
func (g Grantees) Check(ctx context.Context, sc authz.Scope, q *db.Queries, field string, before, after authz.Grants) error {
	users, groups := map[uuid.UUID][]string{}, map[uuid.UUID][]string{}
	for perm, subjects := range after {
		newSubjects(users, subjects.UserIDs, before[perm].UserIDs, field+"."+perm+".UserIDs.")
		newSubjects(groups, subjects.GroupIDs, before[perm].GroupIDs, field+"."+perm+".GroupIDs.")
	}
	var err *apierr.Error
	if len(users) > 0 {
		found, qerr := g.Users(ctx, sc, q, keys(users))
		if qerr != nil {
			return qerr
		}
		err = missing(err, users, found, "User", "among the members of your organization")
	}
	if len(groups) > 0 {
		found, qerr := g.Groups(ctx, sc, q, keys(groups))
		if qerr != nil {
			return qerr
		}
		err = missing(err, groups, found, "Group", "in your organization")
	}
	if err == nil {
		return nil
	}
	return err
}

// newSubjects adds to paths (by subject) the dot path of each subject of after that before lacks.
func newSubjects(paths map[uuid.UUID][]string, after, before map[string]bool, prefix string) {
	for id := range after {
		if before[id] {
			continue
		}
		uid, err := uuid.Parse(id)
		if err != nil {
			continue // Grants.Validate names it
		}
		paths[uid] = append(paths[uid], prefix+id)
	}
}

func keys(paths map[uuid.UUID][]string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(paths))
	for id := range paths {
		out = append(out, id)
	}
	return out
}

// missing adds to err (a NoSuchReference, nil at first) the paths of the subjects not found.
func missing(err *apierr.Error, paths map[uuid.UUID][]string, found []uuid.UUID, entityType, scope string) *apierr.Error {
	for _, id := range found {
		delete(paths, id)
	}
	var bad []string
	for _, p := range paths {
		bad = append(bad, p...)
	}
	if len(bad) == 0 {
		return err
	}
	sort.Strings(bad)
	e := apierr.NoSuchReference(entityType, scope, bad...)
	if err == nil {
		return e
	}
	err.Items = append(err.Items, e.Items...)
	err.Message += "; " + e.Message
	return err
}
