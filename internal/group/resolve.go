package group

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/authz"
)

// IDsOf returns the Groups of the organization the User is in (what the caller's Principal carries).
func IDsOf(ctx context.Context, q *db.Queries, orgID, userID uuid.UUID) ([]uuid.UUID, error) {
	return q.GroupIDsOfMember(ctx, db.GroupIDsOfMemberParams{OrganizationID: orgID, UserID: userID})
}

// OfMembers returns, in one query, the Groups of the organization each of users is in (User.GroupIDs of a
// page). Users in none are absent.
func OfMembers(ctx context.Context, q *db.Queries, orgID uuid.UUID, users []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
	out := map[uuid.UUID][]uuid.UUID{}
	if len(users) == 0 {
		return out, nil
	}
	rows, err := q.GroupIDsOfMembers(ctx, db.GroupIDsOfMembersParams{OrganizationID: orgID, UserIds: users})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.UserID] = append(out[r.UserID], r.GroupID)
	}
	return out, nil
}

// Among returns which of ids name Groups of sc's organization, in one query (the Group family's resolver
// for Permissions' GroupIDs).
func Among(ctx context.Context, sc authz.Scope, q *db.Queries, ids []uuid.UUID) ([]uuid.UUID, error) {
	return q.GroupsAmong(ctx, db.GroupsAmongParams{OrganizationID: sc.OrganizationID, GroupIDs: ids})
}
