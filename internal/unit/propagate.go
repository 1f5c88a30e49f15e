package unit

import (
	"context"
	"fmt"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
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
		if _, err := s.applyLink(ctx, sc, tx, links[i], up, doc); err != nil {
			return err
		}
	}
	return nil
}

// ApplyLink writes what a Link (just created or changed, in the transaction tx) reads from its To Unit into
// its From Unit. The Link's write checked that its writer may edit the From Unit.
func (s *Service) ApplyLink(ctx context.Context, sc authz.Scope, tx *store.Tx, l *db.Link) error {
	if l.UpdateType == LinkNone {
		return nil
	}
	up, err := tx.Q.UnitReadForLink(ctx, db.UnitReadForLinkParams{OrganizationID: l.OrganizationID, UnitID: l.ToUnitID})
	if err != nil {
		return err
	}
	doc, err := projectionDocument(up.ToolchainType, up.HeadDoc)
	if err != nil {
		return err
	}
	_, err = s.applyLink(ctx, sc, tx, l, up, doc)
	return err
}

// applyLink writes what Link l reads from its upstream (row up, path model upDoc) into its From Unit, which
// it locks, as a Revision whose Mutation names the Link; nothing is recorded when nothing changes. The Link
// then records the Revisions it merged. The From Unit is read without the writer's view check: the Link
// carries the authority of whoever made it, who had to be able to edit the From Unit.
func (s *Service) applyLink(ctx context.Context, sc authz.Scope, tx *store.Tx, l *db.Link, up *db.Unit, upDoc *configdata.Document) (WriteResult, error) {
	r, err := tx.Q.UnitGetForDataWrite(ctx, db.UnitGetForDataWriteParams{OrganizationID: l.OrganizationID, SpaceID: l.SpaceID, UnitID: l.FromUnitID})
	if err != nil {
		return WriteResult{}, err
	}
	row := &r.Unit
	wc := writeContext{spaceSlug: r.SpaceSlug, headSources: r.HeadSources, triggers: r.Triggers}
	if row.ToolchainType != up.ToolchainType && l.UpdateType != LinkNeedsProvides {
		return WriteResult{}, apierr.Validation(fmt.Sprintf("Link %s merges %s data into a %s Unit: a merge needs one ToolchainType", l.Slug, up.ToolchainType, row.ToolchainType),
			apierr.Item{Item: "ToUnitID", Description: "another ToolchainType"})
	}
	data, err := tx.Q.ConfigDataGet(ctx, row.DataHash) // in the transaction: an earlier Link may have just written it
	if err != nil {
		return WriteResult{}, err
	}
	tree, err := configdata.Open(row.ToolchainType, data)
	if err != nil {
		return WriteResult{}, err
	}
	before, err := tree.Document()
	if err != nil {
		return WriteResult{}, err
	}
	notes, err := store.DecodeJSON[annotations](row.PathAnnotations)
	if err != nil {
		return WriteResult{}, err
	}
	spec, err := linkSpecOf(l)
	if err != nil {
		return WriteResult{}, err
	}
	findings, conflicts, kept, err := writeLinkPaths(tree, before, upDoc, spec, notes)
	if err != nil {
		return WriteResult{}, err
	}
	guards, err := store.DecodeJSON[map[string]string](l.Guards)
	if err != nil {
		return WriteResult{}, err
	}
	notesChanged := false
	if len(guards) > 0 || l.Protect {
		for _, c := range kept {
			notes = notes.stamp(c.typ, c.name, c.path, guards, l.Protect)
			notesChanged = true
		}
	}
	out, err := tree.Render()
	if err != nil {
		return WriteResult{}, err
	}
	doc, err := configdata.Parse(row.ToolchainType, out)
	if err != nil {
		return WriteResult{}, dataError(err)
	}
	description := fmt.Sprintf("Link %s: values of Revision %d of its upstream", l.Slug, up.HeadRevisionNum)
	change := dataChange{source: SourceLink, link: &l.LinkID, conflicts: conflicts, findings: findings,
		opts: WriteOptions{Description: &description, Clearance: spec.clearance}}
	if notesChanged {
		change.annotations = notes
	}
	res, err := s.commitData(ctx, sc, tx, row, wc, out, doc, change)
	if err != nil {
		return WriteResult{}, err
	}
	return res, tx.Q.LinkMerged(ctx, db.LinkMergedParams{LinkID: l.LinkID, UpstreamRevisionNum: up.HeadRevisionNum,
		DownstreamRevisionNum: res.Unit.HeadRevisionNum})
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
