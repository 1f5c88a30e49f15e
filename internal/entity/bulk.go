package entity

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// MaxBulk caps how many entities one bulk operation touches.
const MaxBulk = listquery.MaxLimit

// Ref names an entity a bulk operation selected (SpaceID for Space-resident families).
type Ref struct {
	ID      uuid.UUID
	SpaceID uuid.UUID
	Slug    string
}

// BulkItem is the outcome of a bulk operation for one entity: the entity as written, or Err.
type BulkItem[T any] struct {
	Ref   Ref
	Value T
	Err   *apierr.Error
}

// Selector picks the entities of a bulk operation, in its transaction.
type Selector func(ctx context.Context, tx *store.Tx) ([]Ref, error)

// RequireSelection refuses a bulk operation that selects nothing explicitly: it would touch everything.
func RequireSelection(p listquery.Params) error {
	if strings.TrimSpace(p.Where) == "" && p.Filter == "" && strings.TrimSpace(p.Contains) == "" {
		return apierr.UserInput("a bulk operation needs where, filter or contains to select its entities",
			apierr.Item{Item: "where", Description: "required (or filter, or contains)"})
	}
	return nil
}

// TooManySelected refuses a selection larger than MaxBulk.
func TooManySelected(entityType string) error {
	return apierr.UserInput(fmt.Sprintf("the selection holds more than %d %ss; narrow it with where", MaxBulk, entityType),
		apierr.Item{Item: "where", Description: "selects too many"})
}

// RunBulk selects entities and applies fn to each in its own savepoint of one transaction, so one
// item's failure undoes only that item. A dry run applies everything, then rolls back.
func RunBulk[T any](ctx context.Context, st *store.Store, entityType string, dryRun bool, selectRefs Selector,
	fn func(ctx context.Context, tx *store.Tx, ref Ref) (T, error)) ([]BulkItem[T], error) {
	var items []BulkItem[T]
	err := st.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		items = nil
		refs, err := selectRefs(ctx, tx)
		if err != nil {
			return err
		}
		for _, ref := range refs {
			item, err := BulkStep(ctx, tx, entityType, ref, func(sp *store.Tx) (T, error) { return fn(ctx, sp, ref) })
			if err != nil {
				return err
			}
			items = append(items, item)
		}
		return nil
	})
	return items, err
}

// BulkStep applies fn to one selected entity in its own savepoint of tx: a failure of the item undoes only
// it and is its Err (naming the entity when the error does not); a failure of the transaction itself
// (unexpected, timeout, unavailable) is returned, to fail the whole operation.
func BulkStep[T any](ctx context.Context, tx *store.Tx, entityType string, ref Ref, fn func(sp *store.Tx) (T, error)) (BulkItem[T], error) {
	item := BulkItem[T]{Ref: ref}
	err := tx.Savepoint(ctx, func(sp *store.Tx) error {
		var err error
		item.Value, err = fn(sp)
		return err
	})
	if err == nil {
		return item, nil
	}
	e := apierr.From(err)
	if e.Type == apierr.TypeUnexpected || e.Type == apierr.TypeGatewayTimeout || e.Type == apierr.TypeServiceUnavailable {
		return item, err
	}
	if e.EntityID == "" {
		e = e.WithEntity(entityType, ref.ID.String(), ref.Slug)
	}
	item.Err = e
	return item, nil
}
