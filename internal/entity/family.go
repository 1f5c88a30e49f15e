package entity

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// Family declares an entity family to the kit: its names, how it is listed, and typed functions over its
// sqlc rows. Service then provides every operation the families share (get, list, create with
// allow_exists, update with a Version check, merge patch, delete with DeleteGates, bulk patch and delete,
// load by IDs for includes) the same way for all of them. A family writes only what is its own: the
// queries, the row conversion, and the rules of its fields.
//
// R is the sqlc row type (what the family's queries and its list return), E the domain entity, F the
// fields a write sets (their JSON tags are the wire names, so a merge patch applies to them).
type Family[R, E, F any] struct {
	// Type is the entity type name (Tag); Event names its events (tag.created, tag.updated, tag.deleted).
	Type, Event string
	// Listing is how the family is listed (its Name is Type).
	Listing *listquery.Entity
	// Parent loads the Space a Space-resident family lives in (space.Of); nil for families of the
	// organization. SpaceColumn is the list column a list of one Space is scoped by (tag.space_id).
	Parent      ParentFunc
	SpaceColumn string
	// CheckCreate, optional, replaces the CreateChildren check of a create on the Space (or the
	// organization) it is made in: an Organization, which any member may create, is not made in theirs.
	CheckCreate func(sc authz.Scope, in authz.Target) error
	// WriteNeeds, optional, is an organization permission every write needs beyond the entity's own
	// (Groups: ManageMembers, since membership changes what members may do).
	WriteNeeds authz.Permission

	// Row access: each one generated query. A missing row is the anonymous NotFound the queries return.
	ReadRow    func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, lock bool) (*R, error)
	ReadBySlug func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID uuid.UUID, slug string) (*R, error)
	// ReadByIDs, optional, reads the rows among ids of the organization (any Space), for includes.
	ReadByIDs func(ctx context.Context, q *db.Queries, sc authz.Scope, ids []uuid.UUID) ([]*R, error)
	InsertRow func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f F) (*R, error)
	UpdateRow func(ctx context.Context, q *db.Queries, sc authz.Scope, cur E, f F) (*R, error)
	DeleteRow func(ctx context.Context, q *db.Queries, sc authz.Scope, cur E) (int64, error)
	FromRow   func(*R) (E, error)
	// MoveRow, for families that move between Spaces (POST /<family>/move), puts cur in Space toSpaceID
	// with a new Version; SetUpstream, optional, records on a copy (clone) the entity it was copied from.
	MoveRow     func(ctx context.Context, q *db.Queries, sc authz.Scope, cur E, toSpaceID uuid.UUID) (*R, error)
	SetUpstream func(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*R, error)

	// Accessors of the entity and its fields.
	Ident  func(E) Ident
	Fields func(E) F
	Slug   func(F) string
	Target func(E) authz.Target
	// Grants returns the Permissions a write sets; nil when the family has none.
	Grants func(F) authz.Grants

	// Normalize puts fields into their one stored form and validates them on their own (no database).
	Normalize func(F) (F, error)
	// Check, optional, validates what needs the database (references to other entities) and resolves
	// what the database decides (a Channel's bookmark at the log's tail), in the write's transaction,
	// after the permission checks; spaceID is the Space the entity lives or is created in (uuid.Nil for
	// families of the organization), cur is nil on create.
	Check func(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *E, f F) (F, error)
	// OnPut, optional, keeps what a PUT does not replace (a Channel's bookmark, which polls move without a
	// new Version); OnPatch, optional, reads what a merge patch of cur means beyond the merge (null bookmark: the
	// tail).
	OnPut   func(cur E, f F) F
	OnPatch func(cur E, patch json.RawMessage, f F) F
	// Enrich, optional, adds to entities read or written what is not in their row (a Channel's lease), in
	// one query for a page.
	Enrich func(ctx context.Context, q *db.Queries, items []E) error
	// AfterWrite, optional, does what a create or an update entails once the row is written (a
	// BridgeWorker's Secret, issued with it) and may add to the result what is not stored; before is nil
	// on create. It runs in the write's transaction, before the event.
	AfterWrite func(ctx context.Context, tx *store.Tx, sc authz.Scope, before *E, after E) (E, error)
	// BeforeDelete, optional, runs after the Delete and DeleteGates checks and before the row goes: it
	// checks what removing the entity needs beyond Delete (a bot's role reach, ManageOrganization) and
	// undoes what references it (a Tag comes off every Revision).
	BeforeDelete func(ctx context.Context, tx *store.Tx, sc authz.Scope, cur E) error
	// AdjustEvent, optional, adds to a change event what the family's events carry beyond the common
	// payload (a Target's events name the Target in TargetID).
	AdjustEvent func(E, event.Event) event.Event
	// DocumentSpec, for families with document endpoints, says what their documents leave out and name.
	DocumentSpec DocumentSpec
}

// Resolver finds an entity of the caller's organization by ID or Slug (in spaceID when its family lives
// in Spaces) and returns its ID: NotFound when there is none or the caller may not view it. It is how one
// family names another's entities without reading its tables.
type Resolver func(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, ref string) (uuid.UUID, error)

// Resolvers are the Resolvers of families, by entity type.
type Resolvers map[string]Resolver

// IDOf is the family's Resolver.
func (f *Family[R, E, F]) IDOf(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, ref string) (uuid.UUID, error) {
	e, err := f.Resolve(ctx, sc, q, spaceID, ref, false)
	if err != nil {
		return uuid.Nil, err
	}
	return f.Ident(e).ID, nil
}

// Ident is what the kit reads of every entity.
type Ident struct {
	ID          uuid.UUID
	SpaceID     uuid.UUID // uuid.Nil for families of the organization
	Slug        string
	Version     int64
	DeleteGates map[string]bool
}

// Parent is the Space an entity lives in: its reference for events, and its permission target for
// what is created in it (CreateChildren, Manage).
type Parent struct {
	Ref    SpaceRef
	Target authz.Target
}

// ParentFunc loads a Space of the caller's organization, NotFound when there is none.
type ParentFunc func(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID) (Parent, error)

// WriteOptions are the query parameters every write takes.
type WriteOptions struct {
	DryRun      bool
	AllowExists bool
}

// Deps are what every family's Service is served with.
type Deps struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
	// Grantees resolve what Permissions grant to, through the families that own them.
	Grantees Grantees
}

// Service carries out a family's operations.
type Service[R, E, F any] struct {
	*Family[R, E, F]
	Deps
}

// NewService serves a family.
func NewService[R, E, F any](fam *Family[R, E, F], deps Deps) *Service[R, E, F] {
	return &Service[R, E, F]{Family: fam, Deps: deps}
}

// parent loads the Space of a Space-resident family (nil for families of the organization).
func (f *Family[R, E, F]) parent(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID) (*Parent, error) {
	if f.Parent == nil {
		return nil, nil
	}
	p, err := f.Parent(ctx, sc, q, spaceID)
	return &p, err
}

// visibleParent is parent for what a caller reads or creates inside a Space: one it may not see into
// (View or ViewChildren) is NotFound.
func (f *Family[R, E, F]) visibleParent(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID) (*Parent, error) {
	p, err := f.parent(ctx, sc, q, spaceID)
	if err == nil && p != nil && !authz.ViewsInside(sc, p.Target) {
		return nil, apierr.NotFound(p.Target.EntityType, spaceID.String())
	}
	return p, err
}

// Resolve reads an entity named by ID or Slug (lock: FOR UPDATE); a missing one is NotFound, of its
// Space first when that is what is missing, and so is one the caller may not view.
func (f *Family[R, E, F]) Resolve(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, ref string, lock bool) (E, error) {
	_, e, err := f.ResolveRow(ctx, sc, q, spaceID, ref, lock)
	return e, err
}

// ResolveRow is Resolve that also returns the row read, for what the family keeps beyond its entity (a
// Unit's parsed data).
func (f *Family[R, E, F]) ResolveRow(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, ref string, lock bool) (*R, E, error) {
	var zero E
	var row *R
	id, perr := uuid.Parse(ref)
	var err error
	if perr == nil {
		row, err = f.ReadRow(ctx, q, sc, spaceID, id, lock)
	} else if row, err = f.ReadBySlug(ctx, q, sc, spaceID, ref); err == nil && lock {
		var e E
		if e, err = f.FromRow(row); err != nil {
			return nil, zero, err
		}
		row, err = f.ReadRow(ctx, q, sc, spaceID, f.Ident(e).ID, true)
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		if _, perr := f.parent(ctx, sc, q, spaceID); perr != nil {
			return nil, zero, perr
		}
		err = apierr.NotFoundAs(err, f.Type, ref)
	}
	if err != nil {
		return nil, zero, err
	}
	e, err := f.FromRow(row)
	if err != nil {
		return nil, zero, err
	}
	return row, e, authz.Viewable(sc, f.Target(e), ref)
}

// afterWrite applies AfterWrite, when the family has it.
func (f *Family[R, E, F]) afterWrite(ctx context.Context, tx *store.Tx, sc authz.Scope, before *E, after E) (E, error) {
	if f.AfterWrite == nil {
		return after, nil
	}
	return f.AfterWrite(ctx, tx, sc, before, after)
}

// checkWriteNeeds refuses a write without the family's WriteNeeds on the organization.
func (f *Family[R, E, F]) checkWriteNeeds(sc authz.Scope) error {
	if f.WriteNeeds == "" {
		return nil
	}
	return authz.Check(sc, f.WriteNeeds, authz.OrganizationTarget(sc.OrganizationID))
}

// enrich applies Enrich to the entities, when the family has it.
func (f *Family[R, E, F]) enrich(ctx context.Context, q *db.Queries, items ...E) ([]E, error) {
	if f.Enrich == nil {
		return items, nil
	}
	return items, f.Enrich(ctx, q, items)
}

// enrichOne is enrich of one entity.
func (f *Family[R, E, F]) enrichOne(ctx context.Context, q *db.Queries, e E) (E, error) {
	items, err := f.enrich(ctx, q, e)
	return items[0], err
}

// event is the change event of e, in the Scope's organization and the Space it lives in.
func (f *Family[R, E, F]) event(sc authz.Scope, e E, c Change, p *Parent) event.Event {
	id := f.Ident(e)
	var space *SpaceRef
	if p != nil {
		space = &p.Ref
	}
	ev := ChangeEvent(f.Event, f.Type, c, sc.OrganizationID, id.ID, id.Slug, id.Version, space)
	if f.AdjustEvent != nil {
		ev = f.AdjustEvent(e, ev)
	}
	return ev
}

// Get returns one entity the caller may view, named by ID or Slug.
func (s *Service[R, E, F]) Get(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string) (E, error) {
	e, err := s.Resolve(ctx, sc, s.Store.Q(), spaceID, ref, false)
	if err != nil {
		return e, err
	}
	return s.enrichOne(ctx, s.Store.Q(), e)
}

// List returns a page of the family's entities (of one Space when spaceID is set) the caller may view:
// the list's SQL keeps to them (listquery), so pages are full.
// Conditions, optional, restrict the list further (constant columns, bound values).
func (s *Service[R, E, F]) List(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params, conditions ...listquery.Condition) (listquery.Page[E], error) {
	q := listquery.Query{Entity: s.Listing, Caller: sc, Path: path, Params: params, Scope: conditions}
	if spaceID != nil {
		if _, err := s.visibleParent(ctx, sc, s.Store.Q(), *spaceID); err != nil {
			return listquery.Page[E]{}, err
		}
		q.Scope = append(q.Scope, listquery.Condition{Column: s.SpaceColumn, Value: *spaceID})
	}
	page, err := listquery.Run[R](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[E]{}, err
	}
	out, err := listquery.MapPage(page, s.FromRow)
	if err != nil {
		return out, err
	}
	out.Items, err = s.enrich(ctx, s.Store.Q(), out.Items...)
	return out, err
}

// LoadByIDs returns, in one query, the entities among ids the caller may view (for includes).
func (s *Service[R, E, F]) LoadByIDs(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]E, error) {
	return s.Visible(ctx, s.Store.Q(), sc, ids)
}

// Visible returns, in one query of q, the entities among ids of the caller's organization that it may
// view: how another family checks its references to this one in its write's transaction.
func (f *Family[R, E, F]) Visible(ctx context.Context, q *db.Queries, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]E, error) {
	out := map[uuid.UUID]E{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := f.ReadByIDs(ctx, q, sc, ids)
	if err != nil {
		return nil, err
	}
	var visible []E
	for _, r := range rows {
		e, err := f.FromRow(r)
		if err != nil {
			return nil, err
		}
		if sc.Allows(authz.View, f.Target(e)) {
			visible = append(visible, e)
		}
	}
	if len(visible) == 0 {
		return out, nil
	}
	visible, err = f.enrich(ctx, q, visible...)
	for _, e := range visible {
		out[f.Ident(e).ID] = e
	}
	return out, err
}

// Create makes an entity (in a Space for Space-resident families). With AllowExists, an entity of the
// same Slug is returned instead, as a concurrent create of the same Slug is.
func (s *Service[R, E, F]) Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f F, opts WriteOptions) (E, error) {
	var out E
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		var err error
		out, _, err = s.create(ctx, sc, tx, spaceID, f, opts.AllowExists)
		return err
	})
	if err != nil {
		return out, err
	}
	return s.enrichOne(ctx, s.Store.Q(), out)
}

// create is one create in tx; created is false when allowExists handed back an existing entity.
func (s *Service[R, E, F]) create(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, f F, allowExists bool) (out E, created bool, err error) {
	if f, err = s.Normalize(f); err != nil {
		return out, false, err
	}
	p, err := s.visibleParent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return out, false, err
	}
	createIn := authz.OrganizationTarget(sc.OrganizationID)
	if p != nil {
		createIn = p.Target
	}
	checkCreate := s.CheckCreate
	if checkCreate == nil {
		checkCreate = func(sc authz.Scope, in authz.Target) error { return authz.Check(sc, authz.CreateChildren, in) }
	}
	if err := checkCreate(sc, createIn); err != nil {
		return out, false, err
	}
	if err := s.checkWriteNeeds(sc); err != nil {
		return out, false, err
	}
	if s.Grants != nil && len(s.Grants(f)) > 0 {
		if err := authz.Check(sc, authz.Manage, createIn); err != nil {
			return out, false, err
		}
		if err := s.Grantees.Check(ctx, sc, tx.Q, "Permissions", nil, s.Grants(f)); err != nil {
			return out, false, err
		}
	}
	// existing hands back the entity of the same Slug (allow_exists), if the caller may view it.
	existing := func(row *R) (E, bool, error) {
		e, err := s.FromRow(row)
		if err != nil {
			return e, false, err
		}
		return e, false, authz.Check(sc, authz.View, s.Target(e))
	}
	var row *R
	if allowExists {
		var err error
		row, err = s.ReadBySlug(ctx, tx.Q, sc, spaceID, s.Slug(f))
		switch {
		case err == nil:
			return existing(row)
		case !apierr.Is(err, apierr.TypeNotFound):
			return out, false, err
		}
	}
	if s.Check != nil {
		if f, err = s.Check(ctx, tx, sc, spaceID, nil, f); err != nil {
			return out, false, err
		}
	}
	insert := func(tx *store.Tx) error {
		var err error
		row, err = s.InsertRow(ctx, tx.Q, sc, spaceID, uuid.New(), f)
		return err
	}
	if allowExists {
		// A concurrent create of the same Slug may commit first: the savepoint keeps the transaction
		// usable to read the winner.
		err = tx.Savepoint(ctx, insert)
	} else {
		// The Slug's uniqueness is the insert's to find out: one round trip fewer than looking first.
		err = insert(tx)
	}
	if apierr.Is(err, apierr.TypeAlreadyExists) {
		if !allowExists {
			return out, false, apierr.AlreadyExists(s.Type, s.Slug(f))
		}
		if row, err = s.ReadBySlug(ctx, tx.Q, sc, spaceID, s.Slug(f)); err != nil {
			if apierr.Is(err, apierr.TypeNotFound) { // the winner is not one the caller may read
				return out, false, apierr.AlreadyExists(s.Type, s.Slug(f))
			}
			return out, false, err
		}
		return existing(row)
	}
	if err != nil {
		return out, false, err
	}
	if out, err = s.FromRow(row); err != nil {
		return out, false, err
	}
	if out, err = s.afterWrite(ctx, tx, sc, nil, out); err != nil {
		return out, false, err
	}
	tx.Emit(s.event(sc, out, Created, p))
	return out, true, nil
}

// change computes the Version a write was prepared against (nil: none sent) and the fields it sets.
type change[E, F any] func(cur E) (*int64, F, error)

// Update replaces an entity's fields (named by ID or Slug); version must be the stored one.
func (s *Service[R, E, F]) Update(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, version int64, f F, dryRun bool) (E, error) {
	if err := RequireVersion(version); err != nil {
		var zero E
		return zero, err
	}
	return s.write(ctx, sc, spaceID, ref, dryRun, func(cur E) (*int64, F, error) {
		if s.OnPut != nil {
			f = s.OnPut(cur, f)
		}
		return &version, f, nil
	})
}

// Patch applies an RFC 7386 merge patch to an entity's fields (Version checked when the patch has one).
func (s *Service[R, E, F]) Patch(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, patch json.RawMessage, dryRun bool) (E, error) {
	return s.write(ctx, sc, spaceID, ref, dryRun, s.mergePatch(patch))
}

// PatchIn applies a merge patch in tx as one part of a larger write of the family (a Unit's patch with
// restore), which emits the one event of the whole write: PatchIn emits none.
func (s *Service[R, E, F]) PatchIn(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, ref string, patch json.RawMessage) (E, error) {
	return s.update(ctx, sc, tx, spaceID, ref, s.mergePatch(patch), false)
}

func (s *Service[R, E, F]) mergePatch(patch json.RawMessage) change[E, F] {
	return func(cur E) (*int64, F, error) {
		var f F
		version, err := SentVersion(patch)
		if err != nil {
			return nil, f, err
		}
		merged, err := MergePatch(s.Fields(cur), patch)
		if err != nil {
			return nil, f, err
		}
		if err := json.Unmarshal(merged, &f); err != nil {
			return nil, f, apierr.UserInput(fmt.Sprintf("the patched %s is not valid: %v", s.Type, err))
		}
		if s.OnPatch != nil {
			f = s.OnPatch(cur, patch, f)
		}
		return version, f, nil
	}
}

func (s *Service[R, E, F]) write(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool, ch change[E, F]) (E, error) {
	var out E
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var err error
		out, err = s.update(ctx, sc, tx, spaceID, ref, ch, true)
		return err
	})
	if err != nil {
		return out, err
	}
	return s.enrichOne(ctx, s.Store.Q(), out)
}

// update is one write in tx: read and lock, Edit, the new fields, Manage when Permissions change, the
// Version, the family's checks, the row, and (emit) the event.
func (s *Service[R, E, F]) update(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, ref string, ch change[E, F], emit bool) (E, error) {
	cur, err := s.Resolve(ctx, sc, tx.Q, spaceID, ref, true)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Edit, s.Target(cur)); err != nil {
		return cur, err
	}
	if err := s.checkWriteNeeds(sc); err != nil {
		return cur, err
	}
	version, f, err := ch(cur)
	if err != nil {
		return cur, err
	}
	if f, err = s.Normalize(f); err != nil {
		return cur, err
	}
	if s.Grants != nil {
		before, after := s.Grants(s.Fields(cur)), s.Grants(f)
		if !before.Equal(after) {
			if err := authz.Check(sc, authz.Manage, s.Target(cur)); err != nil {
				return cur, err
			}
			if err := s.Grantees.Check(ctx, sc, tx.Q, "Permissions", before, after); err != nil {
				return cur, err
			}
		}
	}
	if err := CheckVersion(s.Type, s.Ident(cur).ID, version, s.Ident(cur).Version); err != nil {
		return cur, err
	}
	if s.Check != nil {
		if f, err = s.Check(ctx, tx, sc, spaceID, &cur, f); err != nil {
			return cur, err
		}
	}
	row, err := s.UpdateRow(ctx, tx.Q, sc, cur, f)
	if err != nil {
		return cur, SlugClash(err, s.Type, s.Slug(f))
	}
	out, err := s.FromRow(row)
	if err != nil {
		return out, err
	}
	if out, err = s.afterWrite(ctx, tx, sc, &cur, out); err != nil {
		return out, err
	}
	if !emit {
		return out, nil
	}
	p, err := s.parent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return out, err
	}
	tx.Emit(s.event(sc, out, Updated, p))
	return out, nil
}

// Delete removes an entity; refused while it has DeleteGates or other entities still reference it.
func (s *Service[R, E, F]) Delete(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		_, err := s.remove(ctx, sc, tx, spaceID, ref)
		return err
	})
}

func (s *Service[R, E, F]) remove(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, ref string) (E, error) {
	cur, err := s.Resolve(ctx, sc, tx.Q, spaceID, ref, true)
	if err != nil {
		return cur, err
	}
	id := s.Ident(cur).ID
	if err := authz.Check(sc, authz.Delete, s.Target(cur)); err != nil {
		return cur, err
	}
	if err := s.checkWriteNeeds(sc); err != nil {
		return cur, err
	}
	ident := s.Ident(cur)
	if err := CheckDeleteGates(s.Type, id, ident.Slug, ident.DeleteGates); err != nil {
		return cur, err
	}
	if s.BeforeDelete != nil {
		if err := s.BeforeDelete(ctx, tx, sc, cur); err != nil {
			return cur, err
		}
	}
	n, err := s.DeleteRow(ctx, tx.Q, sc, cur)
	if err != nil {
		return cur, store.TranslateDelete(err, s.Type, id.String())
	}
	if n == 0 {
		return cur, apierr.NotFound(s.Type, id.String())
	}
	p, err := s.parent(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return cur, err
	}
	tx.Emit(s.event(sc, cur, Deleted, p))
	return cur, nil
}

// BulkPatch applies one merge patch to every entity the selection picks, each in its own savepoint.
func (s *Service[R, E, F]) BulkPatch(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, dryRun bool) ([]BulkItem[E], error) {
	return RunBulk(ctx, s.Store, s.Type, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref Ref) (E, error) {
		e, err := s.update(ctx, sc, tx, ref.SpaceID, ref.ID.String(), s.mergePatch(patch), true)
		if err != nil {
			return e, err
		}
		return s.enrichOne(ctx, tx.Q, e)
	})
}

// BulkDelete deletes every entity the selection picks.
func (s *Service[R, E, F]) BulkDelete(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, dryRun bool) ([]BulkItem[E], error) {
	return RunBulk(ctx, s.Store, s.Type, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref Ref) (E, error) {
		return s.remove(ctx, sc, tx, ref.SpaceID, ref.ID.String())
	})
}

// selector picks a bulk operation's entities with the list's query language (at most MaxBulk).
func (s *Service[R, E, F]) selector(sc authz.Scope, path string, sel listquery.Params) Selector {
	return func(ctx context.Context, tx *store.Tx) ([]Ref, error) {
		limit := MaxBulk
		sel.Limit = &limit
		page, err := listquery.Run[R](ctx, tx, s.Tokens, listquery.Query{Entity: s.Listing, Caller: sc, Path: path, Params: sel})
		if err != nil {
			return nil, err
		}
		if page.Continue != "" {
			return nil, TooManySelected(s.Type)
		}
		refs := make([]Ref, len(page.Items))
		for i := range page.Items {
			e, err := s.FromRow(&page.Items[i])
			if err != nil {
				return nil, err
			}
			id := s.Ident(e)
			refs[i] = Ref{ID: id.ID, SpaceID: id.SpaceID, Slug: id.Slug}
		}
		return refs, nil
	}
}
