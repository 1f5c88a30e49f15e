package unit

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/store"
)

// Backing Units hold another entity's document (a Component's, made with with_backing_units) and are
// rewritten by that entity's writes, in their transaction, through the same commit path as any data write
// (Triggers, Revisions, events, Links reading the Unit).

// CreateBacking makes Unit slug (AppConfig/YAML) in Space spaceID in tx, as the caller creates any Unit
// (CreateChildren on the Space; a Slug taken there is 409 AlreadyExists), with data as its Revision 1, and
// answers its ID.
func CreateBacking(ctx context.Context, deps entity.Deps, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, slug, displayName string, data []byte) (uuid.UUID, error) {
	u, err := entity.NewService(Family, deps).CreateIn(ctx, sc, tx, spaceID, Fields{
		Common:        entity.Common{Slug: slug, DisplayName: displayName},
		ToolchainType: configdata.AppConfigYAML,
	})
	if err != nil {
		return uuid.Nil, err
	}
	return u.ID, WriteBacking(ctx, deps, tx, sc, u.ID, data)
}

// WriteBacking makes data the head of backing Unit unitID in tx (a new Revision only when it changes). It
// does not ask whether the writer may edit the Unit: the entity it backs carries the authority of whoever
// made the Unit with it, as a Link carries its writer's. A Unit deleted since is nothing to write.
func WriteBacking(ctx context.Context, deps entity.Deps, tx *store.Tx, sc authz.Scope, unitID uuid.UUID, data []byte) error {
	spaceID, err := tx.Q.UnitSpaceOf(ctx, db.UnitSpaceOfParams{OrganizationID: sc.OrganizationID, UnitID: unitID})
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	r, err := tx.Q.UnitGetForDataWrite(ctx, db.UnitGetForDataWriteParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, UnitID: unitID})
	if err != nil {
		return err
	}
	doc, err := configdata.Parse(r.Unit.ToolchainType, data)
	if err != nil {
		return dataError(err)
	}
	s := &Service{Store: deps.Store, Tokens: deps.Tokens, contents: newContentCache()}
	_, err = s.commitData(ctx, sc, tx, &r.Unit, writeContext{spaceSlug: r.SpaceSlug, headSources: r.HeadSources, triggers: r.Triggers},
		data, doc, dataChange{source: SourceDataPut})
	return err
}
