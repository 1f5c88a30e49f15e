package org

import (
	"context"
	"time"

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

// Organization is a stored organization.
type Organization struct {
	ID           uuid.UUID
	ExternalID   string
	HiddenReason string
	Version      int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
	OrganizationFields
}

// OrganizationFields are what a write sets.
type OrganizationFields struct {
	Slug        string `json:"Slug"`
	DisplayName string `json:"DisplayName"`
	EmailDomain string `json:"EmailDomain"`
	entity.Meta
}

func (f OrganizationFields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	return f.Meta.Validate()
}

func organizationFromRow(r *db.Organization) (Organization, error) {
	o := Organization{
		ID: r.OrganizationID, ExternalID: r.ExternalID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		OrganizationFields: OrganizationFields{Slug: r.Slug, DisplayName: r.DisplayName, EmailDomain: r.EmailDomain},
	}
	var err error
	o.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates)
	return o, err
}

// OrganizationFamily declares Organizations to the entity kit. An Organization is the tenant itself: a
// caller reads and writes only the one its token names (another's is NotFound, and so is one another
// organization's Slug), any member creates a new one (not inside the caller's, so no CreateChildren is
// asked) and becomes its admin, and changing or deleting one needs ManageOrganization.
var OrganizationFamily = &entity.Family[db.Organization, Organization, OrganizationFields]{
	Type: OrganizationType, Event: "organization", Listing: OrganizationList,
	CheckCreate: func(authz.Scope, authz.Target) error { return nil },
	ReadRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, lock bool) (*db.Organization, error) {
		if id != sc.OrganizationID {
			return nil, apierr.NotFound(OrganizationType, id.String())
		}
		if lock {
			// The lock memberships take: a change of the organization waits for them, and they for it.
			if err := q.OrganizationLockForMembership(ctx, id); err != nil {
				return nil, err
			}
		}
		return q.OrganizationGetByID(ctx, id)
	},
	// By Slug: an organization the caller belongs to (allow_exists hands back only one of those).
	ReadBySlug: func(ctx context.Context, q *db.Queries, sc authz.Scope, _ uuid.UUID, slug string) (*db.Organization, error) {
		row, err := q.OrganizationGetBySlug(ctx, slug)
		if err != nil {
			return nil, err
		}
		if _, err := q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: row.OrganizationID, UserID: sc.UserID}); err != nil {
			return nil, err
		}
		return row, nil
	},
	InsertRow: func(ctx context.Context, q *db.Queries, _ authz.Scope, _, id uuid.UUID, f OrganizationFields) (*db.Organization, error) {
		return insertOrganizationRow(ctx, q, id, f)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, _ authz.Scope, cur Organization, f OrganizationFields) (*db.Organization, error) {
		return q.OrganizationUpdate(ctx, db.OrganizationUpdateParams{
			OrganizationID: cur.ID, Version: cur.Version, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), EmailDomain: f.EmailDomain,
		})
	},
	// Refused (409) while the organization holds entities: their foreign keys restrict it.
	DeleteRow: func(ctx context.Context, q *db.Queries, _ authz.Scope, cur Organization) (int64, error) {
		return q.OrganizationDelete(ctx, cur.ID)
	},
	FromRow: organizationFromRow,
	Ident: func(o Organization) entity.Ident {
		return entity.Ident{ID: o.ID, Slug: o.Slug, Version: o.Version, DeleteGates: o.DeleteGates}
	},
	Fields: func(o Organization) OrganizationFields { return o.OrganizationFields },
	Slug:   func(f OrganizationFields) string { return f.Slug },
	Target: func(o Organization) authz.Target { return authz.OrganizationTarget(o.ID) },
	Normalize: func(f OrganizationFields) (OrganizationFields, error) {
		f.Meta = f.Meta.Normalized()
		return f, f.validate()
	},
	Check: func(_ context.Context, _ *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Organization, f OrganizationFields) (OrganizationFields, error) {
		if cur == nil {
			return f, nil
		}
		return f, authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(cur.ID))
	},
	// The creator becomes the new organization's admin.
	AfterWrite: func(ctx context.Context, tx *store.Tx, sc authz.Scope, before *Organization, after Organization) (Organization, error) {
		if before != nil {
			return after, nil
		}
		return after, addMember(ctx, tx, after.ID, sc.UserID, auth.RoleAdmin)
	},
	BeforeDelete: func(_ context.Context, _ *store.Tx, sc authz.Scope, cur Organization) error {
		return authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(cur.ID))
	},
	// An organization's events are its own, a new one's included (not the creator's organization's).
	AdjustEvent: func(o Organization, e event.Event) event.Event {
		e.OrganizationID = o.ID
		return e
	},
}

func insertOrganizationRow(ctx context.Context, q *db.Queries, id uuid.UUID, f OrganizationFields) (*db.Organization, error) {
	return q.OrganizationInsert(ctx, db.OrganizationInsertParams{
		OrganizationID: id, Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), EmailDomain: f.EmailDomain,
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
