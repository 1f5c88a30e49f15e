package space

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// Select returns the Spaces of the caller's organization (at most entity.MaxBulk) that a bulk copy's
// where_space and filter_space (a Filter of Spaces, resolved by the caller) select, in tx. Errors name
// the parameter they came from.
func Select(ctx context.Context, tx *store.Tx, tokens *listquery.TokenCodec, sc authz.Scope, where string, filter *listquery.FilterDefinition) ([]uuid.UUID, error) {
	limit := entity.MaxBulk
	if filter != nil && filter.From != EntityType {
		return nil, apierr.Validation("filter_space: the Filter selects "+filter.From+", not Space",
			apierr.Item{Item: "filter_space", Description: "a Filter of " + filter.From})
	}
	params := listquery.Params{Where: where, Limit: &limit, FilterDefinition: filter}
	page, err := listquery.Run[db.Space](ctx, tx, tokens, listquery.Query{Entity: ListEntity, Caller: sc, Path: "where_space", Params: params})
	if err != nil {
		if e := apierr.From(err); e.Type == apierr.TypeUserInput {
			return nil, apierr.UserInput("where_space: "+strings.TrimPrefix(e.Message, "where: "), apierr.Item{Item: "where_space", Description: "invalid"})
		}
		return nil, err
	}
	if page.Continue != "" {
		return nil, entity.TooManySelected(EntityType)
	}
	out := make([]uuid.UUID, len(page.Items))
	for i, r := range page.Items {
		out[i] = r.SpaceID
	}
	return out, nil
}
