package unit

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// Approvals records the approvals of Revisions (Attestations of Type Approval, Result Approved).
type Approvals interface {
	// Approvers are the Users whose approvals of the Revision are in force.
	Approvers(ctx context.Context, q *db.Queries, orgID, revisionID uuid.UUID) ([]uuid.UUID, error)
	// Record records the caller's approval of the Revision in tx, in the Unit's Space.
	Record(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, revisionID uuid.UUID) error
}

// Approved is a Unit an approval went through: the Revision approved, and whether this approval recorded
// it (false when the caller had already approved that Revision).
type Approved struct {
	Unit
	RevisionNum int64
	RevisionID  uuid.UUID
	Recorded    bool
}

// Approve records the caller's approval of the Revision rev selects of one Unit (an Attestation of Type
// Approval, Result Approved, in the Unit's Space), in one transaction (rolled back with dryRun).
func (s *Service) Approve(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, rev RevisionSelector, dryRun bool) (Approved, error) {
	var out Approved
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var err error
		out, err = s.approveOne(ctx, sc, tx, spaceID, unitID, rev)
		return err
	})
	return out, err
}

// BulkApprove approves the Revision rev selects of every selected Unit, each in its own savepoint: a Unit
// refused (its author is the caller, no such Revision, no permission) fails alone.
func (s *Service) BulkApprove(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, rev RevisionSelector, dryRun bool) ([]entity.BulkItem[Approved], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Approved, error) {
		return s.approveOne(ctx, sc, tx, ref.SpaceID, ref.ID, rev)
	})
}

// approveOne approves one Unit's selected Revision in tx. The Unit is locked, so approvals of it (and
// writes moving its head) serialize: a second approval by the same User sees the first and records nothing.
// The caller must view the Unit (else 404) and hold CreateChildren in its Space (what recording any
// Attestation needs: a member or stronger, or a grant); the Revision's author may not approve it.
func (s *Service) approveOne(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID, rev RevisionSelector) (Approved, error) {
	row, err := loadRow(ctx, sc, tx, spaceID, unitID, true)
	if err != nil {
		return Approved{}, err
	}
	u, err := fromRow(row)
	if err != nil {
		return Approved{}, err
	}
	p, err := space.Of(ctx, sc, tx.Q, u.SpaceID)
	if err != nil {
		return Approved{Unit: u}, err
	}
	if err := authz.Check(sc, authz.CreateChildren, p.Target); err != nil {
		return Approved{Unit: u}, err
	}
	r, err := rev.resolve(ctx, sc, tx, u)
	if err != nil {
		return Approved{Unit: u}, err
	}
	out := Approved{Unit: u, RevisionNum: r.RevisionNum, RevisionID: r.RevisionID}
	if r.UserID == sc.UserID {
		return out, apierr.Forbidden("an author cannot approve their own change: Revision %d of Unit %s was written by you; ask another member to approve it",
			r.RevisionNum, u.Slug)
	}
	approvers, err := s.Approvals.Approvers(ctx, tx.Q, sc.OrganizationID, r.RevisionID)
	if err != nil {
		return out, err
	}
	if !slices.Contains(approvers, sc.UserID) {
		if err := s.Approvals.Record(ctx, sc, tx, u.SpaceID, r.RevisionID); err != nil {
			return out, err
		}
		out.Recorded = true
	}
	items := []Unit{out.Unit}
	if err := enrichLinks(ctx, tx.Q, items); err != nil {
		return out, err
	}
	out.Unit = items[0]
	return out, nil
}
