package changeworkflow

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the ChangeWorkflow's type name.
const EntityType = "ChangeWorkflow"

// ChangeWorkflow is a stored ChangeWorkflow.
type ChangeWorkflow struct {
	entity.Object
	Fields
}

// Fields are what a write sets: the common fields and the workflow's content (Stages, Final,
// CustomPrerequisites, under their wire names).
type Fields struct {
	entity.Common
	Spec
}

func fromRow(r *db.ChangeWorkflow) (ChangeWorkflow, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, nil)
	w := ChangeWorkflow{Object: entity.Object{ID: r.ChangeWorkflowID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID,
		HiddenReason: r.HiddenReason, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Common: c}}
	if err != nil {
		return w, err
	}
	if w.Stages, err = store.DecodeJSON[[]Stage](r.Stages); err != nil {
		return w, err
	}
	if w.CustomPrerequisites, err = store.DecodeJSON[[]Prerequisite](r.CustomPrerequisites); err != nil {
		return w, err
	}
	if len(r.Final) > 0 && string(r.Final) != "null" {
		var f FinalStage
		if f, err = store.DecodeJSON[FinalStage](r.Final); err != nil {
			return w, err
		}
		w.Final = &f
	}
	w.Spec = w.Spec.Normalized()
	return w, nil
}

// ListEntity is how ChangeWorkflows are listed (indexes: migration 000044). Their content is returned, not
// filtered on.
var ListEntity = listquery.Standard{Table: "change_workflow", ID: "ChangeWorkflowID", InSpace: true}.Define(&listquery.Entity{
	Name: EntityType,
	Attributes: []listquery.Attribute{
		listquery.After("UpdatedAt"),
		{Name: "Stages", Type: listquery.Opaque}, {Name: "Final", Type: listquery.Opaque},
		{Name: "CustomPrerequisites", Type: listquery.Opaque},
	},
})

func insertParams(sc authz.Scope, spaceID, id uuid.UUID, f Fields) db.ChangeWorkflowInsertParams {
	var final []byte
	if f.Final != nil {
		final = store.EncodeJSON(f.Final)
	}
	return db.ChangeWorkflowInsertParams{ChangeWorkflowID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: f.Slug,
		DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Stages: store.EncodeJSON(f.Stages), Final: final,
		CustomPrerequisites: store.EncodeJSON(f.CustomPrerequisites)}
}

// Family declares ChangeWorkflows to the entity kit: a ChangeWorkflow lives in a Space and carries no
// Permissions (the role and the Space's grants decide); its content is checked on every write.
var Family = entity.Declare(&entity.Family[db.ChangeWorkflow, ChangeWorkflow, Fields]{
	Type: EntityType, Event: "change_workflow", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.ChangeWorkflow, error) {
		return q.ChangeWorkflowInsert(ctx, insertParams(sc, spaceID, id, f))
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur ChangeWorkflow, f Fields) (*db.ChangeWorkflow, error) {
		p := insertParams(sc, cur.SpaceID, cur.ID, f)
		return q.ChangeWorkflowUpdate(ctx, db.ChangeWorkflowUpdateParams{OrganizationID: p.OrganizationID, ChangeWorkflowID: p.ChangeWorkflowID,
			Version: cur.Version, Slug: p.Slug, DisplayName: p.DisplayName, Labels: p.Labels, Annotations: p.Annotations,
			DeleteGates: p.DeleteGates, Stages: p.Stages, Final: p.Final, CustomPrerequisites: p.CustomPrerequisites})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks them on their own (Spec.Validate).
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Meta = f.Meta.Normalized()
	if err := f.Common.Validate(false); err != nil {
		return f, err
	}
	f.Spec = f.Spec.Normalized()
	return f, f.Spec.Validate()
}

// authzTarget is ChangeWorkflow id of Space spaceID as a permission target: no grants of its own (the
// role and the Space's grants decide), as the kit sees it.
func authzTarget(id, spaceID uuid.UUID) authz.Target {
	return authz.Target{EntityType: EntityType, ID: id.String(), SpaceID: spaceID}
}

// Lookup reads a ChangeWorkflow of the caller's organization, in any Space, that the caller may view, for a
// ChangeOrder to copy its Spec. One of another organization, one the caller may not view, and a random ID
// are all 400 Validation naming ChangeWorkflowID.
func Lookup(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (ChangeWorkflow, error) {
	refused := apierr.NoSuchReference(EntityType, "of your organization", "ChangeWorkflowID")
	row, err := q.ChangeWorkflowGetByID(ctx, db.ChangeWorkflowGetByIDParams{OrganizationID: sc.OrganizationID, ChangeWorkflowID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return ChangeWorkflow{}, refused
	}
	if err != nil {
		return ChangeWorkflow{}, err
	}
	w, err := fromRow(row)
	if err != nil {
		return ChangeWorkflow{}, err
	}
	if !sc.Allows(authz.View, authzTarget(w.ID, w.SpaceID)) {
		return ChangeWorkflow{}, refused
	}
	return w, nil
}

// Existing refuses (400 Validation naming field) unless every one of ids names a ChangeWorkflow of the
// caller's organization, in any Space, that the caller may view; it reads them in one query.
func Existing(ctx context.Context, sc authz.Scope, q *db.Queries, field string, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.ChangeWorkflowSpacesByIDs(ctx, db.ChangeWorkflowSpacesByIDsParams{OrganizationID: sc.OrganizationID, ChangeWorkflowIds: ids})
	if err != nil {
		return err
	}
	found := make(map[uuid.UUID]bool, len(rows))
	for _, r := range rows {
		if sc.Allows(authz.View, authzTarget(r.ChangeWorkflowID, r.SpaceID)) {
			found[r.ChangeWorkflowID] = true
		}
	}
	for _, id := range ids {
		if !found[id] {
			return apierr.NoSuchReference(EntityType, "of your organization", field)
		}
	}
	return nil
}

// CopyOf is the content of ChangeWorkflow id (nil: none) to copy onto a ChangeOrder or a ChangeSet: one of
// the caller's organization, in any Space, that the caller may view (else 400 naming ChangeWorkflowID, as
// for a random ID).
func CopyOf(ctx context.Context, sc authz.Scope, q *db.Queries, id *uuid.UUID) (*Spec, error) {
	if id == nil {
		return nil, nil
	}
	w, err := Lookup(ctx, sc, q, *id)
	if err != nil {
		return nil, err
	}
	spec := w.Spec
	return &spec, nil
}
