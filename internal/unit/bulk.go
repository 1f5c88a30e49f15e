package unit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
)

// selector picks the Units of a bulk operation through the list path, in its transaction.
func (s *Service) selector(sc authz.Scope, path string, sel listquery.Params) entity.Selector {
	return s.selectorIn(sc, nil, path, sel, DataFilter{})
}

// selectorIn is selector restricted to one Space (when spaceID is set) and by a data filter.
func (s *Service) selectorIn(sc authz.Scope, spaceID *uuid.UUID, path string, sel listquery.Params, df DataFilter) entity.Selector {
	return func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		limit := entity.MaxBulk
		sel.Limit = &limit
		q, err := listQuery(ctx, tx.Q, sc, spaceID, path, sel, df)
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
		refs := make([]entity.Ref, len(page.Items))
		for i, r := range page.Items {
			refs[i] = entity.Ref{ID: r.UnitID, SpaceID: r.SpaceID, Slug: r.Slug}
		}
		return refs, nil
	}
}

// BulkPatch applies one merge patch to every selected Unit, each in its own savepoint.
func (s *Service) BulkPatch(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, dryRun bool) ([]entity.BulkItem[Unit], error) {
	return s.kit.BulkPatch(ctx, sc, path, sel, patch, dryRun)
}

// BulkDelete deletes every selected Unit.
func (s *Service) BulkDelete(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, dryRun bool) ([]entity.BulkItem[Unit], error) {
	return s.kit.BulkDelete(ctx, sc, path, sel, dryRun)
}

// Tagged is a Unit a bulk tag went through and the number of the Revision it tagged (0 when it removed).
type Tagged struct {
	Unit
	RevisionNum int64
}

// BulkTag puts a Tag on the Revision rev selects of every selected Unit, or (remove) takes it off their
// Revisions.
func (s *Service) BulkTag(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, tagID uuid.UUID, rev RevisionSelector, remove bool, dryRun bool) ([]entity.BulkItem[Tagged], error) {
	selectRefs := s.selector(sc, path, sel)
	// The Tag is read (and share-locked) in the operation's transaction, before the Units are selected.
	withTag := func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		if _, err := tag.LookupForShare(ctx, sc, tx.Q, tagID); err != nil {
			return nil, err
		}
		return selectRefs(ctx, tx)
	}
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, withTag, func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Tagged, error) {
		row, err := loadRow(ctx, sc, tx, ref.SpaceID, ref.ID, true)
		if err != nil {
			return Tagged{}, err
		}
		u, err := fromRow(row)
		if err != nil {
			return Tagged{Unit: u}, err
		}
		if err := authz.Check(sc, authz.Edit, u.Target()); err != nil {
			return Tagged{Unit: u}, err
		}
		if remove {
			_, err := tx.Q.RevisionRemoveTagFromUnit(ctx, db.RevisionRemoveTagFromUnitParams{OrganizationID: sc.OrganizationID, UnitID: u.ID, TagID: tagID.String()})
			return Tagged{Unit: u}, err
		}
		r, err := rev.resolve(ctx, sc, tx, u)
		if err != nil {
			return Tagged{Unit: u}, err
		}
		return Tagged{Unit: u, RevisionNum: r.RevisionNum}, tx.Q.TagPutOnRevisions(ctx, db.TagPutOnRevisionsParams{OrganizationID: sc.OrganizationID,
			RevisionIDs: []uuid.UUID{r.RevisionID}, TagID: tagID.String(), TaggedAt: time.Now().UTC().Format(time.RFC3339Nano)})
	})
}

// Move moves every selected Unit (with its history) to another Space of the organization. A moved Unit
// loses its TargetID: Targets belong to a Space. A Unit in a ChangeSet whose InScopeSpaceIDs leave out the
// destination is refused (400 naming ChangeSetID).
func (s *Service) Move(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, toSpaceID uuid.UUID, dryRun bool) ([]entity.BulkItem[Unit], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Unit, error) {
		to, st, err := space.VisibleParent(ctx, sc, tx.Q, toSpaceID)
		if apierr.Is(err, apierr.TypeNotFound) {
			return Unit{}, apierr.NoSuchReference(space.EntityType, "of your organization", "ToSpaceID")
		}
		if err != nil {
			return Unit{}, err
		}
		if err := authz.Check(sc, authz.CreateChildren, st); err != nil {
			return Unit{}, err
		}
		row, err := loadRow(ctx, sc, tx, ref.SpaceID, ref.ID, true)
		if err != nil {
			return Unit{}, err
		}
		cur, err := fromRow(row)
		if err != nil {
			return cur, err
		}
		if err := authz.Check(sc, authz.Delete, cur.Target()); err != nil {
			return cur, err
		}
		if cur.SpaceID == toSpaceID {
			return cur, nil
		}
		// A Unit in a ChangeSet stays in it: the destination must be a Space the ChangeSet takes Units of.
		if err := checkChangeSet(ctx, tx.Q, sc, toSpaceID, "ChangeSetID", cur.ChangeSetID); err != nil {
			return cur, err
		}
		moved, err := tx.Q.UnitMove(ctx, db.UnitMoveParams{OrganizationID: sc.OrganizationID, UnitID: cur.ID, ToSpaceID: toSpaceID})
		if err != nil {
			return cur, entity.SlugClash(err, EntityType, cur.Slug)
		}
		if err := tx.Q.RevisionMoveUnit(ctx, db.RevisionMoveUnitParams{UnitID: cur.ID, ToSpaceID: toSpaceID}); err != nil {
			return cur, err
		}
		if err := tx.Q.MutationMoveUnit(ctx, db.MutationMoveUnitParams{UnitID: cur.ID, ToSpaceID: toSpaceID}); err != nil {
			return cur, err
		}
		if err := tx.Q.QueuedOperationMoveUnit(ctx, db.QueuedOperationMoveUnitParams{OrganizationID: sc.OrganizationID, UnitID: cur.ID, ToSpaceID: toSpaceID}); err != nil {
			return cur, err
		}
		if err := tx.Q.UnitEventMoveUnit(ctx, db.UnitEventMoveUnitParams{OrganizationID: sc.OrganizationID, UnitID: cur.ID, ToSpaceID: toSpaceID}); err != nil {
			return cur, err
		}
		if err := tx.Q.ReviewCommentMoveUnit(ctx, db.ReviewCommentMoveUnitParams{OrganizationID: sc.OrganizationID, UnitID: cur.ID, ToSpaceID: toSpaceID}); err != nil {
			return cur, err
		}
		u, err := fromRow(moved)
		if err != nil {
			return u, err
		}
		if Links != nil {
			if u.MovedLinkSlugs, err = Links.MoveWithUnit(ctx, tx, sc, u, entity.SpaceRef{ID: to.SpaceID, Slug: to.Slug}); err != nil {
				return u, err
			}
		}
		tx.Emit(u.changeEvent(entity.Updated, to.Slug))
		return u, nil
	})
}

// CloneOptions are the parameters of a clone: the kit's, and the User-Agent its Revisions record.
type CloneOptions struct {
	entity.CloneOptions
	UserAgent string
}

// Clone copies every selected Unit (fields and head data, server-side) into the destination Spaces,
// applying patch to each clone. A clone records its upstream: UpstreamUnitID, UpstreamSpaceID and
// UpstreamRevisionNum (the source's head Revision), and its data becomes its Revision 1.
func (s *Service) Clone(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, opts CloneOptions) ([]entity.BulkItem[Unit], error) {
	return entity.RunCopies(ctx, s.Store, EntityType, s.selector(sc, path, sel), opts.CloneOptions, func(ctx context.Context, tx *store.Tx, ref entity.Ref, spaceID uuid.UUID, prefix string) (Unit, error) {
		return s.cloneOne(ctx, sc, tx, ref, spaceID, prefix, patch, opts)
	})
}

// cloneOne makes one clone of the Unit ref in spaceID.
func (s *Service) cloneOne(ctx context.Context, sc authz.Scope, tx *store.Tx, ref entity.Ref, spaceID uuid.UUID, prefix string, patch json.RawMessage, opts CloneOptions) (Unit, error) {
	srcRow, err := loadRow(ctx, sc, tx, ref.SpaceID, ref.ID, false)
	if err != nil {
		return Unit{}, err
	}
	src, err := fromRow(srcRow)
	if err != nil {
		return src, err
	}
	if err := authz.Check(sc, authz.View, src.Target()); err != nil {
		return src, err
	}
	dest, st, err := space.VisibleParent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return src, err
	}
	if err := authz.Check(sc, authz.CreateChildren, st); err != nil {
		return src, err
	}
	f, err := cloneFields(src, prefix, patch)
	if err != nil {
		return src, err
	}
	f = f.normalized()
	if err := f.validate(); err != nil {
		return src, err
	}
	// Permissions the patch sets are a grant made in the destination Space: Manage there, as Create asks.
	if !f.Permissions.Equal(src.Permissions) {
		if err := authz.Check(sc, authz.Manage, st); err != nil {
			return src, err
		}
		if err := s.kit.Grantees.Check(ctx, sc, tx.Q, "Permissions", src.Permissions, f.Permissions); err != nil {
			return src, err
		}
	}
	existing, err := listquery.Get[db.Unit](ctx, tx, ListEntity, sc.OrganizationID,
		[]listquery.Condition{{Column: "unit.space_id", Value: spaceID}}, "Slug", f.Slug, false)
	switch {
	case err == nil && opts.AllowExists:
		return fromRow(existing)
	case err == nil:
		return src, apierr.AlreadyExists(EntityType, f.Slug).WithEntity(EntityType, "", f.Slug)
	case !apierr.Is(err, apierr.TypeNotFound):
		return src, err
	}
	// A TargetID the patch sets names a Target of the destination Space with the clone's ToolchainType.
	if err := checkTarget(ctx, sc, tx.Q, spaceID, f); err != nil {
		return src, err
	}
	// So may a ChangeSetID (the source's is not copied).
	if err := checkChangeSet(ctx, tx.Q, sc, spaceID, "ChangeSetID", f.ChangeSetID); err != nil {
		return src, err
	}
	upstreamUnit, upstreamSpace := src.ID, src.SpaceID
	row, err := tx.Q.UnitInsert(ctx, db.UnitInsertParams{
		UnitID: uuid.New(), OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), DestroyGates: store.EncodeJSON(f.DestroyGates),
		Permissions: store.EncodeJSON(f.Permissions), ToolchainType: f.ToolchainType, ProviderType: f.ProviderType,
		TargetID: f.TargetID, ChangeSetID: f.ChangeSetID, LastChangeDescription: f.LastChangeDescription, DataHash: configdata.Hash(nil), HeadDoc: []byte("[]"),
		UpstreamUnitID: &upstreamUnit, UpstreamSpaceID: &upstreamSpace, UpstreamRevisionNum: src.HeadRevisionNum,
	})
	if err != nil {
		return src, entity.SlugClash(err, EntityType, f.Slug)
	}
	clone, err := fromRow(row)
	if err != nil {
		return clone, err
	}
	tx.Emit(clone.changeEvent(entity.Created, dest.Slug))
	if src.HeadRevisionNum == 0 {
		return clone, nil
	}
	data, err := tx.Q.ConfigDataGet(ctx, src.DataHash)
	if err != nil {
		return clone, err
	}
	doc, err := configdata.Parse(src.ToolchainType, data)
	if err != nil {
		return clone, dataError(err)
	}
	wc, err := readWriteContext(ctx, tx.Q, row)
	if err != nil {
		return clone, err
	}
	description := fmt.Sprintf("Cloned from %s (Revision %d)", src.Slug, src.HeadRevisionNum)
	res, err := s.commitData(ctx, sc, tx, row, wc, data, doc, dataChange{source: SourceClone, always: true,
		opts: WriteOptions{Description: &description, UserAgent: opts.UserAgent}})
	return res.Unit, err
}

// cloneFields are a clone's fields: the source's, without its Target (Targets belong to a Space), with
// the prefixed Slug and the patch applied (which may name a Target of the destination Space).
func cloneFields(src Unit, prefix string, patch json.RawMessage) (Fields, error) {
	f := src.Fields
	f.Slug = prefix + src.Slug
	f.TargetID = nil
	f.ChangeSetID = nil
	if len(patch) == 0 || string(patch) == "null" {
		return f, nil
	}
	merged, err := entity.MergePatch(f, patch)
	if err != nil {
		return f, err
	}
	var out Fields
	if err := json.Unmarshal(merged, &out); err != nil {
		return f, apierr.UserInput("the patched clone is not valid: " + err.Error())
	}
	if out.ToolchainType != src.ToolchainType {
		return f, apierr.Validation("a clone keeps its upstream's ToolchainType", apierr.Item{Item: "ToolchainType", Description: "cannot change"})
	}
	return out, nil
}
