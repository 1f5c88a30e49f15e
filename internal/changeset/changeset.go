// Package changeset holds the rules of ChangeSets: named groups of changes in a Space. Units join an Open
// ChangeSet by their ChangeSetID (the unit package checks that, reading the change_set table itself), and
// each Revision written while a Unit is in one records its ID.
//
// State is a small machine: a ChangeSet is created Open; Open goes to Closed (once no ReviewRequest is
// Pending or ChangesRequested, or with CloseOverride) or to Abandoned; Closed and Abandoned go back to Open.
// Leaving Open lets the Units go (their ChangeSetID becomes null), so a Unit's ChangeSetID always names an
// Open ChangeSet and no Revision is recorded with one that is not.
package changeset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeworkflow"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
)

// EntityType is the ChangeSet's type name.
const EntityType = "ChangeSet"

// The States of a ChangeSet.
const (
	Open      = "Open"
	Closed    = "Closed"
	Abandoned = "Abandoned"
)

// The Statuses of a ReviewRequest.
const (
	Pending          = "Pending"
	Approved         = "Approved"
	ChangesRequested = "ChangesRequested"
)

// maxListed bounds ReviewRequests and InScopeSpaceIDs (the document says so too).
const maxListed = 100

// ReviewRequest is a review asked of a User of the organization.
type ReviewRequest struct {
	UserID uuid.UUID `json:"UserID"`
	Status string    `json:"Status"`
}

// ChangeSet is a stored ChangeSet.
type ChangeSet struct {
	entity.Object
	Fields
	// UserID is its creator. StartTagID and EndTagID mark where the change starts (made with the ChangeSet)
	// and ends (made on its first close); StartTagIsPriorRevision says the start Tag marks each Unit's
	// Revision before its first change in the set.
	UserID                  uuid.UUID
	StartTagID, EndTagID    *uuid.UUID
	StartTagIsPriorRevision bool
	// ChangeWorkflow is the content of the ChangeWorkflow copied when ChangeWorkflowID was set (nil: none).
	ChangeWorkflow *changeworkflow.Spec
}

// Fields are what a write sets. An empty State keeps the stored one (Open on create).
type Fields struct {
	entity.Common
	Description      string          `json:"Description"`
	State            string          `json:"State"`
	CloseOverride    bool            `json:"CloseOverride"`
	ReviewRequests   []ReviewRequest `json:"ReviewRequests"`
	InScopeSpaceIDs  []uuid.UUID     `json:"InScopeSpaceIDs"`
	ChangeWorkflowID *uuid.UUID      `json:"ChangeWorkflowID"`

	// workflow is what Check decides for the row: the ChangeWorkflow's copy.
	workflow *changeworkflow.Spec
}

// FromRow converts a stored row (also one the unit package read) into a ChangeSet.
func FromRow(r *db.ChangeSet) (ChangeSet, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	if err != nil {
		return ChangeSet{}, err
	}
	var reviews []ReviewRequest
	if len(r.ReviewRequests) > 0 {
		if err := json.Unmarshal(r.ReviewRequests, &reviews); err != nil {
			return ChangeSet{}, fmt.Errorf("decoding ChangeSet %s review requests: %w", r.ChangeSetID, err)
		}
	}
	var workflow *changeworkflow.Spec
	if len(r.ChangeWorkflow) > 0 && string(r.ChangeWorkflow) != "null" {
		workflow = &changeworkflow.Spec{}
		if err := json.Unmarshal(r.ChangeWorkflow, workflow); err != nil {
			return ChangeSet{}, fmt.Errorf("decoding ChangeSet %s ChangeWorkflow: %w", r.ChangeSetID, err)
		}
	}
	return ChangeSet{
		Object: entity.Object{ID: r.ChangeSetID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Common: c, Description: r.Description, State: r.State, CloseOverride: r.CloseOverride, ReviewRequests: reviews,
			InScopeSpaceIDs: r.InScopeSpaceIds, ChangeWorkflowID: r.ChangeWorkflowID, workflow: workflow},
		UserID: r.UserID, StartTagID: r.StartTagID, EndTagID: r.EndTagID, StartTagIsPriorRevision: r.StartTagIsPriorRevision,
		ChangeWorkflow: workflow,
	}, nil
}

// ListEntity is how ChangeSets are listed (indexes: migration 000043).
var ListEntity = listquery.Standard{Table: "change_set", ID: "ChangeSetID", InSpace: true, Permissions: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "Description", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "Description", Type: listquery.String, SQL: "change_set.description", Filterable: true, Orderable: true},
		{Name: "State", Type: listquery.String, SQL: "change_set.state", Filterable: true, Orderable: true},
		{Name: "CloseOverride", Type: listquery.Bool, SQL: "change_set.close_override", Filterable: true},
		{Name: "UserID", Type: listquery.UUID, SQL: "change_set.user_id", Filterable: true, Orderable: true},
		listquery.NullableUUID("ChangeWorkflowID", "change_set.change_workflow_id"),
		listquery.NullableUUID("StartTagID", "change_set.start_tag_id"),
		listquery.NullableUUID("EndTagID", "change_set.end_tag_id"),
		{Name: "StartTagIsPriorRevision", Type: listquery.Bool, SQL: "change_set.start_tag_is_prior_revision", Filterable: true, Orderable: true},
		{Name: "ReviewRequests", Type: listquery.Opaque}, {Name: "InScopeSpaceIDs", Type: listquery.Opaque},
		{Name: "ChangeWorkflow", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "StartTagID", Field: "StartTag", Type: tag.EntityType},
		{Name: "EndTagID", Field: "EndTag", Type: tag.EntityType}},
})

func rowParams(f Fields) db.ChangeSetInsertParams {
	reviews := f.ReviewRequests
	if reviews == nil {
		reviews = []ReviewRequest{}
	}
	spaces := f.InScopeSpaceIDs
	if spaces == nil {
		spaces = []uuid.UUID{}
	}
	var workflow json.RawMessage
	if f.workflow != nil {
		workflow = store.EncodeJSON(f.workflow)
	}
	return db.ChangeSetInsertParams{Slug: f.Slug, DisplayName: f.DisplayName, Description: f.Description,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		State: f.State, CloseOverride: f.CloseOverride, ReviewRequests: store.EncodeJSON(reviews), InScopeSpaceIds: spaces,
		ChangeWorkflowID: f.ChangeWorkflowID, ChangeWorkflow: workflow}
}

// Family declares ChangeSets to the entity kit: a ChangeSet lives in a Space, carries Permissions, and is
// copied and moved in bulk.
var Family = entity.Declare(&entity.Family[db.ChangeSet, ChangeSet, Fields]{
	Type: EntityType, Event: "change_set", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.ChangeSet, error) {
		p := rowParams(f)
		p.ChangeSetID, p.OrganizationID, p.SpaceID, p.UserID = id, sc.OrganizationID, spaceID, sc.UserID
		return q.ChangeSetInsert(ctx, p)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur ChangeSet, f Fields) (*db.ChangeSet, error) {
		p := rowParams(f)
		return q.ChangeSetUpdate(ctx, db.ChangeSetUpdateParams{OrganizationID: sc.OrganizationID, ChangeSetID: cur.ID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Description: p.Description, Labels: p.Labels, Annotations: p.Annotations,
			DeleteGates: p.DeleteGates, Permissions: p.Permissions, State: p.State, CloseOverride: p.CloseOverride,
			ReviewRequests: p.ReviewRequests, InScopeSpaceIds: p.InScopeSpaceIds, ChangeWorkflowID: p.ChangeWorkflowID,
			ChangeWorkflow: p.ChangeWorkflow})
	},
	FromRow: FromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks what needs no database.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = f.Common.Normalized()
	if err := f.Common.Validate(true); err != nil {
		return f, err
	}
	switch f.State {
	case "", Open, Closed, Abandoned:
	default:
		return f, apierr.UserInput(fmt.Sprintf("State %q is not a ChangeSet State: use Open, Closed or Abandoned", f.State),
			apierr.Item{Item: "State", Description: "unknown State"})
	}
	if len(f.ReviewRequests) > maxListed || len(f.InScopeSpaceIDs) > maxListed {
		return f, apierr.UserInput(fmt.Sprintf("a ChangeSet holds at most %d ReviewRequests and %d InScopeSpaceIDs", maxListed, maxListed))
	}
	seen := map[uuid.UUID]bool{}
	for i, r := range f.ReviewRequests {
		switch r.Status {
		case "", Pending, Approved, ChangesRequested:
		default:
			return f, apierr.UserInput(fmt.Sprintf("ReviewRequests.%d.Status %q is not a review Status: use Pending, Approved or ChangesRequested", i, r.Status),
				apierr.Item{Item: fmt.Sprintf("ReviewRequests.%d.Status", i), Description: "unknown Status"})
		}
		if seen[r.UserID] {
			return f, apierr.UserInput(fmt.Sprintf("ReviewRequests: User %s is asked twice; ask each User once", r.UserID),
				apierr.Item{Item: fmt.Sprintf("ReviewRequests.%d.UserID", i), Description: "asked twice"})
		}
		seen[r.UserID] = true
	}
	spaces := f.InScopeSpaceIDs[:0:0]
	for _, id := range f.InScopeSpaceIDs {
		if !slices.Contains(spaces, id) {
			spaces = append(spaces, id)
		}
	}
	f.InScopeSpaceIDs = spaces
	return f, nil
}

// Check resolves State (created Open; empty keeps the stored one) and checks its transition, the
// ReviewRequests (Users of the organization; a new one is Pending; only its User changes its Status), the
// InScopeSpaceIDs (Spaces of the organization the caller may see into; one it may not is refused as a
// random ID is) and ChangeWorkflowID: a ChangeWorkflow of the organization the caller may view (else 400
// naming it, as a random ID), whose content is copied onto the ChangeSet when it is set, at create or by a
// write while the ChangeSet is Open; a ChangeSet not Open keeps its ChangeWorkflowID.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *ChangeSet, f Fields) (Fields, error) {
	var before map[uuid.UUID]ReviewRequest
	var beforeSpaces []uuid.UUID
	if cur == nil {
		f.State = Open
		wf, err := changeworkflow.CopyOf(ctx, sc, tx.Q, f.ChangeWorkflowID)
		if err != nil {
			return f, err
		}
		f.workflow = wf
	} else {
		before = map[uuid.UUID]ReviewRequest{}
		for _, r := range cur.ReviewRequests {
			before[r.UserID] = r
		}
		beforeSpaces = cur.InScopeSpaceIDs
		if f.State == "" {
			f.State = cur.State
		}
		f.workflow = cur.ChangeWorkflow
		if !sameID(f.ChangeWorkflowID, cur.ChangeWorkflowID) {
			if cur.State != Open {
				return f, apierr.Validation(fmt.Sprintf("ChangeWorkflowID: ChangeSet %s is %s; its ChangeWorkflow changes only while it is Open (reopen it first)", cur.Slug, cur.State),
					apierr.Item{Item: "ChangeWorkflowID", Description: "ChangeSet " + cur.State})
			}
			wf, err := changeworkflow.CopyOf(ctx, sc, tx.Q, f.ChangeWorkflowID)
			if err != nil {
				return f, err
			}
			f.workflow = wf
		}
	}
	var asked []uuid.UUID
	for i, r := range f.ReviewRequests {
		old, had := before[r.UserID]
		switch {
		case !had:
			f.ReviewRequests[i].Status = Pending
			asked = append(asked, r.UserID)
		case r.Status == "":
			f.ReviewRequests[i].Status = old.Status
		case r.Status != old.Status && r.UserID != sc.UserID:
			return f, apierr.Forbidden("only User %s changes the Status of the review asked of them (ReviewRequests)", r.UserID)
		}
	}
	if len(asked) > 0 {
		members, err := tx.Q.OrganizationMembersAmong(ctx, db.OrganizationMembersAmongParams{OrganizationID: sc.OrganizationID, UserIds: asked})
		if err != nil {
			return f, err
		}
		if len(members) != len(asked) {
			return f, apierr.NoSuchReference("User", "of your organization", "ReviewRequests")
		}
	}
	for _, id := range f.InScopeSpaceIDs {
		if slices.Contains(beforeSpaces, id) {
			continue
		}
		if _, _, err := space.VisibleParent(ctx, sc, tx.Q, id); err != nil {
			if apierr.Is(err, apierr.TypeNotFound) {
				return f, apierr.NoSuchReference(space.EntityType, "of your organization", "InScopeSpaceIDs")
			}
			return f, err
		}
	}
	if cur != nil && f.State != cur.State {
		if err := checkTransition(*cur, f); err != nil {
			return f, err
		}
	}
	return f, nil
}

func sameID(a, b *uuid.UUID) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// checkTransition allows Open → Closed (reviews settled, or CloseOverride), Open → Abandoned, and Closed or
// Abandoned → Open.
func checkTransition(cur ChangeSet, f Fields) error {
	refuse := func(why string) error {
		return apierr.Validation(fmt.Sprintf("State: ChangeSet %s cannot go from %s to %s: %s", cur.Slug, cur.State, f.State, why),
			apierr.Item{Item: "State", Description: cur.State + " to " + f.State + " is not allowed"})
	}
	switch {
	case cur.State == Open && f.State == Closed:
		if f.CloseOverride {
			return nil
		}
		var waiting []string
		for _, r := range f.ReviewRequests {
			if r.Status != Approved {
				waiting = append(waiting, r.UserID.String()+" ("+r.Status+")")
			}
		}
		if len(waiting) > 0 {
			return refuse("reviews are not Approved: " + strings.Join(waiting, ", ") + "; set CloseOverride to close anyway")
		}
		return nil
	case cur.State == Open && f.State == Abandoned, f.State == Open:
		return nil
	}
	return refuse("a Closed or Abandoned ChangeSet only reopens (State Open)")
}

// AfterWrite makes a new ChangeSet's start Tag; on a close it puts the end Tag on the head of every Unit
// that recorded Revisions with the ChangeSet; leaving Open lets the Units go: they are no longer in it.
func (strategy) AfterWrite(ctx context.Context, _ entity.Deps, tx *store.Tx, sc authz.Scope, before *ChangeSet, after ChangeSet) (ChangeSet, error) {
	if before == nil {
		return startTag(ctx, tx, sc, after)
	}
	if before.State == Open && after.State == Closed {
		var err error
		if after, err = endTag(ctx, tx, sc, after); err != nil {
			return after, err
		}
	}
	if before.State == Open && after.State != Open {
		return after, releaseUnits(ctx, tx, sc, after.ID)
	}
	return after, nil
}

// startTag makes the Tag <Slug>-start in the ChangeSet's Space and records it as StartTagID. Units joining
// get it on their head Revision (unit side, PutStartTag): the Revision before their first change in the set,
// so StartTagIsPriorRevision is true.
func startTag(ctx context.Context, tx *store.Tx, sc authz.Scope, cs ChangeSet) (ChangeSet, error) {
	t, err := tag.CreateOwned(ctx, tx, sc, cs.SpaceID, tag.SlugFor(cs.Slug, "-start"), tag.Owner{ChangeSetID: &cs.ID})
	if err != nil {
		return cs, err
	}
	return setTags(ctx, tx, sc, cs, &t.ID, cs.EndTagID)
}

// endTag puts the end Tag on the head Revision of every Unit that recorded Revisions with the ChangeSet,
// making <Slug>-end (EndTagID) on the first close, or when the one recorded was deleted since.
func endTag(ctx context.Context, tx *store.Tx, sc authz.Scope, cs ChangeSet) (ChangeSet, error) {
	heads, err := tx.Q.ChangeSetUnitHeads(ctx, db.ChangeSetUnitHeadsParams{OrganizationID: sc.OrganizationID, ChangeSetID: &cs.ID})
	if err != nil {
		return cs, err
	}
	if cs.EndTagID != nil {
		ok, err := tag.PutOnRevisions(ctx, tx.Q, sc, *cs.EndTagID, heads)
		if err != nil || ok {
			return cs, err
		}
	}
	t, err := tag.CreateOwned(ctx, tx, sc, cs.SpaceID, tag.SlugFor(cs.Slug, "-end"), tag.Owner{ChangeSetID: &cs.ID})
	if err != nil {
		return cs, err
	}
	if _, err := tag.PutOnRevisions(ctx, tx.Q, sc, t.ID, heads); err != nil {
		return cs, err
	}
	return setTags(ctx, tx, sc, cs, cs.StartTagID, &t.ID)
}

// setTags records the ChangeSet's Tags as part of its write (no new Version).
func setTags(ctx context.Context, tx *store.Tx, sc authz.Scope, cs ChangeSet, start, end *uuid.UUID) (ChangeSet, error) {
	row, err := tx.Q.ChangeSetSetTags(ctx, db.ChangeSetSetTagsParams{OrganizationID: sc.OrganizationID, ChangeSetID: cs.ID,
		StartTagID: start, EndTagID: end, StartTagIsPriorRevision: start != nil})
	if err != nil {
		return cs, err
	}
	return FromRow(row)
}

// PutStartTag puts the ChangeSet's start Tag on Revision headRevisionID, the head of a Unit joining it (or
// recording its first Revision with it) in the transaction of q: what the Unit was before its first change in
// the set. Nothing when the Unit has no Revision yet, or the ChangeSet has no start Tag (or it was deleted).
func PutStartTag(ctx context.Context, q *db.Queries, sc authz.Scope, cs ChangeSet, headRevisionID *uuid.UUID) error {
	if cs.StartTagID == nil || headRevisionID == nil {
		return nil
	}
	_, err := tag.PutOnRevisions(ctx, q, sc, *cs.StartTagID, []uuid.UUID{*headRevisionID})
	return err
}

// releaseUnits lets the Units in ChangeSet id go (ChangeSetID null), each with its unit.updated event.
func releaseUnits(ctx context.Context, tx *store.Tx, sc authz.Scope, id uuid.UUID) error {
	rows, err := tx.Q.ChangeSetReleaseUnits(ctx, db.ChangeSetReleaseUnitsParams{OrganizationID: sc.OrganizationID, ChangeSetID: &id})
	for _, u := range rows {
		tx.Emit(entity.ChangeEvent("unit", "Unit", entity.Updated, sc.OrganizationID, u.UnitID, u.Slug, u.Version,
			&entity.SpaceRef{ID: u.SpaceID, Slug: u.SpaceSlug}))
	}
	return err
}

// Target is the ChangeSet as a permission target.
func (c ChangeSet) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: c.ID.String(), Grants: c.Permissions, SpaceID: c.SpaceID}
}

// Joinable returns the ChangeSet id names for a Unit of Space spaceID to join, or for a write of one to
// record (field names what carried the ID): an Open ChangeSet of the caller's organization (another
// organization's is refused as a random ID is) whose InScopeSpaceIDs, when it has any, hold the Space. The
// ChangeSet stays share-locked until q's transaction ends, so a close or a delete of it (which lock it FOR
// UPDATE) waits for the write, then sees its Unit.
func Joinable(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID, id uuid.UUID, field string) (ChangeSet, error) {
	row, err := q.ChangeSetGetForShare(ctx, db.ChangeSetGetForShareParams{OrganizationID: sc.OrganizationID, ChangeSetID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return ChangeSet{}, apierr.NoSuchReference(EntityType, "of your organization", field)
	}
	if err != nil {
		return ChangeSet{}, err
	}
	cs, err := FromRow(row)
	if err != nil {
		return cs, err
	}
	if !sc.Allows(authz.View, cs.Target()) { // one the caller may not view does not exist for it
		return ChangeSet{}, apierr.NoSuchReference(EntityType, "of your organization", field)
	}
	if cs.State != Open {
		return cs, apierr.Validation(fmt.Sprintf("%s: ChangeSet %s is %s; only an Open ChangeSet takes changes (reopen it, or use another)", field, cs.Slug, cs.State),
			apierr.Item{Item: field, Description: "ChangeSet " + cs.State})
	}
	if len(cs.InScopeSpaceIDs) > 0 && !slices.Contains(cs.InScopeSpaceIDs, spaceID) {
		return cs, apierr.Validation(fmt.Sprintf("%s: ChangeSet %s takes Units of its InScopeSpaceIDs only, not of Space %s", field, cs.Slug, spaceID),
			apierr.Item{Item: field, Description: "Space not in scope"})
	}
	return cs, nil
}

type detachKey struct{}

// WithDetach marks ctx as a delete with detach=true: the Units in the ChangeSets it deletes leave them.
func WithDetach(ctx context.Context) context.Context {
	return context.WithValue(ctx, detachKey{}, true)
}

// BeforeDelete refuses to delete a ChangeSet Units are in (409), unless the delete detaches them.
func (strategy) BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur ChangeSet) error {
	if detach, _ := ctx.Value(detachKey{}).(bool); detach {
		return releaseUnits(ctx, tx, sc, cur.ID)
	}
	n, err := tx.Q.ChangeSetUnitCount(ctx, db.ChangeSetUnitCountParams{OrganizationID: sc.OrganizationID, ChangeSetID: &cur.ID})
	if err != nil {
		return err
	}
	if n > 0 {
		return apierr.Conflict("%d Units are in ChangeSet %s; delete with detach=true to let them go, or close it first", n, cur.Slug).
			WithEntity(EntityType, cur.ID.String(), cur.Slug)
	}
	return nil
}

// MoveRow puts a ChangeSet in another Space.
func (strategy) MoveRow(ctx context.Context, q *db.Queries, sc authz.Scope, cur ChangeSet, toSpaceID uuid.UUID) (*db.ChangeSet, error) {
	return q.ChangeSetMove(ctx, db.ChangeSetMoveParams{OrganizationID: sc.OrganizationID, ChangeSetID: cur.ID, ToSpaceID: toSpaceID})
}

// DocumentSpec: a ChangeSet's document leaves its Permissions out.
func (strategy) DocumentSpec() entity.DocumentSpec {
	return entity.DocumentSpec{Omit: []string{"Permissions"}}
}
