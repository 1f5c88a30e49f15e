// Package eventfilter keeps, of the event log's entries, those a caller may see: the one rule by which
// Channels and worker event cursors deliver events, so a bot never receives an event about what it may not
// view.
package eventfilter

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/target"
)

// Visible returns, as entries to deliver, the entries sc may see: View or ViewChildren on the event's
// Space, or ViewChildren on its Target; events outside any Space need View on the organization. Grants
// are read now (two queries for the whole batch), so a grant change applies from the next read.
func Visible(ctx context.Context, sc authz.Scope, q *db.Queries, entries []*db.EventLog) ([]event.Entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	var spaceIDs, targetIDs []uuid.UUID
	for _, e := range entries {
		if e.SpaceID != nil {
			spaceIDs = append(spaceIDs, *e.SpaceID)
		}
		if e.TargetID != nil {
			targetIDs = append(targetIDs, *e.TargetID)
		}
	}
	spaces, err := space.AuthzTargets(ctx, sc, q, spaceIDs)
	if err != nil {
		return nil, err
	}
	targets, err := target.AuthzTargets(ctx, sc, q, targetIDs)
	if err != nil {
		return nil, err
	}
	var out []event.Entry
	for _, e := range entries {
		visible := false
		switch {
		case e.SpaceID != nil:
			st, ok := spaces[*e.SpaceID]
			if !ok { // the Space is gone: what its role grants everywhere still applies
				st = authz.Target{EntityType: "Space", ID: e.SpaceID.String()}
			}
			visible = authz.ViewsInside(sc, st)
			if !visible && e.TargetID != nil {
				if tt, ok := targets[*e.TargetID]; ok {
					visible = sc.Allows(authz.ViewChildren, tt)
				}
			}
		default:
			visible = sc.Allows(authz.View, authz.OrganizationTarget(sc.OrganizationID))
		}
		if visible {
			out = append(out, event.Entry{CursorID: e.CursorID, EventType: e.EventType, SpaceID: e.SpaceID, TargetID: e.TargetID,
				SubjectEntityType: e.SubjectEntityType, SubjectEntityID: e.SubjectEntityID, Payload: json.RawMessage(e.Payload), CreatedAt: e.CreatedAt})
		}
	}
	return out, nil
}
