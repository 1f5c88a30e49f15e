package link

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// Units read Links through unit.LinkRules: this package reads Units, so they cannot import it.
func init() { unit.Links = unitRules{} }

type unitRules struct{}

// BeforeUnitDelete refuses to delete a Unit that Links read from (naming those the caller may view), and
// records the deletion of the Links whose From Unit it is, which the database deletes with it.
func (unitRules) BeforeUnitDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, u unit.Unit) error {
	readers, err := tx.Q.LinkReadersOfUnit(ctx, db.LinkReadersOfUnitParams{OrganizationID: sc.OrganizationID, ToUnitID: u.ID})
	if err != nil {
		return err
	}
	if len(readers) > 0 {
		var named []string
		hidden := 0
		for _, r := range readers {
			l, err := fromRow(r)
			if err != nil {
				return err
			}
			if sc.Allows(authz.View, l.permTarget()) {
				named = append(named, l.Slug)
			} else {
				hidden++
			}
		}
		which := "Links " + strings.Join(named, ", ")
		switch {
		case len(named) == 0:
			which = fmt.Sprintf("%d Links you may not view", hidden)
		case hidden > 0:
			which += fmt.Sprintf(" and %d you may not view", hidden)
		}
		return apierr.Conflict("%s read from Unit %s; delete them first", which, u.Slug).WithEntity(unit.EntityType, u.ID.String(), u.Slug)
	}
	from, err := tx.Q.LinkListFromUnit(ctx, db.LinkListFromUnitParams{OrganizationID: sc.OrganizationID, FromUnitID: u.ID})
	if err != nil || len(from) == 0 {
		return err
	}
	p, err := space.Of(ctx, sc, tx.Q, u.SpaceID)
	if err != nil {
		return err
	}
	for _, r := range from {
		tx.Emit(entity.ChangeEvent(Family.Event, EntityType, entity.Deleted, sc.OrganizationID, r.LinkID, r.Slug, r.Version, &p.Ref))
	}
	return nil
}

// MoveWithUnit moves u's Links (those whose From Unit it is) to Space to, refusing a Slug taken there
// (409 AlreadyExists naming the Link), and has the Links that read u follow it (ToSpaceID).
func (unitRules) MoveWithUnit(ctx context.Context, tx *store.Tx, sc authz.Scope, u unit.Unit, to entity.SpaceRef) ([]string, error) {
	taken, err := tx.Q.LinkSlugsTakenIn(ctx, db.LinkSlugsTakenInParams{OrganizationID: sc.OrganizationID, FromUnitID: u.ID, ToSpaceID: to.ID})
	if err != nil {
		return nil, err
	}
	if len(taken) > 0 {
		e := apierr.AlreadyExists(EntityType, taken[0])
		e.Message = fmt.Sprintf("Link %s of Unit %s cannot move with it: a Link with Slug %q is already in the destination Space; rename one of them first", taken[0], u.Slug, taken[0])
		return nil, e
	}
	moved, err := tx.Q.LinkMoveWithUnit(ctx, db.LinkMoveWithUnitParams{OrganizationID: sc.OrganizationID, FromUnitID: u.ID, ToSpaceID: to.ID})
	if err != nil {
		return nil, entity.SlugClash(err, EntityType, "")
	}
	slugs := make([]string, len(moved))
	for i, r := range moved {
		slugs[i] = r.Slug
		tx.Emit(entity.ChangeEvent(Family.Event, EntityType, entity.Updated, sc.OrganizationID, r.LinkID, r.Slug, r.Version, &to))
	}
	readers, err := tx.Q.LinkFollowUnit(ctx, db.LinkFollowUnitParams{OrganizationID: sc.OrganizationID, ToUnitID: u.ID, ToSpaceID: u.SpaceID})
	if err != nil {
		return nil, err
	}
	spaces := map[uuid.UUID]entity.SpaceRef{to.ID: to}
	for _, r := range readers {
		ref, ok := spaces[r.SpaceID]
		if !ok {
			p, err := space.Of(ctx, sc, tx.Q, r.SpaceID)
			if err != nil {
				return nil, err
			}
			ref, spaces[r.SpaceID] = p.Ref, p.Ref
		}
		tx.Emit(entity.ChangeEvent(Family.Event, EntityType, entity.Updated, sc.OrganizationID, r.LinkID, r.Slug, r.Version, &ref))
	}
	return slugs, nil
}
