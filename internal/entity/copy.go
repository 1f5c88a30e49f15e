package entity

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// CloneOptions are the parameters of a bulk create by copy (clone) of a Space-resident family.
type CloneOptions struct {
	// Destinations, when set, picks the Spaces the copies go to, in the clone's transaction (where_space,
	// filter_space); it must pick at least one. Unset, each copy goes to its source's Space.
	Destinations func(ctx context.Context, tx *store.Tx) ([]uuid.UUID, error)
	// Prefixes make one copy per prefix, named prefix + the source's Slug (an empty prefix keeps it).
	Prefixes    []string
	AllowExists bool
	DryRun      bool
}

// Clone copies every entity the selection picks into each destination Space, once per prefix, with patch
// (a merge patch) applied to each copy (in the Space its fields decide, for a family that is a Placer). A
// copy is a create in its Space (CreateChildren there, Manage when
// it carries Permissions, the family's checks); SetUpstream, when the family has it, records its source.
func (s *Service[R, E, F]) Clone(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, opts CloneOptions) ([]BulkItem[E], error) {
	return RunCopies(ctx, s.Store, s.Type, s.selector(sc, path, sel), opts, func(ctx context.Context, tx *store.Tx, ref Ref, spaceID uuid.UUID, prefix string) (E, error) {
		return s.cloneOne(ctx, sc, tx, ref, spaceID, prefix, patch, opts.AllowExists)
	})
}

// RunCopies selects entities and makes one copy of each per destination Space (opts.Destinations, or the
// entity's own Space) and prefix, in one transaction, each copy in its own savepoint (BulkStep).
func RunCopies[T any](ctx context.Context, st *store.Store, entityType string, selectRefs Selector, opts CloneOptions,
	copyOne func(ctx context.Context, tx *store.Tx, ref Ref, spaceID uuid.UUID, prefix string) (T, error)) ([]BulkItem[T], error) {
	prefixes := opts.Prefixes
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	var items []BulkItem[T]
	err := st.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		items = nil
		refs, err := selectRefs(ctx, tx)
		if err != nil {
			return err
		}
		var dest []uuid.UUID
		if opts.Destinations != nil {
			if dest, err = opts.Destinations(ctx, tx); err != nil {
				return err
			}
			if len(dest) == 0 {
				// Never fall back to the sources' own Spaces: the caller named where the copies go.
				return apierr.Validation("where_space and filter_space select no Space of your organization; nothing was copied",
					apierr.Item{Item: "where_space", Description: "selects no Space"})
			}
		}
		if len(refs)*len(prefixes)*max(1, len(dest)) > MaxBulk {
			return TooManySelected(entityType)
		}
		for _, ref := range refs {
			targets := dest
			if len(targets) == 0 {
				targets = []uuid.UUID{ref.SpaceID}
			}
			for _, spaceID := range targets {
				for _, prefix := range prefixes {
					item, err := BulkStep(ctx, tx, entityType, ref, func(sp *store.Tx) (T, error) {
						return copyOne(ctx, sp, ref, spaceID, prefix)
					})
					if err != nil {
						return err
					}
					items = append(items, item)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return items, nil
}

func (s *Service[R, E, F]) cloneOne(ctx context.Context, sc authz.Scope, tx *store.Tx, ref Ref, spaceID uuid.UUID, prefix string, patch json.RawMessage, allowExists bool) (E, error) {
	src, err := s.Resolve(ctx, sc, tx, ref.SpaceID, ref.ID.String(), false)
	if err != nil {
		return src, err
	}
	slug, _ := json.Marshal(map[string]string{"Slug": prefix + src.CommonFields().Slug})
	named, err := MergePatch(s.fieldsOf(src), slug)
	if err != nil {
		return src, err
	}
	if len(patch) > 0 {
		if named, err = MergePatch(json.RawMessage(named), patch); err != nil {
			return src, err
		}
	}
	var f F
	if err := json.Unmarshal(named, &f); err != nil {
		return src, apierr.UserInput(fmt.Sprintf("the patched %s is not valid: %v", s.Type, err))
	}
	if place := s.hooks().spaceFor; place != nil {
		if spaceID, err = place(ctx, tx, sc, f); err != nil {
			return src, err
		}
	}
	out, created, err := s.create(ctx, sc, tx, spaceID, f, allowExists)
	setUpstream := s.hooks().setUpstream
	if err != nil || !created || setUpstream == nil {
		return out, err
	}
	row, err := setUpstream(ctx, tx.Q, sc, out.ObjectMeta().ID, src.ObjectMeta().ID)
	if err != nil {
		return out, err
	}
	return s.FromRow(row)
}

// Move puts every entity the selection picks in Space toSpaceID: Delete on each (it leaves its Space) and
// CreateChildren on the destination, its Slug free there (else 409), the family's checks; a new Version.
func (s *Service[R, E, F]) Move(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, toSpaceID uuid.UUID, dryRun bool) ([]BulkItem[E], error) {
	return RunBulk(ctx, s.Store, s.Type, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref Ref) (E, error) {
		cur, err := s.Resolve(ctx, sc, tx, ref.SpaceID, ref.ID.String(), true)
		if err != nil {
			return cur, err
		}
		if err := authz.Check(sc, authz.Delete, s.target(cur)); err != nil {
			return cur, err
		}
		if err := s.checkWriteNeeds(sc); err != nil {
			return cur, err
		}
		to, err := s.visibleParent(ctx, sc, tx.Q, toSpaceID)
		if apierr.Is(err, apierr.TypeNotFound) {
			return cur, apierr.NoSuchReference("Space", "of your organization", "ToSpaceID")
		}
		if err != nil {
			return cur, err
		}
		if err := authz.Check(sc, authz.CreateChildren, to.Target); err != nil {
			return cur, err
		}
		if cur.ObjectMeta().SpaceID == toSpaceID {
			return cur, nil
		}
		if _, err := s.check(ctx, tx, sc, toSpaceID, &cur, s.fieldsOf(cur)); err != nil {
			return cur, err
		}
		row, err := s.hooks().moveRow(ctx, tx.Q, sc, cur, toSpaceID)
		if err != nil {
			return cur, SlugClash(err, s.Type, cur.CommonFields().Slug)
		}
		moved, err := s.FromRow(row)
		if err != nil {
			return moved, err
		}
		tx.Emit(s.event(sc, moved, Updated, to))
		return moved, nil
	})
}
