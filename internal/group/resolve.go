package group

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
)

// IDsOf returns the Groups of the organization the User is in (what the caller's Principal carries).
func IDsOf(ctx context.Context, q *db.Queries, orgID, userID uuid.UUID) ([]uuid.UUID, error) {
	return q.GroupIDsOfMember(ctx, db.GroupIDsOfMemberParams{OrganizationID: orgID, UserID: userID})
}
