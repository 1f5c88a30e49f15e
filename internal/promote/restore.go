package promote

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
	"github.com/hubd/hubd/internal/unit"
)

// Restores takes promoted changes back: the restores by ChangeOrder of PATCH .../unit/{unit_id} and bulk
// PATCH /unit (restore=ChangeOrder:<ID>) read and record them through it (unit.ChangeOrderRestores).
type Restores struct{}

var _ unit.ChangeOrderRestores = Restores{}

// RestorePoint locks the ChangeOrder for the restore and returns its StartTagID. A ChangeOrder the caller
// may not view (another organization's, a random ID) is 400 naming restore; so is one that never moved
// (New), was Aborted, or whose restore was released (RestoreReleased).
func (Restores) RestorePoint(ctx context.Context, sc authz.Scope, tx *store.Tx, changeOrderID uuid.UUID) (uuid.UUID, error) {
	co, err := changeorder.LockForPromote(ctx, sc, tx, changeOrderID)
	if apierr.Is(err, apierr.TypeNotFound) {
		return uuid.Nil, apierr.NoSuchReference(changeorder.EntityType, "of the organization", "restore")
	}
	if err != nil {
		return uuid.Nil, err
	}
	switch co.State {
	case changeorder.InProgress, changeorder.Resolved, changeorder.Released, changeorder.Restored:
	default:
		return uuid.Nil, apierr.Validation("ChangeOrder "+co.Slug+" is "+co.State+": only an InProgress, Resolved, Released or Restored ChangeOrder can be restored",
			apierr.Item{Item: "restore", Description: "ChangeOrder is " + co.State})
	}
	if co.StartTagID == nil {
		return uuid.Nil, apierr.Validation("ChangeOrder "+co.Slug+" has no start Tag: it marks no Revision to restore",
			apierr.Item{Item: "restore", Description: "ChangeOrder has no StartTagID"})
	}
	return *co.StartTagID, nil
}

// Restored records a Unit's restore on the ChangeOrder: the new head gets the RestoreTagID (a Tag
// <Slug>-restore of the ChangeOrder's Space, made by the first restore), the Space joins RestoredSpaceIDs
// and the State becomes Restored. The progress is written only when it changes, so a bulk restore of many
// Units of a Space makes one new Version of the ChangeOrder per Space.
func (Restores) Restored(ctx context.Context, sc authz.Scope, tx *store.Tx, changeOrderID, spaceID, headRevisionID uuid.UUID) error {
	co, err := changeorder.LockForPromote(ctx, sc, tx, changeOrderID)
	if err != nil {
		return err
	}
	prog := progressOf(co)
	changed := false
	if prog.RestoreTagID == nil {
		t, err := tag.CreateOwned(ctx, tx, sc, co.SpaceID, tag.SlugFor(co.Slug, "-restore"), tag.Owner{ChangeOrderID: &co.ID})
		if err != nil {
			return err
		}
		id := t.ID
		prog.RestoreTagID, changed = &id, true
	}
	if _, err := tag.PutOnRevisions(ctx, tx.Q, sc, *prog.RestoreTagID, []uuid.UUID{headRevisionID}); err != nil {
		return err
	}
	if !slices.Contains(prog.RestoredSpaceIDs, spaceID) {
		prog.RestoredSpaceIDs, changed = append(prog.RestoredSpaceIDs, spaceID), true
	}
	if prog.State != changeorder.Restored {
		prog.State, changed = changeorder.Restored, true
	}
	if !changed {
		return nil
	}
	_, err = changeorder.SetProgress(ctx, tx, sc.OrganizationID, co.ID, prog)
	return err
}
