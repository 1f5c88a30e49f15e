// Package space holds the rules of the Space family: the container of Units, Targets and the other
// Space-resident entities. Spaces are an organization-wide family of the entity kit.
package space

import (
	"context"

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
	entity.Object
	// TriggerIDs are the Triggers in force in the Space (enabled), by Slug: read with the Space.
	TriggerIDs []uuid.UUID
	Fields
}

// Fields are what a write sets. Their JSON form (the wire names) is what a merge patch applies to.
type Fields struct {
	entity.Common
	ComponentID *uuid.UUID `json:"ComponentID"`
}

func fromRow(r *db.Space) (Space, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	return Space{Object: entity.Object{ID: r.SpaceID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Common: c, ComponentID: r.ComponentID}}, err
}

// Family declares Spaces to the entity kit: a family of the organization (creating one needs
// CreateChildren on it) with Permissions, whose events name the Space itself as their Space. Grants on a
// Space reach what lives in it, so its events are not quiet.
var Family = entity.Declare(&entity.Family[db.Space, Space, Fields]{
	Type: EntityType, Event: "space", Listing: ListEntity, Strategy: strategy{},
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
	FromRow: fromRow,
})

type strategy struct{}

// Check: a ComponentID the write leaves as stored passes again; any other must name a Component of the
// organization the caller may view (CheckComponent; else 400 as for a random ID).
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Space, f Fields) (Fields, error) {
	if f.ComponentID == nil || (cur != nil && cur.ComponentID != nil && *cur.ComponentID == *f.ComponentID) {
		return f, nil // none, or the stored reference passes again
	}
	if CheckComponent == nil {
		return f, apierr.NoSuchReference("Component", "of your organization", "ComponentID")
	}
	return f, CheckComponent(ctx, tx, sc, *f.ComponentID)
}

// AdjustEvent: a Space's events name the Space itself as the Space they are about.
func (strategy) AdjustEvent(s Space, e event.Event) event.Event {
	e.SpaceID = &s.ID
	if p, ok := e.Payload.(event.EntityPayload); ok {
		p.SpaceSlug = s.Slug
		e.Payload = p
	}
	return e
}

// Enrich reads the TriggerIDs of Spaces in one query.
func (strategy) Enrich(ctx context.Context, q *db.Queries, spaces []Space) error {
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

// CheckComponent is the Component family's check of a ComponentID a Space write sets: a Component of the
// organization the caller may view. internal/component sets it when loaded (Components read Spaces, so
// Spaces cannot import them); unset, every ComponentID is refused as naming no Component.
var CheckComponent func(ctx context.Context, tx *store.Tx, sc authz.Scope, id uuid.UUID) error

// Variant is a Space naming a Component in its ComponentID.
type Variant struct {
	SpaceID uuid.UUID
	Slug    string
}

// OfComponent returns the Variants of a Component (at most 100, by Slug), in one query on q: a Component's
// delete is refused while there are any.
func OfComponent(ctx context.Context, sc authz.Scope, q *db.Queries, componentID uuid.UUID) ([]Variant, error) {
	rows, err := q.SpacesOfComponent(ctx, db.SpacesOfComponentParams{OrganizationID: sc.OrganizationID, ComponentID: &componentID})
	if err != nil {
		return nil, err
	}
	out := make([]Variant, len(rows))
	for i, r := range rows {
		out[i] = Variant{SpaceID: r.SpaceID, Slug: r.Slug}
	}
	return out, nil
}
