// Package link holds the rules of Links: a consumer/producer relation between two Units. The From Unit
// (downstream, which the Link writes into) reads selected values of the To Unit (upstream). A Link lives
// in its From Unit's Space, goes with it and moves with it; the Units it names must be ones the writer may
// view, the writer must be able to edit the From Unit, and Links never form a cycle.
package link

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// EntityType is the Link's type name.
const EntityType = "Link"

// UpdateTypes: what a Link moves from its To Unit into its From Unit.
const (
	// NeedsProvides copies each UpstreamPath's value into its paired DownstreamPath (the default).
	NeedsProvides = "NeedsProvides"
	// UpgradeUnit and MergeUnits merge the whole data of the To Unit (three-way); they take no paths.
	UpgradeUnit = "UpgradeUnit"
	MergeUnits  = "MergeUnits"
	// None is a relation only: nothing propagates.
	None = "None"
)

// UpdateTypes are the supported UpdateTypes; unsupported are known ones not built.
var (
	UpdateTypes = []string{NeedsProvides, UpgradeUnit, MergeUnits, None}
	unsupported = []string{"Insert", "Upsert", "TransformPaths"}
)

// MaxPaths is the most UpstreamPaths (and DownstreamPaths) a Link has.
const MaxPaths = 100

// Link is a stored Link. What propagation keeps (the merged Revision numbers, Stale) and what follows the
// Units (ToSpaceID) are not set by writes.
type Link struct {
	entity.Object
	ToSpaceID                       uuid.UUID
	UpstreamLinkID                  *uuid.UUID
	BackingUnitID                   *uuid.UUID
	Hash                            string
	UpstreamLastMergedRevisionNum   int64
	DownstreamLastMergedRevisionNum int64
	Stale                           bool
	Fields
}

// Fields are what a write sets (JSON tags = wire names, so a merge patch applies to them).
type Fields struct {
	entity.Common
	FromUnitID             uuid.UUID                   `json:"FromUnitID"`
	ToUnitID               uuid.UUID                   `json:"ToUnitID"`
	UpdateType             string                      `json:"UpdateType"`
	AutoUpdate             bool                        `json:"AutoUpdate"`
	UpstreamPaths          []configdata.NamedPath      `json:"UpstreamPaths"`
	DownstreamPaths        []configdata.PathExpression `json:"DownstreamPaths"`
	Bindings               []json.RawMessage           `json:"Bindings"`
	ManualBindings         []json.RawMessage           `json:"ManualBindings"` // not stored: always empty
	DownstreamSetters      []json.RawMessage           `json:"DownstreamSetters"`
	UpstreamGetters        []json.RawMessage           `json:"UpstreamGetters"`
	Clearance              []function.Requirement      `json:"Clearance"`
	Guards                 map[string]string           `json:"Guards"`
	Protect                bool                        `json:"Protect"`
	Squash                 bool                        `json:"Squash"`
	MergeEnableSubtraction bool                        `json:"MergeEnableSubtraction"`
	WhereMutation          string                      `json:"WhereMutation"`
	WhereResource          string                      `json:"WhereResource"`
	TransformInvocationID  *uuid.UUID                  `json:"TransformInvocationID"`
	// ToSpaceID is the To Unit's Space: Check sets it from the To Unit, never the client.
	ToSpaceID uuid.UUID `json:"-"`
}

func (f Fields) normalized() Fields {
	f.Common = f.Common.Normalized()
	if f.UpdateType == "" {
		f.UpdateType = NeedsProvides
	}
	if f.UpstreamPaths == nil {
		f.UpstreamPaths = []configdata.NamedPath{}
	}
	if f.DownstreamPaths == nil {
		f.DownstreamPaths = []configdata.PathExpression{}
	}
	for _, l := range []*[]json.RawMessage{&f.Bindings, &f.ManualBindings, &f.DownstreamSetters, &f.UpstreamGetters} {
		if *l == nil {
			*l = []json.RawMessage{}
		}
	}
	if f.Clearance == nil {
		f.Clearance = []function.Requirement{}
	}
	for i := range f.Clearance {
		if f.Clearance[i].Values == nil {
			f.Clearance[i].Values = []string{}
		}
	}
	if f.Guards == nil {
		f.Guards = map[string]string{}
	}
	return f
}

// notYet is the refusal of the fields Links keep for what is not built yet.
func notYet(field string) error {
	return apierr.Validation(field+" is not supported yet; use UpstreamPaths and DownstreamPaths",
		apierr.Item{Item: field, Description: "not supported yet"})
}

func (f Fields) validate() error {
	if err := f.Common.Validate(true); err != nil {
		return err
	}
	if f.FromUnitID == uuid.Nil {
		return apierr.Validation("FromUnitID is required: the Unit of the Link's Space that it writes into", apierr.Item{Item: "FromUnitID", Description: "missing"})
	}
	if f.ToUnitID == uuid.Nil {
		return apierr.Validation("ToUnitID is required: the Unit the Link reads", apierr.Item{Item: "ToUnitID", Description: "missing"})
	}
	if f.FromUnitID == f.ToUnitID {
		return apierr.Validation("ToUnitID is the From Unit: a Link connects two different Units", apierr.Item{Item: "ToUnitID", Description: "same as FromUnitID"})
	}
	if err := checkUpdateType(f.UpdateType); err != nil {
		return err
	}
	for _, l := range []struct {
		field string
		list  []json.RawMessage
	}{{"Bindings", f.Bindings}, {"ManualBindings", f.ManualBindings}, {"DownstreamSetters", f.DownstreamSetters}, {"UpstreamGetters", f.UpstreamGetters}} {
		if len(l.list) > 0 {
			return notYet(l.field)
		}
	}
	switch {
	case f.TransformInvocationID != nil:
		return notYet("TransformInvocationID")
	case f.WhereMutation != "":
		return notYet("WhereMutation")
	case f.WhereResource != "":
		return notYet("WhereResource")
	}
	if err := function.CheckGuards(f.Guards, f.Clearance, ""); err != nil {
		return err
	}
	return f.checkPaths()
}

func checkUpdateType(t string) error {
	if slices.Contains(UpdateTypes, t) {
		return nil
	}
	why := "is not an UpdateType"
	if slices.Contains(unsupported, t) {
		why = "is not supported"
	}
	return apierr.Validation(fmt.Sprintf("UpdateType %q %s; use one of %s", t, why, strings.Join(UpdateTypes, ", ")),
		apierr.Item{Item: "UpdateType", Description: "not supported"})
}

// checkPaths checks each path on its own, then (NeedsProvides) that they pair: by Name when they have one,
// else by position among the unnamed ones. UpgradeUnit and MergeUnits take the whole data: no paths.
func (f Fields) checkPaths() error {
	if len(f.UpstreamPaths) > MaxPaths || len(f.DownstreamPaths) > MaxPaths {
		field := "UpstreamPaths"
		if len(f.DownstreamPaths) > MaxPaths {
			field = "DownstreamPaths"
		}
		return apierr.Validation(fmt.Sprintf("%s: at most %d paths", field, MaxPaths), apierr.Item{Item: field, Description: "too many"})
	}
	if f.UpdateType == UpgradeUnit || f.UpdateType == MergeUnits {
		field := ""
		switch {
		case len(f.UpstreamPaths) > 0:
			field = "UpstreamPaths"
		case len(f.DownstreamPaths) > 0:
			field = "DownstreamPaths"
		default:
			return nil
		}
		return apierr.Validation(fmt.Sprintf("%s must be empty: a Link of UpdateType %s merges the whole data of its To Unit", field, f.UpdateType),
			apierr.Item{Item: field, Description: "must be empty"})
	}
	up := make([]pathEnd, len(f.UpstreamPaths))
	for i, p := range f.UpstreamPaths {
		up[i] = pathEnd{name: p.Name, path: p.Path}
	}
	down := make([]pathEnd, len(f.DownstreamPaths))
	for i, p := range f.DownstreamPaths {
		down[i] = pathEnd{name: p.Name, path: p.Path}
		if p.ResourceName != "" && p.ResourceType == "" {
			at := fmt.Sprintf("DownstreamPaths.%d.ResourceName", i)
			return apierr.Validation(at+": a ResourceName needs its ResourceType", apierr.Item{Item: at, Description: "needs ResourceType"})
		}
	}
	if err := checkEnds("UpstreamPaths", up); err != nil {
		return err
	}
	if err := checkEnds("DownstreamPaths", down); err != nil {
		return err
	}
	if f.UpdateType != NeedsProvides {
		return nil
	}
	// Propagation pairs them the same way (configdata.PairLinkPaths).
	if _, err := configdata.PairLinkPaths(f.UpstreamPaths, f.DownstreamPaths); err != nil {
		pe := err.(*configdata.PairError)
		return apierr.Validation(pe.Error(), apierr.Item{Item: pe.Field, Description: "unpaired"})
	}
	return nil
}

type pathEnd struct{ name, path string }

// checkEnds checks a list's Paths and that its Names are unique.
func checkEnds(field string, ends []pathEnd) error {
	names := map[string]bool{}
	for i, e := range ends {
		at := fmt.Sprintf("%s.%d", field, i)
		if strings.TrimSpace(e.path) == "" {
			return apierr.Validation(at+".Path is required: the path of the value (keys, list indexes, * and ?Key=value joined by dots)",
				apierr.Item{Item: at + ".Path", Description: "missing"})
		}
		if _, err := function.ParsePath(e.path); err != nil {
			return apierr.Validation(fmt.Sprintf("%s.Path: %s", at, apierr.MessageOf(err)), apierr.Item{Item: at + ".Path", Description: "not a path"})
		}
		if e.name == "" {
			continue
		}
		if names[e.name] {
			return apierr.Validation(fmt.Sprintf("%s.Name: %q names another of %s; Names are unique in each list", at, e.name, field),
				apierr.Item{Item: at + ".Name", Description: "duplicate"})
		}
		names[e.name] = true
	}
	return nil
}

// hash is the lowercase hex SHA-256 of what the Link moves, stored as Hash: the same Link in another
// Space, or with other metadata, has the same Hash.
func hash(f Fields) string {
	moved, _ := json.Marshal(struct {
		From, To               uuid.UUID
		UpdateType             string
		UpstreamPaths          []configdata.NamedPath
		DownstreamPaths        []configdata.PathExpression
		Clearance              []function.Requirement
		Guards                 map[string]string
		Protect                bool
		MergeEnableSubtraction bool
	}{f.FromUnitID, f.ToUnitID, f.UpdateType, f.UpstreamPaths, f.DownstreamPaths, f.Clearance, f.Guards, f.Protect, f.MergeEnableSubtraction})
	sum := sha256.Sum256(moved)
	return hex.EncodeToString(sum[:])
}

// permTarget is the Link as a permission target: its Permissions, reached by its Space's grants too.
func (l Link) permTarget() authz.Target {
	return authz.Target{EntityType: EntityType, ID: l.ID.String(), Grants: l.Permissions, SpaceID: l.SpaceID}
}

func fromRow(r *db.Link) (Link, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	l := Link{
		Object: entity.Object{ID: r.LinkID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		ToSpaceID: r.ToSpaceID, UpstreamLinkID: r.UpstreamLinkID, BackingUnitID: r.BackingUnitID, Hash: r.Hash,
		UpstreamLastMergedRevisionNum: r.UpstreamLastMergedRevisionNum, DownstreamLastMergedRevisionNum: r.DownstreamLastMergedRevisionNum,
		Stale: r.Stale,
		Fields: Fields{Common: c, FromUnitID: r.FromUnitID, ToUnitID: r.ToUnitID, ToSpaceID: r.ToSpaceID, UpdateType: r.UpdateType,
			AutoUpdate: r.AutoUpdate, Protect: r.Protect, Squash: r.Squash, MergeEnableSubtraction: r.MergeEnableSubtraction,
			WhereMutation: r.WhereMutation, WhereResource: r.WhereResource, TransformInvocationID: r.TransformInvocationID},
	}
	if err != nil {
		return l, err
	}
	for _, col := range []struct {
		raw  json.RawMessage
		into any
	}{{r.UpstreamPaths, &l.UpstreamPaths}, {r.DownstreamPaths, &l.DownstreamPaths}, {r.Bindings, &l.Bindings},
		{r.DownstreamSetters, &l.DownstreamSetters}, {r.UpstreamGetters, &l.UpstreamGetters},
		{r.Clearance, &l.Clearance}, {r.Guards, &l.Guards}} {
		if len(col.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(col.raw, col.into); err != nil {
			return l, fmt.Errorf("link %s: decoding a column: %w", r.LinkID, err)
		}
	}
	l.Fields = l.Fields.normalized()
	return l, nil
}

// ListEntity is how Links are listed (indexes: migration 000030).
var ListEntity = listquery.Standard{Table: "link", ID: "LinkID", InSpace: true, Permissions: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Slug", "DisplayName", "UpdateType", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		// What the Link connects and how: select always returns it.
		{Name: "FromUnitID", Type: listquery.UUID, SQL: "link.from_unit_id", Filterable: true, Orderable: true, Always: true},
		{Name: "ToUnitID", Type: listquery.UUID, SQL: "link.to_unit_id", Filterable: true, Orderable: true, Always: true},
		{Name: "UpdateType", Type: listquery.String, SQL: "link.update_type", Filterable: true, Orderable: true, Always: true},
		{Name: "ToSpaceID", Type: listquery.UUID, SQL: "link.to_space_id", Filterable: true, Orderable: true},
		{Name: "UpstreamSpaceID", Type: listquery.UUID, SQL: "link.to_space_id", Filterable: true},
		{Name: "AutoUpdate", Type: listquery.Bool, SQL: "link.auto_update", Filterable: true, Orderable: true},
		{Name: "Protect", Type: listquery.Bool, SQL: "link.protect", Filterable: true, Orderable: true},
		{Name: "Squash", Type: listquery.Bool, SQL: "link.squash", Filterable: true, Orderable: true},
		{Name: "MergeEnableSubtraction", Type: listquery.Bool, SQL: "link.merge_enable_subtraction", Filterable: true, Orderable: true},
		{Name: "Stale", Type: listquery.Bool, SQL: "link.stale", Filterable: true, Orderable: true},
		{Name: "Hash", Type: listquery.String, SQL: "link.hash", Filterable: true, Orderable: true},
		{Name: "UpstreamLastMergedRevisionNum", Type: listquery.Int, SQL: "link.upstream_last_merged_revision_num", Filterable: true, Orderable: true},
		{Name: "DownstreamLastMergedRevisionNum", Type: listquery.Int, SQL: "link.downstream_last_merged_revision_num", Filterable: true, Orderable: true},
		{Name: "WhereMutation", Type: listquery.String, SQL: "link.where_mutation", Filterable: true},
		{Name: "WhereResource", Type: listquery.String, SQL: "link.where_resource", Filterable: true},
		listquery.NullableUUID("TransformInvocationID", "link.transform_invocation_id"),
		listquery.NullableUUID("UpstreamLinkID", "link.upstream_link_id"),
		listquery.NullableUUID("BackingUnitID", "link.backing_unit_id"),
		{Name: "Guards", Type: listquery.StringMap, SQL: "link.guards", Filterable: true},
		{Name: "UpstreamPaths", Type: listquery.Opaque}, {Name: "DownstreamPaths", Type: listquery.Opaque},
		{Name: "Bindings", Type: listquery.Opaque}, {Name: "ManualBindings", Type: listquery.Opaque},
		{Name: "DownstreamSetters", Type: listquery.Opaque}, {Name: "UpstreamGetters", Type: listquery.Opaque},
		{Name: "Clearance", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{
		{Name: "FromUnitID", Field: "FromUnit", Type: unit.EntityType},
		{Name: "ToUnitID", Field: "ToUnit", Type: unit.EntityType},
		{Name: "ToSpaceID", Field: "ToSpace", Type: space.EntityType},
		// Transforms are not supported yet: TransformInvocationID is always null.
		{Name: "TransformInvocationID", Field: "TransformInvocation", Type: "Invocation", Unserved: true},
	},
})

func rowParams(f Fields) db.LinkInsertParams {
	return db.LinkInsertParams{Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		FromUnitID: f.FromUnitID, ToUnitID: f.ToUnitID, ToSpaceID: f.ToSpaceID, AutoUpdate: f.AutoUpdate, UpdateType: f.UpdateType,
		UpstreamPaths: store.EncodeJSON(f.UpstreamPaths), DownstreamPaths: store.EncodeJSON(f.DownstreamPaths),
		Bindings: store.EncodeJSON(f.Bindings), DownstreamSetters: store.EncodeJSON(f.DownstreamSetters),
		UpstreamGetters: store.EncodeJSON(f.UpstreamGetters), Clearance: store.EncodeJSON(f.Clearance), Guards: store.EncodeJSON(f.Guards),
		Protect: f.Protect, Squash: f.Squash, MergeEnableSubtraction: f.MergeEnableSubtraction, WhereMutation: f.WhereMutation,
		WhereResource: f.WhereResource, TransformInvocationID: f.TransformInvocationID, Hash: hash(f)}
}

// Family declares Links to the entity kit: a Link lives in its From Unit's Space and carries Permissions;
// writing one needs Edit on its From Unit, and its Units are checked (and the graph kept acyclic) in the
// write's transaction.
var Family = entity.Declare(&entity.Family[db.Link, Link, Fields]{
	Type: EntityType, Event: "link", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Link, error) {
		p := rowParams(f)
		p.LinkID, p.OrganizationID, p.SpaceID = id, sc.OrganizationID, spaceID
		return q.LinkInsert(ctx, p)
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Link, f Fields) (*db.Link, error) {
		p := rowParams(f)
		return q.LinkUpdate(ctx, db.LinkUpdateParams{OrganizationID: sc.OrganizationID, LinkID: cur.ID, Version: cur.Version,
			Slug: p.Slug, DisplayName: p.DisplayName, Labels: p.Labels, Annotations: p.Annotations, DeleteGates: p.DeleteGates,
			Permissions: p.Permissions, FromUnitID: p.FromUnitID, ToUnitID: p.ToUnitID, ToSpaceID: p.ToSpaceID,
			AutoUpdate: p.AutoUpdate, UpdateType: p.UpdateType, UpstreamPaths: p.UpstreamPaths, DownstreamPaths: p.DownstreamPaths,
			Bindings: p.Bindings, DownstreamSetters: p.DownstreamSetters, UpstreamGetters: p.UpstreamGetters,
			Clearance: p.Clearance, Guards: p.Guards, Protect: p.Protect, Squash: p.Squash,
			MergeEnableSubtraction: p.MergeEnableSubtraction, WhereMutation: p.WhereMutation, WhereResource: p.WhereResource,
			TransformInvocationID: p.TransformInvocationID, Hash: p.Hash})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize puts the fields in their stored form and checks them on their own.
func (strategy) Normalize(f Fields) (Fields, error) {
	f = f.normalized()
	return f, f.validate()
}

// OnPut: a PUT that leaves UpdateType out keeps it (it cannot change).
func (strategy) OnPut(cur Link, f Fields) Fields { return keepUpdateType(cur, f) }

// OnPatch: a patch that clears UpdateType (null) keeps it.
func (strategy) OnPatch(cur Link, _ json.RawMessage, f Fields) Fields { return keepUpdateType(cur, f) }

func keepUpdateType(cur Link, f Fields) Fields {
	if f.UpdateType == "" {
		f.UpdateType = cur.UpdateType
	}
	return f
}

// Check is what a write needs of the database, after the Link's own permission checks: the Units it
// names (FromUnitID one of the Link's Space, ToUnitID one of the organization, both ones the caller may
// view; the one a write leaves as stored is not checked again), Edit on the From Unit, an unchanged
// UpdateType, and no cycle. Link writes of an organization serialize on one lock, so two writes that
// together would close a cycle cannot both pass.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *Link, f Fields) (Fields, error) {
	if cur != nil && f.UpdateType != cur.UpdateType {
		return f, apierr.Validation(fmt.Sprintf("UpdateType is set when a Link is created and cannot change (it is %s); make a new Link instead", cur.UpdateType),
			apierr.Item{Item: "UpdateType", Description: "cannot change"})
	}
	fromChanged := cur == nil || cur.FromUnitID != f.FromUnitID
	ids := []uuid.UUID{f.FromUnitID, f.ToUnitID}
	if cur != nil && fromChanged {
		ids = append(ids, cur.FromUnitID)
	}
	units, err := unit.Family.Visible(ctx, tx, sc, ids)
	if err != nil {
		return f, err
	}
	if from, ok := units[f.FromUnitID]; fromChanged && (!ok || from.SpaceID != spaceID) {
		return f, apierr.NoSuchReference(unit.EntityType, "in the Link's Space that you may view", "FromUnitID")
	}
	if err := editFrom(sc, units, f.FromUnitID); err != nil {
		return f, err
	}
	if cur != nil && fromChanged {
		// The Link stops writing into its former From Unit: that is a write there too.
		if err := editFrom(sc, units, cur.FromUnitID); err != nil {
			return f, err
		}
	}
	toChanged := cur == nil || cur.ToUnitID != f.ToUnitID
	if !toChanged {
		f.ToSpaceID = cur.ToSpaceID
	} else {
		to, ok := units[f.ToUnitID]
		if !ok {
			return f, apierr.NoSuchReference(unit.EntityType, "of your organization that you may view", "ToUnitID")
		}
		f.ToSpaceID = to.SpaceID
	}
	if !fromChanged && !toChanged {
		return f, nil
	}
	var self uuid.UUID
	if cur != nil {
		self = cur.ID
	}
	return f, checkCycle(ctx, tx, sc, self, f.FromUnitID, f.ToUnitID)
}

// editFrom checks Edit on From Unit id, among the Units the caller may view (units): one it may not view
// is one it may not write into either.
func editFrom(sc authz.Scope, units map[uuid.UUID]unit.Unit, id uuid.UUID) error {
	u, ok := units[id]
	if !ok {
		return apierr.Forbidden("writing a Link needs Edit on its From Unit, which you may not view").WithEntity(unit.EntityType, id.String(), "")
	}
	return authz.Check(sc, authz.Edit, u.Target())
}

// checkCycle refuses a Link from -> to (replacing Link self, when it is not uuid.Nil) when to already
// reaches from through Links: the cycle is named by the Units' Slugs, from first.
func checkCycle(ctx context.Context, tx *store.Tx, sc authz.Scope, self, from, to uuid.UUID) error {
	if err := tx.Q.LinkLockOrganization(ctx, sc.OrganizationID.String()); err != nil {
		return err
	}
	edges, err := tx.Q.LinkReachable(ctx, db.LinkReachableParams{OrganizationID: sc.OrganizationID, StartUnitID: to, ExcludeLinkID: self})
	if err != nil {
		return err
	}
	next := map[uuid.UUID][]uuid.UUID{}
	for _, e := range edges {
		next[e.FromUnitID] = append(next[e.FromUnitID], e.ToUnitID)
	}
	// Breadth first from to: the shortest way back to from.
	prev := map[uuid.UUID]uuid.UUID{to: uuid.Nil}
	queue := []uuid.UUID{to}
	found := false
	for len(queue) > 0 && !found {
		u := queue[0]
		queue = queue[1:]
		for _, n := range next[u] {
			if _, seen := prev[n]; seen {
				continue
			}
			prev[n] = u
			if n == from {
				found = true
				break
			}
			queue = append(queue, n)
		}
	}
	if !found {
		return nil
	}
	path := []uuid.UUID{from}
	for u := prev[from]; u != uuid.Nil; u = prev[u] {
		path = append(path, u)
	}
	path = append(path, from)
	// path is from, ..., to, from backwards from its second element: from -> to -> ... -> from.
	slices.Reverse(path[1 : len(path)-1])
	names, err := unitNames(ctx, tx, sc, path)
	if err != nil {
		return err
	}
	return apierr.Validation(fmt.Sprintf("ToUnitID: the Link would close a cycle of Links: %s; Links must not lead back to their From Unit", strings.Join(names, " → ")),
		apierr.Item{Item: "ToUnitID", Description: "cycle"})
}

// unitNames names Units by Slug; one the caller may not view by its ID (the answer shows nothing more of it).
func unitNames(ctx context.Context, tx *store.Tx, sc authz.Scope, ids []uuid.UUID) ([]string, error) {
	units, err := unit.Family.Visible(ctx, tx, sc, ids)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		if u, ok := units[id]; ok {
			out[i] = u.Slug
		} else {
			out[i] = id.String()
		}
	}
	return out, nil
}

// BeforeDelete: deleting a Link writes into its From Unit (its values stop following), so it needs Edit
// there too.
// Its findings and outstanding conflicts leave the From Unit with it.
func (strategy) BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur Link) error {
	units, err := unit.Family.Visible(ctx, tx, sc, []uuid.UUID{cur.FromUnitID})
	if err != nil {
		return err
	}
	if err := editFrom(sc, units, cur.FromUnitID); err != nil {
		return err
	}
	return tx.Q.UnitForgetLink(ctx, db.UnitForgetLinkParams{OrganizationID: sc.OrganizationID, UnitID: cur.FromUnitID, LinkID: cur.ID.String()})
}

// AfterWrite applies the Link when it is created, when a write changes what it moves (its Hash covers the
// Units, UpdateType, paths, Clearance, Guards, Protect and MergeEnableSubtraction), and when AutoUpdate is
// turned on: its From Unit's data is written in the Link's transaction, so the answer shows where the Link
// then stands.
func (strategy) AfterWrite(ctx context.Context, deps entity.Deps, tx *store.Tx, sc authz.Scope, before *Link, after Link) (Link, error) {
	if before != nil && before.Hash == after.Hash && (before.AutoUpdate || !after.AutoUpdate) {
		return after, nil
	}
	row, err := unit.ApplyLink(ctx, deps, tx, sc, after.ID)
	if err != nil {
		return after, err
	}
	return fromRow(row)
}

// SpaceFor: a copy of a Link lives in its From Unit's Space (a body naming another FromUnitID copies the
// Link for that Unit, in its Space).
func (strategy) SpaceFor(ctx context.Context, tx *store.Tx, sc authz.Scope, f Fields) (uuid.UUID, error) {
	units, err := unit.Family.Visible(ctx, tx, sc, []uuid.UUID{f.FromUnitID})
	if err != nil {
		return uuid.Nil, err
	}
	from, ok := units[f.FromUnitID]
	if !ok {
		return uuid.Nil, apierr.NoSuchReference(unit.EntityType, "of your organization that you may view", "FromUnitID")
	}
	return from.SpaceID, nil
}

// SetUpstream records the Link a copy was made from.
func (strategy) SetUpstream(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*db.Link, error) {
	return q.LinkSetUpstream(ctx, db.LinkSetUpstreamParams{OrganizationID: sc.OrganizationID, LinkID: id, UpstreamLinkID: &upstream})
}

// DocumentSpec: a Link's document leaves its Permissions out and names its Units (FromUnit, ToUnit) by
// Slug, or <Space Slug>/<Slug> in another Space.
func (strategy) DocumentSpec() entity.DocumentSpec {
	return entity.DocumentSpec{Omit: []string{"Permissions"}, Refs: []entity.DocumentRef{unitRef("FromUnitID", "FromUnit"), unitRef("ToUnitID", "ToUnit")}}
}

// unitRef shows a reference to a Unit (field) in documents by name: its Slug in the document's Space, else
// <Space Slug>/<Slug>. One the caller may not view, or in a Space it may not see into, is shown as it is
// stored (its ID): a document names nothing invisible.
func unitRef(field, name string) entity.DocumentRef {
	return entity.DocumentRef{
		Field: field, Name: name,
		Named: func(ctx context.Context, sc authz.Scope, c store.Conn, spaceID, id uuid.UUID) (string, error) {
			found, err := unit.Family.Visible(ctx, c, sc, []uuid.UUID{id})
			if err != nil {
				return "", err
			}
			u, ok := found[id]
			switch {
			case !ok:
				return id.String(), nil
			case u.SpaceID == spaceID:
				return u.Slug, nil
			}
			sp, _, err := space.VisibleParent(ctx, sc, c.Queries(), u.SpaceID)
			if apierr.Is(err, apierr.TypeNotFound) {
				return id.String(), nil
			}
			if err != nil {
				return "", err
			}
			return sp.Slug + "/" + u.Slug, nil
		},
		Resolve: func(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, name string) (uuid.UUID, error) {
			u, err := space.Named(ctx, sc, c, unit.Family, spaceID, name)
			return u.ID, err
		},
	}
}
