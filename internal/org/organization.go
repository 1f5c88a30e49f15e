package org

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// OrganizationType is the Organization's type name.
const OrganizationType = "Organization"

// Organization is a stored organization. Its ID is its OrganizationID.
type Organization struct {
	entity.Object
	ExternalID string
	OrganizationFields
}

// OrganizationFields are what a write sets.
type OrganizationFields struct {
	entity.Common
	EmailDomain string `json:"EmailDomain"`
	// SignInProvisionRole is the OrgRole a person signing in by token exchange without being a member
	// is given (ProvisionMember); empty refuses them.
	SignInProvisionRole auth.Role `json:"SignInProvisionRole"`
}

func organizationFromRow(r *db.Organization) (Organization, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, nil)
	return Organization{Object: entity.Object{ID: r.OrganizationID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, ExternalID: r.ExternalID,
		OrganizationFields: OrganizationFields{Common: c, EmailDomain: r.EmailDomain, SignInProvisionRole: auth.Role(r.SignInProvisionRole)}}, err
}

// OrganizationFamily declares Organizations to the entity kit. An Organization is the tenant itself: a
// caller reads and writes only the one its token names (another's is NotFound, and so is one another
// organization's Slug), any member creates a new one (not inside the caller's, so no CreateChildren is
// asked) and becomes its admin, and changing or deleting one needs ManageOrganization. Its creation
// makes a membership, so its events are not quiet.
var OrganizationFamily = entity.Declare(&entity.Family[db.Organization, Organization, OrganizationFields]{
	Type: OrganizationType, Event: "organization", Listing: OrganizationList, Strategy: organizationStrategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, _ authz.Scope, _, id uuid.UUID, f OrganizationFields) (*db.Organization, error) {
		return insertOrganizationRow(ctx, q, id, f)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, _ authz.Scope, cur Organization, f OrganizationFields) (*db.Organization, error) {
		return q.OrganizationUpdate(ctx, db.OrganizationUpdateParams{
			OrganizationID: cur.ID, Version: cur.Version, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), EmailDomain: f.EmailDomain, SignInProvisionRole: string(f.SignInProvisionRole),
		})
	},
	FromRow: organizationFromRow,
})

type organizationStrategy struct{}

// AuthorizeCreate: any member creates an organization (it is not made inside the caller's).
func (organizationStrategy) AuthorizeCreate(authz.Scope, authz.Target) error { return nil }

// ReadRow reads the caller's organization only; lock takes the lock memberships take, so a change of the
// organization waits for them, and they for it.
func (organizationStrategy) ReadRow(ctx context.Context, c store.Conn, sc authz.Scope, _, id uuid.UUID, lock bool) (*db.Organization, error) {
	if id != sc.OrganizationID {
		return nil, apierr.NotFound(OrganizationType, id.String())
	}
	if lock {
		if err := c.Queries().OrganizationLockForMembership(ctx, id); err != nil {
			return nil, err
		}
	}
	return c.Queries().OrganizationGetByID(ctx, id)
}

// ReadBySlug reads an organization the caller belongs to (allow_exists hands back only one of those).
func (organizationStrategy) ReadBySlug(ctx context.Context, c store.Conn, sc authz.Scope, _ uuid.UUID, slug string) (*db.Organization, error) {
	row, err := c.Queries().OrganizationGetBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	if _, err := c.Queries().OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: row.OrganizationID, UserID: sc.UserID}); err != nil {
		return nil, err
	}
	return row, nil
}

// DeleteRow is refused (409) while the organization holds entities: their foreign keys restrict it.
func (organizationStrategy) DeleteRow(ctx context.Context, q *db.Queries, _ authz.Scope, cur Organization) (int64, error) {
	return q.OrganizationDelete(ctx, cur.ID)
}

// Check: changing an organization needs ManageOrganization; SignInProvisionRole is a role or empty.
func (organizationStrategy) Check(_ context.Context, _ *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Organization, f OrganizationFields) (OrganizationFields, error) {
	if f.SignInProvisionRole != "" && !f.SignInProvisionRole.Valid() {
		return f, apierr.Validation("SignInProvisionRole must be "+auth.RoleNames+", or empty (off)",
			apierr.Item{Item: "SignInProvisionRole", Description: "not a role"})
	}
	if cur == nil {
		return f, nil
	}
	return f, authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(cur.ID))
}

// AfterWrite makes the creator the new organization's admin.
func (organizationStrategy) AfterWrite(ctx context.Context, _ entity.Deps, tx *store.Tx, sc authz.Scope, before *Organization, after Organization) (Organization, error) {
	if before != nil {
		return after, nil
	}
	return after, addMember(ctx, tx, after.ID, sc.UserID, auth.RoleAdmin)
}

// BeforeDelete: deleting an organization needs ManageOrganization.
func (organizationStrategy) BeforeDelete(_ context.Context, _ *store.Tx, sc authz.Scope, cur Organization) error {
	return authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(cur.ID))
}

// AdjustEvent: an organization's events are its own, a new one's included (not the creator's
// organization's).
func (organizationStrategy) AdjustEvent(o Organization, e event.Event) event.Event {
	e.OrganizationID = o.ID
	return e
}

func insertOrganizationRow(ctx context.Context, q *db.Queries, id uuid.UUID, f OrganizationFields) (*db.Organization, error) {
	return q.OrganizationInsert(ctx, db.OrganizationInsertParams{
		OrganizationID: id, Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), EmailDomain: f.EmailDomain, SignInProvisionRole: string(f.SignInProvisionRole),
	})
}

// insertOrganization makes an organization outside any caller's Scope (`hubd token`), with its event.
func insertOrganization(ctx context.Context, tx *store.Tx, f OrganizationFields) (Organization, error) {
	row, err := insertOrganizationRow(ctx, tx.Q, uuid.New(), f)
	if err != nil {
		return Organization{}, entity.SlugClash(err, OrganizationType, f.Slug)
	}
	o, err := organizationFromRow(row)
	if err != nil {
		return o, err
	}
	tx.Emit(entity.ChangeEvent(OrganizationFamily.Event, OrganizationType, entity.Created, o.ID, o.ID, o.Slug, o.Version, nil))
	return o, nil
}

// Service carries out Organization (through the kit), OrganizationMember and User operations.
type Service struct {
	*entity.Service[db.Organization, Organization, OrganizationFields]
	// GroupsOf reads the Groups each of users is in (User.GroupIDs): the Group family's resolver, handed
	// in because Groups name members of organizations.
	GroupsOf GroupsOfFunc
}

// GroupsOfFunc returns, in one query, the Groups of an organization each of users is in.
type GroupsOfFunc func(ctx context.Context, q *db.Queries, orgID uuid.UUID, users []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error)

// NewService serves organizations, their members and Users from a store.
func NewService(deps entity.Deps, groupsOf GroupsOfFunc) *Service {
	return &Service{Service: entity.NewService(OrganizationFamily, deps), GroupsOf: groupsOf}
}

// ownOrganization refuses any organization but the caller's, as NotFound.
func ownOrganization(sc authz.Scope, id uuid.UUID) error {
	if id != sc.OrganizationID {
		return apierr.NotFound(OrganizationType, id.String())
	}
	return nil
}

// mapPage converts a page of rows to domain values.
func mapPage[R, T any](page listquery.Page[R], err error, convert func(*R) (T, error)) (listquery.Page[T], error) {
	if err != nil {
		return listquery.Page[T]{}, err
	}
	return listquery.MapPage(page, convert)
}
