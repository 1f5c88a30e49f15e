package unit

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/store"
)

// propagate follows a write that recorded new data of the Unit row up (doc: its path model), in the write's
// transaction, so a propagation is never lost: every Link reading the Unit with AutoUpdate writes into its
// From Unit (through commitData, so that Unit's own readers follow and chains propagate in order), and the
// other Links reading it become Stale. Links are applied ordered by From Unit, so concurrent propagations
// lock Units in one order; the Link graph has no cycles, so a propagation ends.
func (s *Service) propagate(ctx context.Context, sc authz.Scope, tx *store.Tx, up *db.Unit, doc *configdata.Document) error {
	links, err := tx.Q.LinksReadingUnit(ctx, db.LinksReadingUnitParams{OrganizationID: up.OrganizationID, UnitID: up.UnitID,
		HeadRevisionNum: up.HeadRevisionNum})
	if err != nil {
		return err
	}
	for i := range links {
		if _, _, err := s.applyLink(ctx, sc, tx, links[i], up, doc); err != nil {
			return err
		}
	}
	return nil
}

// ApplyLink writes what Link linkID (just created or changed in the transaction tx, by a writer who had to be
// able to edit its From Unit) reads from its To Unit into its From Unit, and answers the Link as it then
// stands (its merged Revisions).
func ApplyLink(ctx context.Context, deps entity.Deps, tx *store.Tx, sc authz.Scope, linkID uuid.UUID) (*db.Link, error) {
	l, err := tx.Q.LinkForApply(ctx, db.LinkForApplyParams{OrganizationID: sc.OrganizationID, LinkID: linkID})
	if err != nil || l.UpdateType == LinkNone {
		return l, err
	}
	up, err := tx.Q.UnitReadForLink(ctx, db.UnitReadForLinkParams{OrganizationID: l.OrganizationID, UnitID: l.ToUnitID})
	if err != nil {
		return nil, err
	}
	doc, err := projectionDocument(up.ToolchainType, up.HeadDoc)
	if err != nil {
		return nil, err
	}
	s := &Service{Store: deps.Store, Tokens: deps.Tokens, contents: newContentCache()}
	_, l, err = s.applyLink(ctx, sc, tx, l, up, doc)
	return l, err
}

// applyLink writes what Link l reads from its upstream (row up, path model upDoc) into its From Unit, which
// it locks: a NeedsProvides Link copies its paths, a MergeUnits or UpgradeUnit Link merges the whole data
// three ways from the upstream Revision it last merged. The write is a Revision whose Mutation names the
// Link (and the upstream as MergeSourceID); nothing is recorded when nothing changes. What the Link withheld
// (protected and guarded paths) becomes the From Unit's conflicts of this Link, replacing its earlier ones,
// and what it found its LinkFindings. The Link then records the Revisions it merged. The From Unit is read
// without the writer's view check: the Link carries the authority of whoever made it, who had to be able to
// edit the From Unit.
func (s *Service) applyLink(ctx context.Context, sc authz.Scope, tx *store.Tx, l *db.Link, up *db.Unit, upDoc *configdata.Document) (WriteResult, *db.Link, error) {
	r, err := tx.Q.UnitGetForDataWrite(ctx, db.UnitGetForDataWriteParams{OrganizationID: l.OrganizationID, SpaceID: l.SpaceID, UnitID: l.FromUnitID})
	if err != nil {
		return WriteResult{}, nil, err
	}
	row := &r.Unit
	wc := writeContext{spaceSlug: r.SpaceSlug, headSources: r.HeadSources, triggers: r.Triggers}
	spec, err := linkSpecOf(l)
	if err != nil {
		return WriteResult{}, nil, err
	}
	opts := WriteOptions{Clearance: spec.clearance}
	description := fmt.Sprintf("Link %s: Revision %d of its upstream", l.Slug, up.HeadRevisionNum)
	opts.Description = &description
	var res WriteResult
	var findings []LinkFinding // a merge has none: it moves the whole data
	if l.UpdateType == LinkNeedsProvides {
		res, findings, err = s.copyLinkPaths(ctx, sc, tx, row, wc, l, spec, up, upDoc, opts)
	} else {
		res, err = s.mergeLink(ctx, sc, tx, row, wc, l, up, upDoc, opts)
	}
	if err != nil {
		return WriteResult{}, nil, err
	}
	var revision *uuid.UUID
	if res.Unit.HeadRevisionNum != row.HeadRevisionNum {
		revision = res.Unit.HeadRevisionID
	}
	applied, err := tx.Q.LinkApplied(ctx, db.LinkAppliedParams{OrganizationID: l.OrganizationID, LinkID: l.LinkID,
		UpstreamRevisionNum: up.HeadRevisionNum, DownstreamRevisionNum: res.Unit.HeadRevisionNum,
		SetFindings: findings != nil, UnitID: row.UnitID, Findings: store.EncodeJSON(findings), RevisionID: revision})
	return res, applied, err
}

// mergeLink merges the To Unit's data into the locked From Unit row (a MergeUnits or UpgradeUnit Link): base
// is the upstream Revision the Link last merged.
func (s *Service) mergeLink(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, l *db.Link, up *db.Unit, upDoc *configdata.Document, opts WriteOptions) (WriteResult, error) {
	if row.ToolchainType != up.ToolchainType {
		return WriteResult{}, apierr.Validation(fmt.Sprintf("Link %s merges %s data into a %s Unit: a merge needs one ToolchainType", l.Slug, up.ToolchainType, row.ToolchainType),
			apierr.Item{Item: "ToUnitID", Description: "another ToolchainType"})
	}
	base, err := s.revisionDocument(ctx, tx, up, l.UpstreamLastMergedRevisionNum)
	if err != nil {
		return WriteResult{}, err
	}
	m := Merge{SourceID: up.UnitID, LinkID: &l.LinkID, Base: base, BaseNum: l.UpstreamLastMergedRevisionNum, Theirs: upDoc,
		EndNum: up.HeadRevisionNum, Subtract: l.MergeEnableSubtraction, Source: SourceLink}
	return s.mergeInto(ctx, sc, tx, row, wc, m, opts, false)
}

// copyLinkPaths writes the values of a NeedsProvides Link into the locked From Unit row, and answers what it
// found for each DownstreamPath.
func (s *Service) copyLinkPaths(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, l *db.Link, spec linkSpec,
	up *db.Unit, upDoc *configdata.Document, opts WriteOptions) (WriteResult, []LinkFinding, error) {
	data, err := s.contents.get(ctx, tx.Q, row.DataHash)
	if err != nil {
		return WriteResult{}, nil, err
	}
	tree, err := configdata.Open(row.ToolchainType, data)
	if err != nil {
		return WriteResult{}, nil, err
	}
	before, err := tree.Document()
	if err != nil {
		return WriteResult{}, nil, err
	}
	notes, err := store.DecodeJSON[annotations](row.PathAnnotations)
	if err != nil {
		return WriteResult{}, nil, err
	}
	findings, withheld, kept, err := writeLinkPaths(tree, before, upDoc, spec, notes)
	if err != nil {
		return WriteResult{}, nil, err
	}
	// The Link's conflicts replace those its earlier writes left (keyed by the upstream and the Link).
	found := make([]Conflict, len(withheld))
	for i, c := range withheld {
		c.UnitID, c.MergeSourceID, c.LinkID, c.MergeEndRevisionNum = row.UnitID, &up.UnitID, &l.LinkID, up.HeadRevisionNum
		found[i] = c
	}
	current, err := decodeConflicts(row.Conflicts)
	if err != nil {
		return WriteResult{}, nil, err
	}
	outstanding := replaceSourceConflicts(current, up.UnitID, &l.LinkID, found)

	guards, err := store.DecodeJSON[map[string]string](l.Guards)
	if err != nil {
		return WriteResult{}, nil, err
	}
	change := dataChange{source: SourceLink, link: &l.LinkID, opts: opts,
		merge: &mergeRecord{sourceID: &up.UnitID, baseNum: l.UpstreamLastMergedRevisionNum, endNum: up.HeadRevisionNum,
			unitConflicts: outstanding, revisionConflicts: found}}
	if len(guards) > 0 || l.Protect {
		for _, c := range kept {
			notes = notes.stamp(c.typ, c.name, c.path, guards, l.Protect)
		}
		change.annotations = notes
	}
	out, err := tree.Render()
	if err != nil {
		return WriteResult{}, nil, err
	}
	res, err := s.recordMerge(ctx, sc, tx, row, wc, out, change)
	if err != nil {
		return WriteResult{}, nil, err
	}
	return res, findings, nil
}

// linkSpecOf reads what applying a Link needs from its row.
func linkSpecOf(l *db.Link) (linkSpec, error) {
	spec := linkSpec{id: l.LinkID, slug: l.Slug}
	var err error
	if spec.up, err = store.DecodeJSON[[]configdata.NamedPath](l.UpstreamPaths); err != nil {
		return spec, err
	}
	if spec.down, err = store.DecodeJSON[[]configdata.PathExpression](l.DownstreamPaths); err != nil {
		return spec, err
	}
	spec.clearance, err = store.DecodeJSON[[]function.Requirement](l.Clearance)
	return spec, err
}
