package unit

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// The operations a promotion (internal/promote) runs on Units, each in the promotion's transaction.

// SelectIn returns the Units of a Space the caller may view that sel picks (at most entity.MaxBulk), in
// tx, ordered by Slug.
func (s *Service) SelectIn(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, sel listquery.Params) ([]Unit, error) {
	limit := entity.MaxBulk
	sel.Limit = &limit
	sel.OrderBy = "Slug"
	q, err := listQuery(ctx, tx.Q, sc, &spaceID, "unit", sel, DataFilter{})
	if err != nil {
		return nil, err
	}
	page, err := listquery.Run[db.Unit](ctx, tx, s.Tokens, q)
	if err != nil {
		return nil, err
	}
	if page.Continue != "" {
		return nil, entity.TooManySelected(EntityType)
	}
	out := make([]Unit, len(page.Items))
	for i := range page.Items {
		if out[i], err = fromRow(&page.Items[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpgradeFromUpstream upgrades the clone (spaceID, unitID) from the Unit it was cloned from, as PATCH with
// upgrade=true does: one Revision with description when something changes. Needs Edit on the Unit.
func (s *Service) UpgradeFromUpstream(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID, description string) (WriteResult, error) {
	row, _, wc, err := lockForEdit(ctx, sc, tx, spaceID, unitID)
	if err != nil {
		return WriteResult{}, err
	}
	return s.upgradeClone(ctx, sc, tx, row, wc, WriteOptions{Description: &description}, UpgradeOptions{}, false)
}

// CloneInto clones the Unit upstream into the Space toSpaceID under the same Slug, as POST /unit does with
// a destination Space (CreateChildren there, View on the source).
func (s *Service) CloneInto(ctx context.Context, sc authz.Scope, tx *store.Tx, upstream entity.Ref, toSpaceID uuid.UUID) (Unit, error) {
	return s.cloneOne(ctx, sc, tx, upstream, toSpaceID, "", nil, CloneOptions{})
}

// InvokeOn runs req's invocations on one Unit, as function invoke does for each Unit it selects.
func (s *Service) InvokeOn(ctx context.Context, sc authz.Scope, tx *store.Tx, ref entity.Ref, req InvokeRequest) (InvokeResult, error) {
	b, err := bind(req)
	if err != nil {
		return InvokeResult{}, err
	}
	return s.invokeOne(ctx, sc, tx, ref, b, req)
}

// CarryingTag returns which of the Units have a Revision carrying the Tag.
func CarryingTag(ctx context.Context, q *db.Queries, orgID, tagID uuid.UUID, unitIDs []uuid.UUID) (map[uuid.UUID]bool, error) {
	ids, err := q.PromoteUnitsCarryingTag(ctx, db.PromoteUnitsCarryingTagParams{OrganizationID: orgID, UnitIds: unitIDs, TagID: tagID.String()})
	return setOf(ids), err
}

// RecordedInChangeSet returns which of the Units recorded a Revision in the ChangeSet.
func RecordedInChangeSet(ctx context.Context, q *db.Queries, orgID, changeSetID uuid.UUID, unitIDs []uuid.UUID) (map[uuid.UUID]bool, error) {
	ids, err := q.PromoteUnitsWithChangeSet(ctx, db.PromoteUnitsWithChangeSetParams{OrganizationID: orgID, UnitIds: unitIDs, ChangeSetID: &changeSetID})
	return setOf(ids), err
}

// LatestApplies returns the Status of each Unit's latest (not dry-run) Apply; Units never applied are absent.
func LatestApplies(ctx context.Context, q *db.Queries, orgID uuid.UUID, unitIDs []uuid.UUID) (map[uuid.UUID]string, error) {
	rows, err := q.PromoteLatestApplies(ctx, db.PromoteLatestAppliesParams{OrganizationID: orgID, UnitIds: unitIDs})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]string, len(rows))
	for _, r := range rows {
		out[r.UnitID] = r.Status
	}
	return out, nil
}

// HeadRevisions returns the head Revisions of the Units (those that have one), by Unit.
func HeadRevisions(ctx context.Context, q *db.Queries, orgID uuid.UUID, units []Unit) (map[uuid.UUID]Revision, error) {
	return revisionsAt(ctx, q, orgID, units, func(u Unit) int64 { return u.HeadRevisionNum })
}

func setOf(ids []uuid.UUID) map[uuid.UUID]bool {
	out := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// UnitsByIDIn loads Units the caller may view, by ID, in tx.
func (s *Service) UnitsByIDIn(ctx context.Context, sc authz.Scope, tx *store.Tx, ids []uuid.UUID) (map[uuid.UUID]Unit, error) {
	return Family.Visible(ctx, tx, sc, ids)
}
