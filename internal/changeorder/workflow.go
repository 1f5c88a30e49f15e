package changeorder

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// TagsAmong are, of the Tags tagIDs, those a ChangeOrder made, each with its ChangeOrder's ID (in one
// query; whether the caller may view the ChangeOrder is the caller's to check).
func TagsAmong(ctx context.Context, c store.Conn, sc authz.Scope, tagIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	out := map[uuid.UUID]uuid.UUID{}
	if len(tagIDs) == 0 {
		return out, nil
	}
	rows, err := c.Queries().ChangeOrderTagsAmong(ctx, db.ChangeOrderTagsAmongParams{OrganizationID: sc.OrganizationID, TagIds: tagIDs})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.TagID] = r.ChangeOrderID
	}
	return out, nil
}
