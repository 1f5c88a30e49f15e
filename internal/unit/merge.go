package unit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// Revision sources of merges.
const (
	SourceUpgrade       = "Upgrade"
	SourceConflictApply = "ConflictApply"
)

func decodeConflicts(raw json.RawMessage) ([]Conflict, error) {
	out := []Conflict{}
	if len(raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decoding conflicts: %w", err)
	}
	if out == nil {
		out = []Conflict{}
	}
	return out, nil
}

// Merge is one merge into a Unit from an upstream: what mergeInto needs besides the locked Unit.
type Merge struct {
	// SourceID is the upstream Unit; LinkID the Link the merge follows (nil for an upgrade of a clone).
	// Together they key the Unit's outstanding conflicts: this merge's replace those of the same source.
	SourceID uuid.UUID
	LinkID   *uuid.UUID
	// Base is the upstream data last merged (nil: a first merge), Revision BaseNum of the upstream; Theirs
	// the upstream's data now, Revision EndNum.
	Base    *configdata.Document
	BaseNum int64
	Theirs  *configdata.Document
	EndNum  int64
	// Subtract deletes what upstream deleted where the Unit holds it unchanged.
	Subtract bool
	// Source is the Revision's Source (SourceUpgrade).
	Source string
	// SetUpstreamRevisionNum makes EndNum the Unit's UpstreamRevisionNum (upgrades of clones).
	SetUpstreamRevisionNum bool
}

// mergeInto merges m into the locked Unit row (wc its write context) and records it: the merged data as
// one new Revision through commitData (Triggers and guards as for any data write; its Mutation records
// MergeSourceID, MergeBaseRevisionNum, MergeEndRevisionNum and LinkID, the Revision the conflicts), or,
// when the data does not change, only the Unit's conflicts (and UpstreamRevisionNum). Protected paths are
// never overwritten (ProtectedPath) and guarded paths opts.Clearance does not clear are withheld (Guarded):
// a merge reports them as conflicts, it is not refused. fieldsWritten: the same write changed the Unit's
// fields in tx (its Version is bumped and its event left to this write).
func (s *Service) mergeInto(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, m Merge, opts WriteOptions, fieldsWritten bool) (WriteResult, error) {
	data, err := s.contents.get(ctx, tx.Q, row.DataHash)
	if err != nil {
		return WriteResult{}, err
	}
	tree, err := configdata.Open(row.ToolchainType, data)
	if err != nil {
		return WriteResult{}, dataError(err)
	}
	notes, err := store.DecodeJSON[annotations](row.PathAnnotations)
	if err != nil {
		return WriteResult{}, err
	}
	res, err := configdata.Merge(m.Base, m.Theirs, tree, configdata.MergeOptions{Subtract: m.Subtract,
		Withhold: func(typ, name, path string) (string, map[string]string) {
			return notes.withholds(resourceKey(typ, name), path, opts.Clearance)
		}})
	if err != nil {
		return WriteResult{}, err
	}
	found := make([]Conflict, len(res.Conflicts))
	for i, c := range res.Conflicts {
		id := m.SourceID
		found[i] = Conflict{UnitID: row.UnitID, ResourceType: c.ResourceType, ResourceName: c.ResourceName, Path: c.Path,
			Reason: c.Reason, Details: c.Details, Guards: c.Guards, MergeSourceID: &id, LinkID: m.LinkID, MergeEndRevisionNum: m.EndNum,
			BaseValue: jsonText(c.Base), UpstreamValue: jsonText(c.Theirs), LocalValue: jsonText(c.Ours)}
	}
	current, err := decodeConflicts(row.Conflicts)
	if err != nil {
		return WriteResult{}, err
	}
	outstanding := replaceSourceConflicts(current, m.SourceID, m.LinkID, found)
	var upstreamNum *int64
	if m.SetUpstreamRevisionNum {
		upstreamNum = &m.EndNum
	}
	out, err := tree.Render()
	if err != nil {
		if ee, ok := err.(*configdata.EditError); ok {
			return WriteResult{}, apierr.Unprocessable("the merged data cannot be written as %s: %s", row.ToolchainType, ee.Msg)
		}
		return WriteResult{}, err
	}
	if opts.Description == nil {
		d := fmt.Sprintf("Merged Revisions %d to %d of the upstream", m.BaseNum, m.EndNum)
		opts.Description = &d
	}
	id := m.SourceID
	return s.recordMerge(ctx, sc, tx, row, wc, out, dataChange{source: m.Source, opts: opts, fieldsWritten: fieldsWritten, link: m.LinkID,
		merge: &mergeRecord{sourceID: &id, baseNum: m.BaseNum, endNum: m.EndNum, upstreamNum: upstreamNum, unitConflicts: outstanding, revisionConflicts: found}})
}

// recordMerge records out, the data a merge (an upgrade, a Link's write) left for the locked Unit row: as a
// Revision through commitData (change carries the merge's record), or, when the data did not change, only
// the Unit's outstanding conflicts (and UpstreamRevisionNum). The answer carries the conflicts the merge found.
func (s *Service) recordMerge(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, out []byte, change dataChange) (WriteResult, error) {
	m := change.merge
	if configdata.Hash(out) == row.DataHash {
		// No Data: the caller reads the data and sources include asks for, as after a write of fields.
		u, err := s.setConflicts(ctx, sc, tx, row, wc, m.unitConflicts, m.upstreamNum, change.fieldsWritten)
		return WriteResult{Unit: u, Conflicts: m.revisionConflicts}, err
	}
	doc, err := configdata.Parse(row.ToolchainType, out)
	if err != nil {
		return WriteResult{}, apierr.Unprocessable("the merged data is not valid %s: %s", row.ToolchainType, err.Error())
	}
	written, err := s.commitData(ctx, sc, tx, row, wc, out, doc, change)
	written.Conflicts = m.revisionConflicts
	return written, err
}

// mergeRecord is what a merge's Revision records besides its data.
type mergeRecord struct {
	sourceID          *uuid.UUID
	baseNum, endNum   int64
	upstreamNum       *int64
	unitConflicts     []Conflict // the Unit's outstanding conflicts after the write
	revisionConflicts []Conflict // those the merge found
}

// replaceSourceConflicts is a Unit's outstanding conflicts (current) after a merge from source along
// link (nil: an upgrade of a clone) found found: those of other sources stay, the source's own are
// replaced. Conflicts are keyed by their source so: MergeSourceID and LinkID.
func replaceSourceConflicts(current []Conflict, source uuid.UUID, link *uuid.UUID, found []Conflict) []Conflict {
	out := []Conflict{}
	for _, c := range current {
		if !sameSource(c, source, link) {
			out = append(out, c)
		}
	}
	return append(out, found...)
}

func sameSource(c Conflict, source uuid.UUID, link *uuid.UUID) bool {
	if c.MergeSourceID == nil || *c.MergeSourceID != source {
		return false
	}
	return (c.LinkID == nil) == (link == nil) && (link == nil || *c.LinkID == *link)
}

func jsonText(raw json.RawMessage) *string {
	if raw == nil {
		return nil
	}
	s := string(raw)
	return &s
}

// setConflicts stores the Unit's outstanding conflicts (and UpstreamRevisionNum when given) without new
// data; nothing when neither changes, unless the write changed the Unit's fields (whose event it emits).
func (s *Service) setConflicts(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, conflicts []Conflict, upstreamNum *int64, fieldsWritten bool) (Unit, error) {
	encoded := store.EncodeJSON(conflicts)
	same := jsonEqual(encoded, row.Conflicts) && (upstreamNum == nil || *upstreamNum == row.UpstreamRevisionNum)
	if same && !fieldsWritten {
		return fromRow(row)
	}
	updated, err := tx.Q.UnitSetConflicts(ctx, db.UnitSetConflictsParams{Conflicts: encoded, UpstreamRevisionNum: upstreamNum,
		BumpVersion: !fieldsWritten, OrganizationID: sc.OrganizationID, UnitID: row.UnitID})
	if err != nil {
		return Unit{}, err
	}
	u, err := fromRow(updated)
	if err != nil {
		return u, err
	}
	tx.Emit(u.changeEvent(entity.Updated, wc.spaceSlug))
	return u, nil
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return encode(x) == encode(y)
}

// UpgradeOptions are an upgrade's: Subtract is merge_enable_subtraction.
type UpgradeOptions struct {
	Subtract bool
}

// upgradeData upgrades the locked Unit row from its upstreams: a clone from the Unit it was cloned from
// (upgradeClone), then each Link that writes into it, AutoUpdate or not, from its To Unit's head (each its
// own Revision, when it changes something). A Unit that is neither a clone nor written by a Link has nothing
// to upgrade from.
func (s *Service) upgradeData(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, opts WriteOptions, up UpgradeOptions, fieldsWritten bool) (WriteResult, error) {
	links, err := tx.Q.LinksFromUnit(ctx, db.LinksFromUnitParams{OrganizationID: row.OrganizationID, UnitID: row.UnitID})
	if err != nil {
		return WriteResult{}, err
	}
	clone := row.UpstreamUnitID != nil && row.UpstreamSpaceID != nil
	if !clone && len(links) == 0 {
		return WriteResult{}, apierr.Validation("the Unit is not a clone (it has no UpstreamUnitID) and no Link writes into it: there is nothing to upgrade it from",
			apierr.Item{Item: "upgrade", Description: "no upstream"})
	}
	res := WriteResult{Conflicts: []Conflict{}}
	if clone {
		if res, err = s.upgradeClone(ctx, sc, tx, row, wc, opts, up, fieldsWritten); err != nil {
			return WriteResult{}, err
		}
	} else {
		// No merge of its own: a field change the same write made still gets its event (setConflicts).
		current, err := decodeConflicts(row.Conflicts)
		if err != nil {
			return WriteResult{}, err
		}
		if res.Unit, err = s.setConflicts(ctx, sc, tx, row, wc, current, nil, fieldsWritten); err != nil {
			return WriteResult{}, err
		}
	}
	found := res.Conflicts
	for _, l := range links {
		upRow, err := tx.Q.UnitReadForLink(ctx, db.UnitReadForLinkParams{OrganizationID: l.OrganizationID, UnitID: l.ToUnitID})
		if err != nil {
			return WriteResult{}, err
		}
		upDoc, err := projectionDocument(upRow.ToolchainType, upRow.HeadDoc)
		if err != nil {
			return WriteResult{}, err
		}
		if res, _, err = s.applyLink(ctx, sc, tx, l, upRow, upDoc); err != nil {
			return WriteResult{}, err
		}
		found = append(found, res.Conflicts...)
	}
	res.Conflicts = found
	return res, nil
}

// upgradeClone merges into the locked clone row what changed in the Unit it was cloned from: base = the
// upstream's Revision the clone last merged (UpstreamRevisionNum), theirs = the upstream's head, ours = the
// clone's head (mergeInto). The caller must be able to view the upstream.
func (s *Service) upgradeClone(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, opts WriteOptions, up UpgradeOptions, fieldsWritten bool) (WriteResult, error) {
	upRow, err := loadRow(ctx, sc, tx, *row.UpstreamSpaceID, *row.UpstreamUnitID, false)
	if err == nil {
		var upUnit Unit
		if upUnit, err = fromRow(upRow); err == nil {
			err = authz.Check(sc, authz.View, upUnit.Target())
		}
	}
	if apierr.Is(err, apierr.TypeNotFound) || apierr.Is(err, apierr.TypePermission) {
		return WriteResult{}, apierr.Validation("the Unit's upstream Unit does not exist or you may not view it: it cannot be upgraded",
			apierr.Item{Item: "upgrade", Description: "no upstream"})
	}
	if err != nil {
		return WriteResult{}, err
	}
	if upRow.ToolchainType != row.ToolchainType {
		return WriteResult{}, apierr.Validation("the Unit's upstream Unit holds "+upRow.ToolchainType+" data, not "+row.ToolchainType,
			apierr.Item{Item: "upgrade", Description: "other ToolchainType"})
	}
	m := Merge{SourceID: upRow.UnitID, BaseNum: row.UpstreamRevisionNum, EndNum: upRow.HeadRevisionNum, Subtract: up.Subtract,
		Source: SourceUpgrade, SetUpstreamRevisionNum: true}
	if m.Base, err = s.revisionDocument(ctx, tx, upRow, row.UpstreamRevisionNum); err != nil {
		return WriteResult{}, err
	}
	// The upstream was read through its listing, which leaves head_doc out: parse its head data.
	theirs, err := s.contents.get(ctx, tx.Q, upRow.DataHash)
	if err != nil {
		return WriteResult{}, err
	}
	if m.Theirs, err = configdata.Parse(upRow.ToolchainType, theirs); err != nil {
		return WriteResult{}, dataError(err)
	}
	return s.mergeInto(ctx, sc, tx, row, wc, m, opts, fieldsWritten)
}

// revisionDocument is the path model of Revision num of a Unit; nil when it has none (num 0, or gone).
func (s *Service) revisionDocument(ctx context.Context, tx *store.Tx, row *db.Unit, num int64) (*configdata.Document, error) {
	if num == 0 {
		return nil, nil
	}
	rev, err := tx.Q.RevisionGetByNum(ctx, db.RevisionGetByNumParams{OrganizationID: row.OrganizationID, UnitID: row.UnitID, RevisionNum: num})
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := s.contents.get(ctx, tx.Q, rev.DataHash)
	if err != nil {
		return nil, err
	}
	doc, err := configdata.Parse(row.ToolchainType, data)
	if err != nil {
		return nil, dataError(err)
	}
	return doc, nil
}

// Upgrade upgrades one Unit from its upstream (PATCH or PUT with upgrade=true; fields, when given, are
// the write's field change, applied first in the same transaction).
func (s *Service) Upgrade(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, fields func(*store.Tx) error, opts WriteOptions, up UpgradeOptions) (WriteResult, error) {
	var out WriteResult
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		var err error
		out, err = s.upgradeIn(ctx, sc, tx, spaceID, unitID, fields, opts, up)
		return err
	})
	if err != nil {
		return out, err
	}
	out.Unit, err = s.WithLinks(ctx, out.Unit)
	return out, err
}

func (s *Service) upgradeIn(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID, fields func(*store.Tx) error, opts WriteOptions, up UpgradeOptions) (WriteResult, error) {
	if fields != nil {
		if err := fields(tx); err != nil {
			return WriteResult{}, err
		}
	}
	row, _, wc, err := lockForEdit(ctx, sc, tx, spaceID, unitID)
	if err != nil {
		return WriteResult{}, err
	}
	return s.upgradeData(ctx, sc, tx, row, wc, opts, up, fields != nil)
}

// BulkUpgrade applies one merge patch to every selected Unit and upgrades it, each in its own savepoint.
func (s *Service) BulkUpgrade(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, opts WriteOptions, up UpgradeOptions) ([]entity.BulkItem[Unit], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, opts.DryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (Unit, error) {
		var fields func(*store.Tx) error
		if len(patch) > 0 && string(patch) != "{}" && string(patch) != "null" {
			fields = func(tx *store.Tx) error {
				_, err := s.kit.PatchIn(ctx, sc, tx, ref.SpaceID, ref.ID.String(), patch)
				return err
			}
		}
		res, err := s.upgradeIn(ctx, sc, tx, ref.SpaceID, ref.ID, fields, opts, up)
		return res.Unit, err
	})
}
