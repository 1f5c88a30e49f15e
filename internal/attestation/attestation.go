// Package attestation holds the rules of Attestations: immutable claims by a principal (an approval, a
// check's result) about Revisions of one Space. An Attestation is never updated; recording another that
// names it in RevokedAttestationID withdraws it.
package attestation

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Attestation's type name.
const EntityType = "Attestation"

// Attestation is a stored Attestation.
type Attestation struct {
	entity.Object
	Fields
	// UserID is who recorded it.
	UserID uuid.UUID
}

// Fields are what the create sets; an Attestation has Permissions and none of the other common fields.
type Fields struct {
	entity.Common
	Type                   string         `json:"Type"`
	Result                 string         `json:"Result"`
	RevisionIDs            []uuid.UUID    `json:"RevisionIDs"`
	Claims                 map[string]any `json:"Claims"`
	Note                   string         `json:"Note"`
	ExpiresAt              *time.Time     `json:"ExpiresAt"`
	EvidenceAttestationIDs []uuid.UUID    `json:"EvidenceAttestationIDs"`
	RevokedAttestationID   *uuid.UUID     `json:"RevokedAttestationID"`
	ReleaseID              *uuid.UUID     `json:"ReleaseID"`
	ChangeOrderID          *uuid.UUID     `json:"ChangeOrderID"`
}

func fromRow(r *db.Attestation) (Attestation, error) {
	a := Attestation{
		Object: entity.Object{ID: r.AttestationID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Type: r.Type, Result: r.Result, RevisionIDs: r.RevisionIDs, Note: r.Note, ExpiresAt: r.ExpiresAt,
			EvidenceAttestationIDs: r.EvidenceAttestationIDs, RevokedAttestationID: r.RevokedAttestationID,
			ReleaseID: r.ReleaseID, ChangeOrderID: r.ChangeOrderID},
		UserID: r.UserID,
	}
	var err error
	if a.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return a, err
	}
	a.Permissions = a.Permissions.Normalized()
	a.Claims, err = store.DecodeJSON[map[string]any](r.Claims)
	return a, err
}

// ListEntity is how Attestations are listed (indexes: migration 000029).
var ListEntity = listquery.Standard{Table: "attestation", ID: "AttestationID", InSpace: true, Permissions: true, Record: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Type", "Result", "Note"},
	Attributes: []listquery.Attribute{
		{Name: "UserID", Type: listquery.UUID, SQL: "attestation.user_id", Filterable: true, Orderable: true},
		{Name: "Type", Type: listquery.String, SQL: "attestation.type", Filterable: true, Orderable: true},
		{Name: "Result", Type: listquery.String, SQL: "attestation.result", Filterable: true, Orderable: true},
		{Name: "RevisionIDs", Type: listquery.UUIDList, SQL: "attestation.revision_ids", Filterable: true},
		{Name: "EvidenceAttestationIDs", Type: listquery.UUIDList, SQL: "attestation.evidence_attestation_ids", Filterable: true},
		listquery.NullableUUID("RevokedAttestationID", "attestation.revoked_attestation_id"),
		{Name: "ExpiresAt", Type: listquery.Time, SQL: "attestation.expires_at", Nullable: true, Filterable: true},
		{Name: "Claims", Type: listquery.Opaque}, {Name: "Note", Type: listquery.Opaque},
		{Name: "ReleaseID", Type: listquery.Opaque}, {Name: "ChangeOrderID", Type: listquery.Opaque},
	},
})

// Family declares Attestations to the entity kit: an Attestation lives in a Space, carries Permissions,
// is created and never updated (the document serves no update, patch or delete), and names only Revisions
// and Attestations of its own Space.
var Family = entity.Declare(&entity.Family[db.Attestation, Attestation, Fields]{
	Type: EntityType, Event: "attestation", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Attestation, error) {
		return q.AttestationInsert(ctx, db.AttestationInsertParams{AttestationID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
			UserID: sc.UserID, Type: f.Type, Result: f.Result, RevisionIDs: f.RevisionIDs, Claims: store.EncodeJSON(f.Claims), Note: f.Note,
			ExpiresAt: f.ExpiresAt, EvidenceAttestationIDs: f.EvidenceAttestationIDs, RevokedAttestationID: f.RevokedAttestationID,
			ReleaseID: f.ReleaseID, ChangeOrderID: f.ChangeOrderID, Permissions: store.EncodeJSON(f.Permissions)})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize keeps only what an Attestation has of the common fields (Permissions) and checks what needs
// no database: a Type, at least one Revision, an ExpiresAt still to come.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = entity.Common{Permissions: f.Permissions.Normalized()}
	if f.Type == "" {
		return f, apierr.UserInput("Type is required", apierr.Item{Item: "Type", Description: "required"})
	}
	if len(f.RevisionIDs) == 0 {
		return f, apierr.UserInput("RevisionIDs must name at least one Revision", apierr.Item{Item: "RevisionIDs", Description: "required"})
	}
	if f.ExpiresAt != nil && !f.ExpiresAt.After(time.Now()) {
		return f, apierr.Validation("ExpiresAt must be in the future", apierr.Item{Item: "ExpiresAt", Description: "in the past"})
	}
	if f.Claims == nil {
		f.Claims = map[string]any{}
	}
	if f.EvidenceAttestationIDs == nil {
		f.EvidenceAttestationIDs = []uuid.UUID{}
	}
	return f, f.Permissions.Validate("Permissions")
}

// Check makes sure that every Revision, Attestation and Release the claim names is of its Space, and that
// its ChangeOrder is one of its Space the caller may view (changeorder.Referenced).
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, _ *Attestation, f Fields) (Fields, error) {
	if f.ChangeOrderID != nil {
		if _, err := changeorder.Referenced(ctx, sc, tx.Q, spaceID, *f.ChangeOrderID, "ChangeOrderID"); err != nil {
			return f, err
		}
	}
	if f.ReleaseID != nil {
		ok, err := tx.Q.ReleaseInSpace(ctx, db.ReleaseInSpaceParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, ReleaseID: *f.ReleaseID})
		if err != nil {
			return f, err
		}
		if !ok {
			return f, apierr.Validation(fmt.Sprintf("ReleaseID: %s is not a Release of this Space", f.ReleaseID),
				apierr.Item{Item: "ReleaseID", Description: "not a Release of the Attestation's Space"})
		}
	}
	outside, err := tx.Q.AttestationRevisionsOutside(ctx, db.AttestationRevisionsOutsideParams{
		Ids: f.RevisionIDs, OrganizationID: sc.OrganizationID, SpaceID: spaceID})
	if err != nil {
		return f, err
	}
	if len(outside) > 0 {
		return f, apierr.Validation(fmt.Sprintf("RevisionIDs: %s is not a Revision of this Space", outside[0]),
			apierr.Item{Item: "RevisionIDs", Description: "not a Revision of the Attestation's Space"})
	}
	named := f.EvidenceAttestationIDs
	if f.RevokedAttestationID != nil {
		named = append(named[:len(named):len(named)], *f.RevokedAttestationID)
	}
	if len(named) == 0 {
		return f, nil
	}
	if outside, err = tx.Q.AttestationsOutside(ctx, db.AttestationsOutsideParams{
		Ids: named, OrganizationID: sc.OrganizationID, SpaceID: spaceID}); err != nil {
		return f, err
	}
	if len(outside) > 0 {
		field := "EvidenceAttestationIDs"
		if f.RevokedAttestationID != nil && *f.RevokedAttestationID == outside[0] {
			field = "RevokedAttestationID"
		}
		return f, apierr.Validation(fmt.Sprintf("%s: %s is not an Attestation of this Space", field, outside[0]),
			apierr.Item{Item: field, Description: "not an Attestation of the Attestation's Space"})
	}
	return f, nil
}

// NamingRevisions returns, by Revision among revisionIDs, the IDs of the organization's Attestations
// that name it, oldest first (at most 10,000 for all of them): what a page of Revisions' include=Attestations
// expands. Whether the caller may view each is for the reader of the Attestations to decide.
func NamingRevisions(ctx context.Context, c store.Conn, sc authz.Scope, revisionIDs []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
	rows, err := c.Queries().AttestationsNamingRevisions(ctx, db.AttestationsNamingRevisionsParams{
		OrganizationID: sc.OrganizationID, RevisionIDs: revisionIDs})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID][]uuid.UUID, len(revisionIDs))
	for _, r := range rows {
		out[r.RevisionID] = append(out[r.RevisionID], r.AttestationID)
	}
	return out, nil
}

// An approval is an Attestation of this Type and Result.
const (
	TypeApproval   = "Approval"
	ResultApproved = "Approved"
)

// ApprovalsOf returns, by Revision among revisionIDs, the Users whose approvals of it are in force in
// organization orgID: Attestations of Type Approval and Result Approved naming it that are neither revoked
// (named by another Attestation's RevokedAttestationID) nor expired, and are not themselves revocations.
// Each User once, in UserID order; a Revision nobody approves is absent. One query (index
// attestation_approval_idx); it decides nothing about who may view the Attestations.
func ApprovalsOf(ctx context.Context, q *db.Queries, orgID uuid.UUID, revisionIDs []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
	out := make(map[uuid.UUID][]uuid.UUID, len(revisionIDs))
	if len(revisionIDs) == 0 {
		return out, nil
	}
	rows, err := q.AttestationApprovalsOf(ctx, db.AttestationApprovalsOfParams{OrganizationID: orgID, RevisionIDs: revisionIDs})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.RevisionID] = append(out[r.RevisionID], r.UserID)
	}
	return out, nil
}

// Approvals records approvals as Attestations (unit.Approvals, for POST .../unit/{unit_id}/approve).
type Approvals struct {
	attestations *entity.Service[db.Attestation, Attestation, Fields]
}

// NewApprovals records approvals through the family's kit service.
func NewApprovals(deps entity.Deps) Approvals {
	return Approvals{attestations: entity.NewService(Family, deps)}
}

// Approvers are the Users whose approvals of the Revision are in force (ApprovalsOf).
func (a Approvals) Approvers(ctx context.Context, q *db.Queries, orgID, revisionID uuid.UUID) ([]uuid.UUID, error) {
	by, err := ApprovalsOf(ctx, q, orgID, []uuid.UUID{revisionID})
	return by[revisionID], err
}

// Record records the caller's approval of the Revision, an Attestation of the Space, in tx.
func (a Approvals) Record(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, revisionID uuid.UUID) error {
	_, err := a.attestations.CreateIn(ctx, sc, tx, spaceID, Fields{Type: TypeApproval, Result: ResultApproved, RevisionIDs: []uuid.UUID{revisionID}})
	return err
}
