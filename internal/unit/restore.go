package unit

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// ChangeOrderRestores reads and records restores by ChangeOrder (restore=ChangeOrder:<ID>). The promotion
// engine's package implements it: ChangeOrders write Units (invocations), so Units cannot import them.
type ChangeOrderRestores interface {
	// RestorePoint locks ChangeOrder changeOrderID in tx for a restore and returns its StartTagID: the Tag
	// on the Revision each Unit had before the ChangeOrder reached it. A ChangeOrder the caller may not
	// view, or one in a State that cannot be restored, is 400 naming restore.
	RestorePoint(ctx context.Context, sc authz.Scope, tx *store.Tx, changeOrderID uuid.UUID) (startTagID uuid.UUID, err error)
	// Restored records, in tx, that a Unit of Space spaceID was restored to its Revision before the
	// ChangeOrder: its new head headRevisionID gets the ChangeOrder's RestoreTagID (made on the first
	// restore), the Space joins RestoredSpaceIDs and the ChangeOrder becomes Restored.
	Restored(ctx context.Context, sc authz.Scope, tx *store.Tx, changeOrderID, spaceID, headRevisionID uuid.UUID) error
}

// Restore is what a restore takes a Unit's data back to: Revision Num, or (ChangeOrderID set) the Revision
// before that ChangeOrder reached the Unit. The zero value restores nothing.
type Restore struct {
	Num           int64
	ChangeOrderID uuid.UUID
}

// IsZero reports whether r restores nothing.
func (r Restore) IsZero() bool { return r.Num == 0 && r.ChangeOrderID == uuid.Nil }

func (r Restore) byChangeOrder() bool { return r.ChangeOrderID != uuid.Nil }

// ParseRestore reads the restore parameter: a RevisionNum from 1, or ChangeOrder:<ChangeOrderID>; "" is
// none. Anything else is 400 UserInput naming restore.
func ParseRestore(s string) (Restore, error) {
	if s == "" {
		return Restore{}, nil
	}
	if rest, ok := strings.CutPrefix(s, "ChangeOrder:"); ok {
		id, err := uuid.Parse(rest)
		if err != nil || id == uuid.Nil {
			return Restore{}, apierr.UserInput(fmt.Sprintf("restore %q: ChangeOrder: must be followed by a ChangeOrder's ID", s),
				apierr.Item{Item: "restore", Description: "not a ChangeOrder ID"})
		}
		return Restore{ChangeOrderID: id}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return Restore{}, apierr.UserInput(fmt.Sprintf("restore %q: use a RevisionNum from 1 or ChangeOrder:<ChangeOrderID>", s),
			apierr.Item{Item: "restore", Description: "not a RevisionNum or ChangeOrder:<ID>"})
	}
	return Restore{Num: n}, nil
}

func errRestoreWithUpgrade() error {
	return apierr.Validation("restore and upgrade cannot be combined: one write makes one Revision",
		apierr.Item{Item: "upgrade", Description: "with restore"})
}

// restorePoint is a Restore resolved in a transaction: a ChangeOrder's start Tag (the ChangeOrder locked).
type restorePoint struct {
	Restore
	startTagID uuid.UUID
}

// restorePoint locks the ChangeOrder a restore names (before any Unit, as a promotion does) and reads its
// start Tag; a restore by RevisionNum needs nothing.
func (s *Service) restorePoint(ctx context.Context, sc authz.Scope, tx *store.Tx, r Restore) (restorePoint, error) {
	rp := restorePoint{Restore: r}
	if !r.byChangeOrder() {
		return rp, nil
	}
	if s.ChangeOrderRestores == nil {
		return rp, fmt.Errorf("restore by ChangeOrder: no ChangeOrderRestores given to the Unit service")
	}
	var err error
	rp.startTagID, err = s.ChangeOrderRestores.RestorePoint(ctx, sc, tx, r.ChangeOrderID)
	return rp, err
}

// BulkRestore applies one merge patch to every selected Unit and restores its data as Patch does, each
// Unit in its own savepoint: a Unit that cannot be restored (no such Revision, a ChangeOrder that never
// reached it) fails alone. A ChangeOrder is locked and checked once, before the Units are selected.
func (s *Service) BulkRestore(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch []byte, restore Restore, opts WriteOptions) ([]entity.BulkItem[Unit], error) {
	selectRefs := s.selector(sc, path, sel)
	var rp restorePoint
	withPoint := func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		var err error
		if rp, err = s.restorePoint(ctx, sc, tx, restore); err != nil {
			return nil, err
		}
		return selectRefs(ctx, tx)
	}
	return entity.RunBulk(ctx, s.Store, EntityType, opts.DryRun, withPoint, func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Unit, error) {
		if _, err := s.kit.PatchIn(ctx, sc, tx, ref.SpaceID, ref.ID.String(), patch); err != nil {
			return Unit{}, err
		}
		out, err := s.restoreRevision(ctx, sc, tx, ref.SpaceID, ref.ID, rp, opts, true)
		return out.Unit, err
	})
}
