// Package space holds the rules of the Space family: the container of Units, Targets and the other
// Space-resident entities. Spaces are an organization-wide family of the entity kit.
package space

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Space's type name on the wire and in errors and events.
const EntityType = "Space"

// Space is a stored Space.
type Space struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	HiddenReason   string
	// TriggerIDs are the Triggers in force in the Space (enabled), by Slug: read with the Space.
	TriggerIDs []uuid.UUID
	Version    int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Fields
}

// Fields are what a write sets. Their JSON form (the wire names) is what a merge patch applies to.
type Fields struct {
	Slug        string       `json:"Slug"`
	DisplayName string       `json:"DisplayName"`
	Permissions authz.Grants `json:"Permissions"`
	ComponentID *uuid.UUID   `json:"ComponentID"`
	entity.Meta
}

func (s Space) target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: s.ID.String(), Grants: s.Permissions}
}

func (f Fields) normalized() Fields {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	return f
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.Space) (Space, error) {
	s := Space{
		ID: r.SpaceID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, ComponentID: r.ComponentID},
	}
	var err error
	if s.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return s, err
	}
	if s.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return s, err
	}
	s.Fields = s.Fields.normalized()
	return s, nil
}

// Family declares Spaces to the entity kit: a family of the organization (creating one needs
// CreateChildren on it) with Permissions, whose events name the Space itself as their Space.
var Family = &entity.Family[db.Space, Space, Fields]{
	Type: EntityType, Event: "space", Listing: ListEntity,
	Enrich: withTriggers,
	ReadRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, lock bool) (*db.Space, error) {
		// Writers lock the row, so concurrent writes of one Space happen one after the other.
		if lock {
			return q.SpaceGetByIDForUpdate(ctx, db.SpaceGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, SpaceID: id})
		}
		return q.SpaceGetByID(ctx, db.SpaceGetByIDParams{OrganizationID: sc.OrganizationID, SpaceID: id})
	},
	ReadBySlug: func(ctx context.Context, q *db.Queries, sc authz.Scope, _ uuid.UUID, slug string) (*db.Space, error) {
		return q.SpaceGetBySlug(ctx, db.SpaceGetBySlugParams{OrganizationID: sc.OrganizationID, Slug: slug})
	},
	ReadByIDs: func(ctx context.Context, q *db.Queries, sc authz.Scope, ids []uuid.UUID) ([]*db.Space, error) {
		return q.SpaceListByIDs(ctx, db.SpaceListByIDsParams{OrganizationID: sc.OrganizationID, SpaceIds: ids})
	},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, f Fields) (*db.Space, error) {
		return q.SpaceInsert(ctx, db.SpaceInsertParams{
			SpaceID: id, OrganizationID: sc.OrganizationID, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			ComponentID: f.ComponentID,
		})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Space, f Fields) (*db.Space, error) {
		return q.SpaceUpdate(ctx, db.SpaceUpdateParams{
			OrganizationID: sc.OrganizationID, SpaceID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
			ComponentID: f.ComponentID,
		})
	},
	DeleteRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Space) (int64, error) {
		return q.SpaceDelete(ctx, db.SpaceDeleteParams{OrganizationID: sc.OrganizationID, SpaceID: cur.ID})
	},
	FromRow: fromRow,
	Ident: func(s Space) entity.Ident {
		return entity.Ident{ID: s.ID, Slug: s.Slug, Version: s.Version, DeleteGates: s.DeleteGates}
	},
	Fields: func(s Space) Fields { return s.Fields },
	Slug:   func(f Fields) string { return f.Slug },
	Target: Space.target,
	Grants: func(f Fields) authz.Grants { return f.Permissions },
	Normalize: func(f Fields) (Fields, error) {
		f = f.normalized()
		return f, f.validate()
	},
	Check: func(_ context.Context, _ *store.Tx, _ authz.Scope, _ uuid.UUID, cur *Space, f Fields) (Fields, error) {
		if cur != nil && f.ComponentID != nil && cur.ComponentID != nil && *cur.ComponentID == *f.ComponentID {
			return f, nil // the stored reference passes again
		}
		return f, checkComponent(f)
	},
	// A Space's events name the Space itself as the Space they are about.
	AdjustEvent: func(s Space, e event.Event) event.Event {
		e.SpaceID = &s.ID
		if p, ok := e.Payload.(event.EntityPayload); ok {
			p.SpaceSlug = s.Slug
			e.Payload = p
		}
		return e
	},
}

// Service carries out Space operations (the kit's).
type Service = entity.Service[db.Space, Space, Fields]

// NewService serves Spaces from a store.
func NewService(deps entity.Deps) *Service {
	return entity.NewService(Family, deps)
}

// checkComponent refuses a ComponentID: it must name a Component of the organization, and that family
// does not exist yet, so every one is a reference to a missing entity.
func checkComponent(f Fields) error {
	if f.ComponentID == nil {
		return nil
	}
	return apierr.Validation(fmt.Sprintf("Component %s does not exist in your organization", f.ComponentID),
		apierr.Item{Item: "ComponentID", Description: "no such Component"})
}

// withTriggers reads the TriggerIDs of Spaces in one query.
func withTriggers(ctx context.Context, q *db.Queries, spaces []Space) error {
	if len(spaces) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(spaces))
	for i, s := range spaces {
		ids[i] = s.ID
	}
	rows, err := q.TriggerIDsBySpace(ctx, db.TriggerIDsBySpaceParams{OrganizationID: spaces[0].OrganizationID, SpaceIds: ids})
	if err != nil {
		return err
	}
	by := make(map[uuid.UUID][]uuid.UUID, len(rows))
	for _, r := range rows {
		by[r.SpaceID] = r.TriggerIds
	}
	for i := range spaces {
		spaces[i].TriggerIDs = by[spaces[i].ID]
		if spaces[i].TriggerIDs == nil {
			spaces[i].TriggerIDs = []uuid.UUID{}
		}
	}
	return nil
}
