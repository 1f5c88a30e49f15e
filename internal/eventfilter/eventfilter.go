// Package eventfilter keeps, of the event log's entries, those a caller may see: the one rule by which
// Channels and worker event cursors deliver events, so a bot never receives an event about what it may not
// view. Its Reader shares the reads of the log among the long polls of a replica.
package eventfilter

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/bridgeworker"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/target"
)

// Batch is a read of the log: entries of one organization in cursor order, with the grants of their
// Spaces and Targets as they were read with them, so any number of callers can be filtered in memory.
type Batch struct {
	entries         []*db.EventLog
	spaces, targets map[uuid.UUID]authz.Target
}

// Entries are the entries read, in cursor order. Callers share them: they must not change them.
func (b *Batch) Entries() []*db.EventLog { return b.entries }

// Read reads at most max entries of org after cursor after, in cursor order, with the grants of their
// Spaces and Targets, in one statement (EventLogReadGranted). Grants are read with the entries, so a
// grant change applies from the next read.
func Read(ctx context.Context, q *db.Queries, org uuid.UUID, after int64, max int) (*Batch, error) {
	return read(ctx, q, org, after, max, nil)
}

// read is Read that, given a claim, also claims what it reads for the claim's worker cursor in the
// same statement and records the outcome in claim.
func read(ctx context.Context, q *db.Queries, org uuid.UUID, after int64, max int, claim *bridgeworker.CursorClaim) (*Batch, error) {
	p := db.EventLogReadGrantedParams{OrganizationID: org, After: after, MaxEvents: int32(max)}
	if claim != nil {
		p.ClaimWorker, p.ClaimName = &claim.Worker, claim.Name
	}
	rows, err := q.EventLogReadGranted(ctx, p)
	if err != nil {
		return nil, err
	}
	if claim != nil {
		claim.Tried, claim.Won = true, len(rows) > 0 && rows[0].Claimed
	}
	b := &Batch{entries: make([]*db.EventLog, len(rows))}
	var inSpaces, onTargets []*db.EventLogReadGrantedRow
	seen := map[uuid.UUID]bool{}
	for i, r := range rows {
		e := &r.EventLog
		b.entries[i] = e
		if e.SpaceID != nil && r.SpacePermissions != nil && !seen[*e.SpaceID] {
			seen[*e.SpaceID] = true
			inSpaces = append(inSpaces, r)
		}
		if e.TargetID != nil && r.TargetPermissions != nil && r.TargetSpaceID != nil && !seen[*e.TargetID] {
			seen[*e.TargetID] = true
			onTargets = append(onTargets, r)
		}
	}
	if b.spaces, err = entity.PermissionTargets(inSpaces, func(r *db.EventLogReadGrantedRow) (uuid.UUID, []byte, authz.Target) {
		return *r.EventLog.SpaceID, r.SpacePermissions, space.AuthzTarget(*r.EventLog.SpaceID)
	}); err != nil {
		return nil, err
	}
	b.targets, err = entity.PermissionTargets(onTargets, func(r *db.EventLogReadGrantedRow) (uuid.UUID, []byte, authz.Target) {
		return *r.EventLog.TargetID, r.TargetPermissions, target.AuthzTarget(*r.EventLog.TargetID, *r.TargetSpaceID)
	})
	return b, err
}

// Visible returns, as entries to deliver, those of selected (entries of the Batch) that sc may see: View
// or ViewChildren on the event's Space, or ViewChildren on its Target; events outside any Space need
// View on the organization.
func (b *Batch) Visible(sc authz.Scope, selected []*db.EventLog) []event.Entry {
	var out []event.Entry
	for _, e := range selected {
		visible := false
		switch {
		case e.SpaceID != nil:
			st, ok := b.spaces[*e.SpaceID]
			if !ok { // the Space is gone: what its role grants everywhere still applies
				st = authz.Target{EntityType: "Space", ID: e.SpaceID.String()}
			}
			visible = authz.ViewsInside(sc, st)
			if !visible && e.TargetID != nil {
				if tt, ok := b.targets[*e.TargetID]; ok {
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
	return out
}
