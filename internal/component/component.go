// Package component holds the rules of Components: organization-wide sets of Variants, a Variant being a
// Space that names its Component in ComponentID. A Component decides which ChangeWorkflows the promotions
// and releases of its Variants may use (AllowedChangeWorkflowIDs; none listed: any) and whether they must use
// one (ChangeWorkflowRequired). UpstreamComponentID names the Component it follows, never closing a cycle.
//
// A Component created with with_backing_units gets a backing Unit (AppConfig/YAML) holding its document,
// rewritten by every later write of the Component in that write's transaction through the unit package's
// write path (a new Revision only when the content changes). Deleting the Component leaves the Unit.
package component

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeworkflow"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// EntityType is the Component's type name.
const EntityType = "Component"

// MaxWorkflows bounds AllowedChangeWorkflowIDs (the document says the same).
const MaxWorkflows = 100

// BackingUnitPrefix begins the Slug of a Component's backing Unit: component-<Component Slug>.
const BackingUnitPrefix = "component-"

// Component is a stored Component.
type Component struct {
	entity.Object
	Fields
	// BackingUnitID is the Unit holding the Component's document (with_backing_units); nil when none.
	BackingUnitID *uuid.UUID
}

// Fields are what a write sets. Their JSON form (the wire names) is what a merge patch applies to.
type Fields struct {
	entity.Common
	AllowedChangeWorkflowIDs []uuid.UUID `json:"AllowedChangeWorkflowIDs"`
	ChangeWorkflowRequired   bool        `json:"ChangeWorkflowRequired"`
	UpstreamComponentID      *uuid.UUID  `json:"UpstreamComponentID"`
}

// FromRow converts a stored row into a Component.
func FromRow(r *db.Component) (Component, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	if err != nil {
		return Component{}, err
	}
	ids := r.AllowedChangeWorkflowIDs
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return Component{
		Object: entity.Object{ID: r.ComponentID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Common: c, AllowedChangeWorkflowIDs: ids, ChangeWorkflowRequired: r.ChangeWorkflowRequired,
			UpstreamComponentID: r.UpstreamComponentID},
		BackingUnitID: r.BackingUnitID,
	}, nil
}

// ListEntity is how Components are listed (indexes: migration 000046).
var ListEntity = listquery.Standard{Table: "component", ID: "ComponentID", Permissions: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "AllowedChangeWorkflowIDs", Type: listquery.UUIDList, SQL: "component.allowed_change_workflow_ids", Filterable: true},
		{Name: "ChangeWorkflowRequired", Type: listquery.Bool, SQL: "component.change_workflow_required", Filterable: true, Orderable: true},
		listquery.NullableUUID("UpstreamComponentID", "component.upstream_component_id"),
		listquery.NullableUUID("BackingUnitID", "component.backing_unit_id"),
	},
})

func rowParams(f Fields) db.ComponentInsertParams {
	ids := f.AllowedChangeWorkflowIDs
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return db.ComponentInsertParams{Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		AllowedChangeWorkflowIDs: ids, ChangeWorkflowRequired: f.ChangeWorkflowRequired, UpstreamComponentID: f.UpstreamComponentID}
}

// Family declares Components to the entity kit: a family of the organization (creating one needs
// CreateChildren on it) with Permissions. Its events change no memberships or grants: quiet.
var Family = entity.Declare(&entity.Family[db.Component, Component, Fields]{
	Type: EntityType, Event: "component", Listing: ListEntity, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, f Fields) (*db.Component, error) {
		p := rowParams(f)
		p.ComponentID, p.OrganizationID = id, sc.OrganizationID
		return q.ComponentInsert(ctx, p)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Component, f Fields) (*db.Component, error) {
		p := rowParams(f)
		return q.ComponentUpdate(ctx, db.ComponentUpdateParams{OrganizationID: sc.OrganizationID, ComponentID: cur.ID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Labels: p.Labels, Annotations: p.Annotations, DeleteGates: p.DeleteGates,
			Permissions: p.Permissions, AllowedChangeWorkflowIDs: p.AllowedChangeWorkflowIDs,
			ChangeWorkflowRequired: p.ChangeWorkflowRequired, UpstreamComponentID: p.UpstreamComponentID})
	},
	FromRow: FromRow,
})

func init() {
	// Spaces name their Component in ComponentID; Components read Spaces, so Spaces cannot import them.
	space.CheckComponent = checkVariantOf
}

type strategy struct{}

// Normalize puts the fields in their stored form (AllowedChangeWorkflowIDs without repeats, in the order
// given) and checks what needs no database.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = f.Common.Normalized()
	if err := f.Common.Validate(true); err != nil {
		return f, err
	}
	ids := make([]uuid.UUID, 0, len(f.AllowedChangeWorkflowIDs))
	for _, id := range f.AllowedChangeWorkflowIDs {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	f.AllowedChangeWorkflowIDs = ids
	if len(ids) > MaxWorkflows {
		return f, apierr.Validation(fmt.Sprintf("a Component allows at most %d ChangeWorkflows", MaxWorkflows),
			apierr.Item{Item: "AllowedChangeWorkflowIDs", Description: fmt.Sprintf("at most %d", MaxWorkflows)})
	}
	return f, nil
}

// Check checks the references a write sets (what it leaves as stored passes again): the ChangeWorkflows it
// adds to AllowedChangeWorkflowIDs, and a new UpstreamComponentID, which must name a Component of the
// organization the caller may view and must not close a cycle.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Component, f Fields) (Fields, error) {
	var added []uuid.UUID
	for _, id := range f.AllowedChangeWorkflowIDs {
		if cur == nil || !slices.Contains(cur.AllowedChangeWorkflowIDs, id) {
			added = append(added, id)
		}
	}
	if err := changeworkflow.Existing(ctx, sc, tx.Q, "AllowedChangeWorkflowIDs", added); err != nil {
		return f, err
	}
	return f, checkUpstream(ctx, tx, sc, cur, f.UpstreamComponentID)
}

// checkUpstream checks an UpstreamComponentID the write sets (one left as stored passes again): a Component
// of the organization the caller may view (else 400 as for a random ID), and no cycle through it (400
// naming UpstreamComponentID and the cycle by Slugs). Writes that set one serialize per organization, so
// two that would close a cycle together cannot both pass.
func checkUpstream(ctx context.Context, tx *store.Tx, sc authz.Scope, cur *Component, up *uuid.UUID) error {
	if up == nil || (cur != nil && cur.UpstreamComponentID != nil && *cur.UpstreamComponentID == *up) {
		return nil
	}
	if cur != nil && *up == cur.ID {
		return cycle(cur.Slug, cur.Slug)
	}
	found, err := Family.Visible(ctx, tx, sc, []uuid.UUID{*up})
	if err != nil {
		return err
	}
	if _, ok := found[*up]; !ok {
		return apierr.NoSuchReference(EntityType, "of your organization", "UpstreamComponentID")
	}
	if cur == nil {
		return nil // a new Component has nothing downstream of it
	}
	if err := tx.Q.ComponentLockOrganization(ctx, sc.OrganizationID); err != nil {
		return err
	}
	chain, err := tx.Q.ComponentUpstreams(ctx, db.ComponentUpstreamsParams{OrganizationID: sc.OrganizationID, StartID: *up})
	if err != nil {
		return err
	}
	slugs := []string{cur.Slug}
	for _, c := range chain {
		slugs = append(slugs, c.Slug)
		if c.ComponentID == cur.ID {
			return cycle(slugs...)
		}
	}
	return nil
}

func cycle(slugs ...string) error {
	return apierr.Validation(fmt.Sprintf("UpstreamComponentID would make a cycle of upstreams: %s", strings.Join(slugs, " -> ")),
		apierr.Item{Item: "UpstreamComponentID", Description: "makes a cycle"})
}

// checkVariantOf is the Component family's check of a ComponentID a Space write sets (space.CheckComponent):
// a Component of the organization the caller may view, else 400 as for a random ID.
func checkVariantOf(ctx context.Context, tx *store.Tx, sc authz.Scope, id uuid.UUID) error {
	found, err := Family.Visible(ctx, tx, sc, []uuid.UUID{id})
	if err != nil {
		return err
	}
	if _, ok := found[id]; !ok {
		return apierr.NoSuchReference(EntityType, "of your organization", "ComponentID")
	}
	return nil
}

// BeforeDelete refuses to delete a Component that Spaces name (its Variants): 409 naming them. Components
// naming it as their upstream hold it too (the foreign key; 409). Its backing Unit stays.
func (strategy) BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur Component) error {
	variants, err := space.OfComponent(ctx, sc, tx.Q, cur.ID)
	if err != nil || len(variants) == 0 {
		return err
	}
	items := make([]apierr.Item, len(variants))
	slugs := make([]string, len(variants))
	for i, v := range variants {
		items[i] = apierr.Item{Item: "Space " + v.Slug, Description: "a Variant of the Component (ComponentID " + v.SpaceID.String() + ")"}
		slugs[i] = v.Slug
	}
	e := apierr.Conflict("Spaces name Component %s in their ComponentID (%s); clear it there first", cur.Slug, strings.Join(slugs, ", ")).
		WithEntity(EntityType, cur.ID.String(), cur.Slug)
	e.Items = items
	return e
}

// DocumentSpec: documents leave Permissions out and show UpstreamComponentID as UpstreamComponent, by Slug.
func (strategy) DocumentSpec() entity.DocumentSpec {
	return entity.DocumentSpec{Omit: []string{"Permissions"}, Refs: []entity.DocumentRef{DocumentRef("UpstreamComponentID", "UpstreamComponent")}}
}

// DocumentRef shows a reference to a Component (field) in documents by its Slug (name). One the caller may
// not view is shown as it is stored (its ID).
func DocumentRef(field, name string) entity.DocumentRef {
	return entity.DocumentRef{
		Field: field, Name: name,
		Named: func(ctx context.Context, sc authz.Scope, c store.Conn, _, id uuid.UUID) (string, error) {
			found, err := Family.Visible(ctx, c, sc, []uuid.UUID{id})
			if err != nil {
				return "", err
			}
			if comp, ok := found[id]; ok {
				return comp.Slug, nil
			}
			return id.String(), nil
		},
		Resolve: func(ctx context.Context, sc authz.Scope, c store.Conn, _ uuid.UUID, name string) (uuid.UUID, error) {
			return Family.IDOf(ctx, sc, c, uuid.Nil, name)
		},
	}
}

type backingKey struct{}

// WithBackingUnits carries a create's with_backing_units and backing_unit_space to the family's write (the
// Component's AfterWrite makes the backing Unit). backing_unit_space is required with with_backing_units and
// means nothing without it: either alone is 400 naming the other.
func WithBackingUnits(ctx context.Context, with bool, spaceRef string) (context.Context, error) {
	switch {
	case with && spaceRef == "":
		return ctx, apierr.UserInput("with_backing_units needs backing_unit_space: the Space (Slug or ID) to make the backing Units in",
			apierr.Item{Item: "backing_unit_space", Description: "required with with_backing_units"})
	case !with && spaceRef != "":
		return ctx, apierr.UserInput("backing_unit_space is only taken with with_backing_units=true",
			apierr.Item{Item: "with_backing_units", Description: "required with backing_unit_space"})
	case !with:
		return ctx, nil
	}
	return context.WithValue(ctx, backingKey{}, spaceRef), nil
}

// AfterWrite keeps the backing Unit in step: a create with with_backing_units makes one (in the Space
// backing_unit_space names, which the caller must see into and may create Units in; another is 400 naming
// backing_unit_space); every write of a Component that has one rewrites its data (a new Revision only when
// the document changes). The Unit is written without the writer's permission check on it: the Component
// carries the authority of whoever made the Unit with it.
func (strategy) AfterWrite(ctx context.Context, deps entity.Deps, tx *store.Tx, sc authz.Scope, before *Component, after Component) (Component, error) {
	spaceRef, with := ctx.Value(backingKey{}).(string)
	if after.BackingUnitID == nil && (before != nil || !with) {
		return after, nil
	}
	data, err := documentData(ctx, tx, sc, after)
	if err != nil {
		return after, err
	}
	if after.BackingUnitID != nil {
		return after, unit.WriteBacking(ctx, deps, tx, sc, *after.BackingUnitID, data)
	}
	sp, err := space.Family.Resolve(ctx, sc, tx, uuid.Nil, spaceRef, false)
	if apierr.Is(err, apierr.TypeNotFound) {
		return after, apierr.NoSuchReference(space.EntityType, "of your organization", "backing_unit_space")
	}
	if err != nil {
		return after, err
	}
	unitID, err := unit.CreateBacking(ctx, deps, tx, sc, sp.ID, BackingUnitPrefix+after.Slug,
		fmt.Sprintf("The document of Component %s, kept in step with it.", after.Slug), data)
	if err != nil {
		return after, err
	}
	row, err := tx.Q.ComponentSetBackingUnit(ctx, db.ComponentSetBackingUnitParams{OrganizationID: sc.OrganizationID,
		ComponentID: after.ID, BackingUnitID: &unitID})
	if err != nil {
		return after, err
	}
	return FromRow(row)
}

// documentData is the Component's document as its backing Unit holds it: the fields a write sets but
// Permissions, UpstreamComponentID shown as UpstreamComponent (Slug), as YAML with keys in order.
func documentData(ctx context.Context, tx *store.Tx, sc authz.Scope, c Component) ([]byte, error) {
	raw, err := json.Marshal(c.Fields)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	delete(doc, "Permissions")
	delete(doc, "UpstreamComponentID")
	doc["UpstreamComponent"] = nil
	if c.UpstreamComponentID != nil {
		chain, err := tx.Q.ComponentUpstreams(ctx, db.ComponentUpstreamsParams{OrganizationID: sc.OrganizationID, StartID: *c.UpstreamComponentID})
		if err != nil {
			return nil, err
		}
		if len(chain) > 0 {
			doc["UpstreamComponent"] = chain[0].Slug
		}
	}
	return yaml.Marshal(doc)
}

// Policy is what a Variant's Component decides about the ChangeWorkflows of its promotions and releases.
type Policy struct {
	ComponentID uuid.UUID
	Slug        string
	// Allowed are the ChangeWorkflows its promotions and releases may use (empty: any).
	Allowed []uuid.UUID
	// Required says they must use one.
	Required bool
}

// PolicyForSpaces returns, in one query, the Policy of the Component of each of spaceIDs (Spaces of orgID);
// Spaces that are no Variant (or of another organization) are absent. It reads as the system: the caller's
// view of the Component does not change what its Variants may do.
func PolicyForSpaces(ctx context.Context, q *db.Queries, orgID uuid.UUID, spaceIDs []uuid.UUID) (map[uuid.UUID]Policy, error) {
	out := map[uuid.UUID]Policy{}
	if len(spaceIDs) == 0 {
		return out, nil
	}
	rows, err := q.ComponentPolicyForSpaces(ctx, db.ComponentPolicyForSpacesParams{OrganizationID: orgID, SpaceIds: spaceIDs})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		allowed := r.AllowedChangeWorkflowIDs
		if allowed == nil {
			allowed = []uuid.UUID{}
		}
		out[r.SpaceID] = Policy{ComponentID: r.ComponentID, Slug: r.Slug, Allowed: allowed, Required: r.ChangeWorkflowRequired}
	}
	return out, nil
}

// Allows says whether a promotion or a release of a Variant using ChangeWorkflow workflowID (nil: none) keeps
// to the policy, and when not, why (a description naming the Component): a Component that requires a
// ChangeWorkflow refuses none, and a non-empty Allowed refuses a workflow it does not hold.
func (p Policy) Allows(workflowID *uuid.UUID) (bool, string) {
	switch {
	case workflowID == nil && p.Required:
		return false, fmt.Sprintf("a Variant of Component %s, which requires a ChangeWorkflow", p.Slug)
	case workflowID != nil && len(p.Allowed) > 0 && !slices.Contains(p.Allowed, *workflowID):
		return false, fmt.Sprintf("a Variant of Component %s, which does not allow the ChangeOrder's ChangeWorkflow", p.Slug)
	}
	return true, ""
}
