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
	Slug        string
	DisplayName string
	EmailDomain string
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

func (o Organization) changeEvent(c entity.Change) event.Event {
	return entity.ChangeEvent("organization", OrganizationType, c, o.ID, o.ID, o.Slug, o.Version, nil)
}

// Service carries out Organization, OrganizationMember and User operations.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
}

// ownOrganization refuses any organization but the caller's, as NotFound.
func ownOrganization(sc authz.Scope, id uuid.UUID) error {
	if id != sc.OrganizationID {
		return apierr.NotFound(OrganizationType, id.String())
	}
	return nil
}

func loadOrganization(ctx context.Context, q *db.Queries, id uuid.UUID) (Organization, error) {
	row, err := q.OrganizationGetByID(ctx, id)
	if err != nil {
		return Organization{}, apierr.NotFoundAs(err, OrganizationType, id.String())
	}
	return organizationFromRow(row)
}

// ListOrganizations lists the caller's organization (a token names exactly one), through the same list
// path as every family, so where, select and the rest apply.
func (s *Service) ListOrganizations(ctx context.Context, sc authz.Scope, path string, params listquery.Params) (listquery.Page[Organization], error) {
	page, err := listquery.Run[db.Organization](ctx, s.Store.Pool, s.Tokens,
		listquery.Query{Entity: OrganizationList, Caller: sc, Path: path, Params: params})
	return mapPage(page, err, organizationFromRow)
}

// mapPage converts a page of rows to domain values.
func mapPage[R, T any](page listquery.Page[R], err error, convert func(*R) (T, error)) (listquery.Page[T], error) {
	if err != nil {
		return listquery.Page[T]{}, err
	}
	return listquery.MapPage(page, convert)
}

// GetOrganization returns the caller's organization if id names it.
func (s *Service) GetOrganization(ctx context.Context, sc authz.Scope, id uuid.UUID) (Organization, error) {
	if err := ownOrganization(sc, id); err != nil {
		return Organization{}, err
	}
	o, err := loadOrganization(ctx, s.Store.Q(), id)
	if err != nil {
		return Organization{}, err
	}
	return o, authz.Check(sc, authz.View, authz.OrganizationTarget(id))
}

// CreateOrganization makes a new organization with the caller as its admin. Slugs are unique across
// the service; with AllowExists an organization the caller already belongs to is returned instead.
func (s *Service) CreateOrganization(ctx context.Context, sc authz.Scope, f OrganizationFields, opts entity.WriteOptions) (Organization, error) {
	f.Meta = f.Meta.Normalized()
	if err := f.validate(); err != nil {
		return Organization{}, err
	}
	var out Organization
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		existing, err := tx.Q.OrganizationGetBySlug(ctx, f.Slug)
		switch {
		case err == nil && opts.AllowExists:
			// Only an organization the caller belongs to may be handed back: another tenant's is not theirs to see.
			if _, merr := tx.Q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: existing.OrganizationID, UserID: sc.UserID}); merr == nil {
				out, err = organizationFromRow(existing)
				return err
			}
			return apierr.AlreadyExists(OrganizationType, f.Slug)
		case err == nil:
			return apierr.AlreadyExists(OrganizationType, f.Slug)
		case !apierr.Is(err, apierr.TypeNotFound):
			return err
		}
		err = tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			if out, err = insertOrganization(ctx, sp, f); err != nil {
				return err
			}
			return addMember(ctx, sp, out.ID, sc.UserID, auth.RoleAdmin)
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) && opts.AllowExists {
			// A concurrent create of the same Slug won: hand it back if the caller belongs to it.
			existing, gerr := tx.Q.OrganizationGetBySlug(ctx, f.Slug)
			if gerr != nil {
				return gerr
			}
			if _, merr := tx.Q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: existing.OrganizationID, UserID: sc.UserID}); merr == nil {
				out, err = organizationFromRow(existing)
			}
		}
		return err
	})
	return out, err
}

func insertOrganization(ctx context.Context, tx *store.Tx, f OrganizationFields) (Organization, error) {
	row, err := tx.Q.OrganizationInsert(ctx, db.OrganizationInsertParams{
		OrganizationID: uuid.New(), Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), EmailDomain: f.EmailDomain,
	})
	if err != nil {
		return Organization{}, entity.SlugClash(err, OrganizationType, f.Slug)
	}
	o, err := organizationFromRow(row)
	if err != nil {
		return o, err
	}
	tx.Emit(o.changeEvent(entity.Created))
	return o, nil
}

// UpdateOrganization replaces the caller's organization's fields; version must be the stored one.
func (s *Service) UpdateOrganization(ctx context.Context, sc authz.Scope, id uuid.UUID, version int64, f OrganizationFields, dryRun bool) (Organization, error) {
	if err := ownOrganization(sc, id); err != nil {
		return Organization{}, err
	}
	if err := entity.RequireVersion(version); err != nil {
		return Organization{}, err
	}
	f.Meta = f.Meta.Normalized()
	if err := f.validate(); err != nil {
		return Organization{}, err
	}
	if err := authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(id)); err != nil {
		return Organization{}, err
	}
	var out Organization
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		if err := tx.Q.OrganizationLockForMembership(ctx, id); err != nil {
			return err
		}
		cur, err := loadOrganization(ctx, tx.Q, id)
		if err != nil {
			return err
		}
		if err := entity.CheckVersion(OrganizationType, id, &version, cur.Version); err != nil {
			return err
		}
		row, err := tx.Q.OrganizationUpdate(ctx, db.OrganizationUpdateParams{
			OrganizationID: id, Version: version, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), EmailDomain: f.EmailDomain,
		})
		if apierr.Is(err, apierr.TypeNotFound) {
			return apierr.Conflict("the Organization was changed by a concurrent write; read it again").WithEntity(OrganizationType, id.String(), cur.Slug)
		}
		if err != nil {
			return entity.SlugClash(err, OrganizationType, f.Slug)
		}
		if out, err = organizationFromRow(row); err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Updated))
		return nil
	})
	return out, err
}

// DeleteOrganization deletes the caller's organization; refused while it has DeleteGates or Spaces.
func (s *Service) DeleteOrganization(ctx context.Context, sc authz.Scope, id uuid.UUID, dryRun bool) error {
	if err := ownOrganization(sc, id); err != nil {
		return err
	}
	if err := authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(id)); err != nil {
		return err
	}
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		if err := tx.Q.OrganizationLockForMembership(ctx, id); err != nil {
			return err
		}
		cur, err := loadOrganization(ctx, tx.Q, id)
		if err != nil {
			return err
		}
		if err := entity.CheckDeleteGates(OrganizationType, id, cur.Slug, cur.DeleteGates); err != nil {
			return err
		}
		n, err := tx.Q.OrganizationDelete(ctx, id)
		if err != nil {
			return store.TranslateDelete(err, OrganizationType, id.String())
		}
		if n == 0 {
			return apierr.NotFound(OrganizationType, id.String())
		}
		tx.Emit(cur.changeEvent(entity.Deleted))
		return nil
	})
}
