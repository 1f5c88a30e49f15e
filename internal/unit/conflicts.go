package unit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/store"
)

// Conflict actions.
const (
	ConflictsApply   = "Apply"
	ConflictsDismiss = "Dismiss"
)

// ConflictSelector picks outstanding conflicts: each field that is set must match.
type ConflictSelector struct {
	Path, Reason, ResourceName *string
}

func (sel ConflictSelector) matches(c Conflict) bool {
	return (sel.Path == nil || *sel.Path == c.Path) && (sel.Reason == nil || *sel.Reason == c.Reason) &&
		(sel.ResourceName == nil || *sel.ResourceName == c.ResourceName)
}

// ConflictsResult is what resolving conflicts did.
type ConflictsResult struct {
	Applied, Dismissed, Conflicts []Conflict
	Unit                          Unit
}

// ResolveConflicts applies or dismisses the Unit's outstanding conflicts that selectors pick (all when
// there are none). Apply writes each picked conflict's upstream value at its path (or deletes the path
// when upstream has none) as one Revision through commitData; a conflict on a path whose guards
// opts.Clearance does not clear stays outstanding. Dismiss drops the picked conflicts, keeping the Unit's
// values (a new Version, no Revision).
func (s *Service) ResolveConflicts(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, action string, selectors []ConflictSelector, opts WriteOptions) (ConflictsResult, error) {
	if action != ConflictsApply && action != ConflictsDismiss {
		return ConflictsResult{}, apierr.Validation(fmt.Sprintf("Action %q is not Apply or Dismiss", action), apierr.Item{Item: "Action", Description: "unknown"})
	}
	var out ConflictsResult
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		row, cur, wc, err := lockForEdit(ctx, sc, tx, spaceID, unitID)
		if err != nil {
			return err
		}
		var picked, rest []Conflict
		for _, c := range cur.Conflicts {
			match := len(selectors) == 0
			for _, sel := range selectors {
				match = match || sel.matches(c)
			}
			if match {
				picked = append(picked, c)
			} else {
				rest = append(rest, c)
			}
		}
		if len(picked) == 0 && len(selectors) > 0 {
			return apierr.Validation("Select picks none of the Unit's outstanding conflicts", apierr.Item{Item: "Select", Description: "matches nothing"})
		}
		out = ConflictsResult{Applied: []Conflict{}, Dismissed: []Conflict{}, Unit: cur}
		if action == ConflictsDismiss {
			out.Dismissed = append(out.Dismissed, picked...)
			out.Conflicts = nonNil(rest)
			if len(picked) > 0 {
				out.Unit, err = s.setConflicts(ctx, sc, tx, row, wc, out.Conflicts, nil, false)
			}
			return err
		}
		data, err := s.contents.get(ctx, tx.Q, row.DataHash)
		if err != nil {
			return err
		}
		tree, err := configdata.Open(row.ToolchainType, data)
		if err != nil {
			return dataError(err)
		}
		notes := annotations(cur.PathAnnotations)
		for _, c := range picked {
			if notes.uncleared(resourceKey(c.ResourceType, c.ResourceName), c.Path, opts.Clearance) != nil {
				rest = append(rest, c) // guards hold: it stays outstanding
				continue
			}
			var value json.RawMessage
			if c.UpstreamValue != nil {
				value = json.RawMessage(*c.UpstreamValue)
			}
			if err := configdata.PutValue(tree, c.ResourceType, c.ResourceName, c.Path, value); err != nil {
				if ee, ok := err.(*configdata.EditError); ok {
					return apierr.Unprocessable("the conflict at %s cannot be applied: %s", c.Path, ee.Msg)
				}
				return err
			}
			out.Applied = append(out.Applied, c)
		}
		out.Conflicts = nonNil(rest)
		rendered, err := tree.Render()
		if err != nil {
			if ee, ok := err.(*configdata.EditError); ok {
				return apierr.Unprocessable("the applied data cannot be written as %s: %s", row.ToolchainType, ee.Msg)
			}
			return err
		}
		if configdata.Hash(rendered) == row.DataHash {
			out.Unit, err = s.setConflicts(ctx, sc, tx, row, wc, out.Conflicts, nil, false)
			return err
		}
		doc, err := configdata.Parse(row.ToolchainType, rendered)
		if err != nil {
			return apierr.Unprocessable("the applied data is not valid %s: %s", row.ToolchainType, err.Error())
		}
		if opts.Description == nil {
			d := fmt.Sprintf("Applied %d conflicts from upstream", len(out.Applied))
			opts.Description = &d
		}
		written, err := s.commitData(ctx, sc, tx, row, wc, rendered, doc, dataChange{source: SourceConflictApply, opts: opts,
			merge: &mergeRecord{unitConflicts: out.Conflicts, revisionConflicts: []Conflict{}}})
		out.Unit = written.Unit
		return err
	})
	if err != nil {
		return out, err
	}
	out.Unit, err = s.WithLinks(ctx, out.Unit)
	return out, err
}
