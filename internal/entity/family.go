package entity

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// Family declares an entity family to the kit: its names, how it is listed, where its entities live,
// how its rows are written and read back, and its Strategy. Service then provides every operation the
// families share (get, list, create with allow_exists, update with a Version check, merge patch, delete
// with DeleteGates, bulk patch and delete, copy and move, documents, load by IDs for includes) the same
// way for all of them. A family writes only what is its own: its insert and update queries, the row
// conversion, and the rules of its fields.
//
// R is the sqlc row type (what the family's queries return and its list scans into), E the domain
// entity, which embeds Object and F, and F the fields a write sets, which embed Common (their JSON tags
// are the wire names, so a merge patch applies to them). The kit reads the rows it needs by ID, Slug or
// IDs, and deletes them, through the listing (listquery.Get, GetAll, Delete).
type Family[R any, E Entity, F Fields] struct {
	// Type is the entity type name (Tag); Event names its events (tag.created, tag.updated, tag.deleted).
	Type, Event string
	// Listing is how the family is listed (its Name is Type); the family's entities carry Permissions when
	// it lists them.
	Listing *listquery.Entity
	// Parent loads the Space a Space-resident family lives in (space.Of); nil for families of the
	// organization.
	Parent ParentFunc
	// Quiet says that the family's events never change memberships, roles, Groups or grants on Spaces, so
	// replicas keep what they remember of members when one is numbered (event.Log.QuietFamilies). Leave it
	// unset for a family that changes any of them: other replicas would keep the old permissions.
	Quiet bool

	// InsertRow and UpdateRow are the family's generated queries (UpdateRow: WHERE ... AND version =
	// cur's); FromRow converts what they return, and what the kit reads, into the entity.
	InsertRow func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f F) (*R, error)
	UpdateRow func(ctx context.Context, q *db.Queries, sc authz.Scope, cur E, f F) (*R, error)
	FromRow   func(*R) (E, error)
	// Strategy implements the interfaces of strategy.go the family needs (nil: none).
	Strategy any

	once sync.Once
	h    hooks[R, E, F]
}

// Entity is what the kit asks of a family's entity type: it embeds Object, and its Fields.
type Entity interface {
	ObjectMeta() Object
	CommonFields() Common
}

// Fields is what the kit asks of a family's Fields: they embed Common.
type Fields interface {
	CommonFields() Common
}

// hooks are the family's strategies, found once (Family.hooks); nil ones are absent.
type hooks[R any, E Entity, F Fields] struct {
	normalize       func(F) (F, error)
	authorizeCreate func(sc authz.Scope, in authz.Target) error
	writeNeeds      authz.Permission
	check           func(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *E, f F) (F, error)
	onPut           func(cur E, f F) F
	onPatch         func(cur E, patch json.RawMessage, f F) F
	enrich          func(ctx context.Context, q *db.Queries, items []E) error
	afterWrite      func(ctx context.Context, deps Deps, tx *store.Tx, sc authz.Scope, before *E, after E) (E, error)
	beforeDelete    func(ctx context.Context, tx *store.Tx, sc authz.Scope, cur E) error
	adjustEvent     func(E, event.Event) event.Event
	moveRow         func(ctx context.Context, q *db.Queries, sc authz.Scope, cur E, toSpaceID uuid.UUID) (*R, error)
	setUpstream     func(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*R, error)
	spaceFor        func(ctx context.Context, tx *store.Tx, sc authz.Scope, f F) (uuid.UUID, error)
	document        DocumentSpec
	rows            RowReader[R]
	deleteRow       func(ctx context.Context, q *db.Queries, sc authz.Scope, cur E) (int64, error)
	// spaceColumn scopes reads and lists to a Space (Space-resident families); withPermissions says
	// whether the family's entities carry Permissions; targeted whether they name their own permission
	// target; fields finds F in E.
	spaceColumn     string
	withPermissions bool
	targeted        bool
	fields          []int
}

// hooks finds the family's strategies, once.
func (f *Family[R, E, F]) hooks() *hooks[R, E, F] {
	f.once.Do(f.resolve)
	return &f.h
}

func (f *Family[R, E, F]) resolve() {
	h := &f.h
	h.withPermissions = f.Listing.Attr("Permissions") != nil
	if sp := f.Listing.Attr("SpaceID"); f.Parent != nil && sp != nil {
		h.spaceColumn = sp.SQL
	}
	var zero E
	_, h.targeted = any(zero).(Targeted)
	if t := reflect.TypeFor[E](); t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			if fld := t.Field(i); fld.Anonymous && fld.Type == reflect.TypeFor[F]() {
				h.fields = fld.Index
			}
		}
	}
	if h.fields == nil {
		panic("entity: the " + f.Type + " entity type does not embed its Fields")
	}
	st := f.Strategy // a nil Strategy implements none
	if s, ok := st.(Normalizer[F]); ok {
		h.normalize = s.Normalize
	}
	if s, ok := st.(CreateAuthorizer); ok {
		h.authorizeCreate = s.AuthorizeCreate
	}
	if s, ok := st.(WriteGuard); ok {
		h.writeNeeds = s.WriteNeeds()
	}
	if s, ok := st.(Checker[E, F]); ok {
		h.check = s.Check
	}
	if s, ok := st.(PutRule[E, F]); ok {
		h.onPut = s.OnPut
	}
	if s, ok := st.(PatchRule[E, F]); ok {
		h.onPatch = s.OnPatch
	}
	if s, ok := st.(Enricher[E]); ok {
		h.enrich = s.Enrich
	}
	if s, ok := st.(AfterWriter[E]); ok {
		h.afterWrite = s.AfterWrite
	}
	if s, ok := st.(DeleteChecker[E]); ok {
		h.beforeDelete = s.BeforeDelete
	}
	if s, ok := st.(EventAdjuster[E]); ok {
		h.adjustEvent = s.AdjustEvent
	}
	if s, ok := st.(Mover[R, E]); ok {
		h.moveRow = s.MoveRow
	}
	if s, ok := st.(Placer[F]); ok {
		h.spaceFor = s.SpaceFor
	}
	if s, ok := st.(Copier[R]); ok {
		h.setUpstream = s.SetUpstream
	}
	if s, ok := st.(Documented); ok {
		h.document = s.DocumentSpec()
	}
	if s, ok := st.(RowReader[R]); ok {
		h.rows = s
	}
	if s, ok := st.(RowDeleter[E]); ok {
		h.deleteRow = s.DeleteRow
	}
}

// fieldsOf is the Fields an entity embeds.
func (f *Family[R, E, F]) fieldsOf(e E) F {
	return reflect.ValueOf(e).FieldByIndex(f.hooks().fields).Interface().(F)
}

// grantsOf is the Permissions a write sets; nil when the family has none.
func (f *Family[R, E, F]) grantsOf(fields F) authz.Grants {
	if !f.hooks().withPermissions {
		return nil
	}
	return fields.CommonFields().Permissions
}

// target is the entity as a permission target: its own (Targeted), or that of its type, ID, Space and
// Permissions.
func (f *Family[R, E, F]) target(e E) authz.Target {
	h := f.hooks()
	if h.targeted {
		return any(e).(Targeted).Target()
	}
	o := e.ObjectMeta()
	t := authz.Target{EntityType: f.Type, ID: o.ID.String(), SpaceID: o.SpaceID}
	if h.withPermissions {
		t.Grants = e.CommonFields().Permissions
	}
	return t
}

// normalize applies the family's Normalizer, or normalizes and validates the Common fields.
func (f *Family[R, E, F]) normalize(fields F) (F, error) {
	h := f.hooks()
	if h.normalize != nil {
		return h.normalize(fields)
	}
	c := any(&fields).(interface{ common() *Common }).common()
	*c = c.Normalized()
	if !h.withPermissions {
		c.Permissions = nil
	}
	return fields, c.Validate(h.withPermissions)
}

// scope restricts reads of the family to spaceID when it lives in Spaces.
func (f *Family[R, E, F]) scope(spaceID uuid.UUID) []listquery.Condition {
	if col := f.hooks().spaceColumn; col != "" {
		return []listquery.Condition{{Column: col, Value: spaceID}}
	}
	return nil
}

// readRow reads an entity's row by ID (lock: FOR UPDATE) in the caller's organization (and Space).
func (f *Family[R, E, F]) readRow(ctx context.Context, c store.Conn, sc authz.Scope, spaceID, id uuid.UUID, lock bool) (*R, error) {
	if h := f.hooks(); h.rows != nil {
		return h.rows.ReadRow(ctx, c, sc, spaceID, id, lock)
	}
	return listquery.Get[R](ctx, c, f.Listing, sc.OrganizationID, f.scope(spaceID), f.Listing.ID, id, lock)
}

// readBySlug reads an entity's row by Slug in the caller's organization (and Space).
func (f *Family[R, E, F]) readBySlug(ctx context.Context, c store.Conn, sc authz.Scope, spaceID uuid.UUID, slug string) (*R, error) {
	if h := f.hooks(); h.rows != nil {
		return h.rows.ReadBySlug(ctx, c, sc, spaceID, slug)
	}
	if f.Listing.Slug == "" { // a family named by ID only (a Record's)
		return nil, apierr.NotFound(f.Type, slug)
	}
	return listquery.Get[R](ctx, c, f.Listing, sc.OrganizationID, f.scope(spaceID), f.Listing.Slug, slug, false)
}

// readByIDs reads the rows among ids of the organization (any Space).
func (f *Family[R, E, F]) readByIDs(ctx context.Context, c store.Conn, sc authz.Scope, ids []uuid.UUID) ([]*R, error) {
	return listquery.GetAll[R](ctx, c, f.Listing, sc.OrganizationID, ids)
}

// deleteRow deletes cur's row.
func (f *Family[R, E, F]) deleteRow(ctx context.Context, tx *store.Tx, sc authz.Scope, cur E) (int64, error) {
	if h := f.hooks(); h.deleteRow != nil {
		return h.deleteRow(ctx, tx.Q, sc, cur)
	}
	o := cur.ObjectMeta()
	return listquery.Delete(ctx, tx, f.Listing, sc.OrganizationID, f.scope(o.SpaceID), o.ID)
}

// Resolver finds an entity of the caller's organization by ID or Slug (in spaceID when its family lives
// in Spaces) and returns its ID: NotFound when there is none or the caller may not view it. It is how one
// family names another's entities without reading its tables.
type Resolver func(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, ref string) (uuid.UUID, error)

// Resolvers are the Resolvers of families, by entity type.
type Resolvers map[string]Resolver

// IDOf is the family's Resolver.
func (f *Family[R, E, F]) IDOf(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, ref string) (uuid.UUID, error) {
	e, err := f.Resolve(ctx, sc, c, spaceID, ref, false)
	if err != nil {
		return uuid.Nil, err
	}
	return e.ObjectMeta().ID, nil
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
type Service[R any, E Entity, F Fields] struct {
	*Family[R, E, F]
	Deps
}

// NewService serves a family.
func NewService[R any, E Entity, F Fields](fam *Family[R, E, F], deps Deps) *Service[R, E, F] {
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
func (f *Family[R, E, F]) Resolve(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, ref string, lock bool) (E, error) {
	_, e, err := f.ResolveRow(ctx, sc, c, spaceID, ref, lock)
	return e, err
}

// ResolveRow is Resolve that also returns the row read, for what the family keeps beyond its entity (a
// Unit's parsed data).
func (f *Family[R, E, F]) ResolveRow(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, ref string, lock bool) (*R, E, error) {
	var zero E
	var row *R
	id, perr := uuid.Parse(ref)
	var err error
	if perr == nil {
		row, err = f.readRow(ctx, c, sc, spaceID, id, lock)
	} else if row, err = f.readBySlug(ctx, c, sc, spaceID, ref); err == nil && lock {
		var e E
		if e, err = f.FromRow(row); err != nil {
			return nil, zero, err
		}
		row, err = f.readRow(ctx, c, sc, spaceID, e.ObjectMeta().ID, true)
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		if _, perr := f.parent(ctx, sc, c.Queries(), spaceID); perr != nil {
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
	return row, e, authz.Viewable(sc, f.target(e), ref)
}

// afterWrite applies the family's AfterWriter, when it has one.
func (s *Service[R, E, F]) afterWrite(ctx context.Context, tx *store.Tx, sc authz.Scope, before *E, after E) (E, error) {
	if h := s.hooks(); h.afterWrite != nil {
		return h.afterWrite(ctx, s.Deps, tx, sc, before, after)
	}
	return after, nil
}

// checkWriteNeeds refuses a write without the family's WriteGuard permission on the organization.
func (f *Family[R, E, F]) checkWriteNeeds(sc authz.Scope) error {
	if h := f.hooks(); h.writeNeeds != "" {
		return authz.Check(sc, h.writeNeeds, authz.OrganizationTarget(sc.OrganizationID))
	}
	return nil
}

// check applies the family's Checker, when it has one.
func (f *Family[R, E, F]) check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *E, fields F) (F, error) {
	if h := f.hooks(); h.check != nil {
		return h.check(ctx, tx, sc, spaceID, cur, fields)
	}
	return fields, nil
}

// enrich applies the family's Enricher to the entities, when it has one.
func (f *Family[R, E, F]) enrich(ctx context.Context, q *db.Queries, items ...E) ([]E, error) {
	if h := f.hooks(); h.enrich != nil {
		return items, h.enrich(ctx, q, items)
	}
	return items, nil
}

// enrichOne is enrich of one entity.
func (f *Family[R, E, F]) enrichOne(ctx context.Context, q *db.Queries, e E) (E, error) {
	items, err := f.enrich(ctx, q, e)
	return items[0], err
}

// event is the change event of e, in the Scope's organization and the Space it lives in.
func (f *Family[R, E, F]) event(sc authz.Scope, e E, c Change, p *Parent) event.Event {
	o := e.ObjectMeta()
	var space *SpaceRef
	if p != nil {
		space = &p.Ref
	}
	ev := ChangeEvent(f.Event, f.Type, c, sc.OrganizationID, o.ID, e.CommonFields().Slug, o.Version, space)
	if h := f.hooks(); h.adjustEvent != nil {
		ev = h.adjustEvent(e, ev)
	}
	return ev
}

// Get returns one entity the caller may view, named by ID or Slug.
func (s *Service[R, E, F]) Get(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string) (E, error) {
	e, err := s.Resolve(ctx, sc, s.Store.Conn(), spaceID, ref, false)
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
		q.Scope = append(q.Scope, s.scope(*spaceID)...)
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
	return s.Visible(ctx, s.Store.Conn(), sc, ids)
}

// Visible returns, in one query on c, the entities among ids of the caller's organization that it may
// view: how another family checks its references to this one in its write's transaction.
func (f *Family[R, E, F]) Visible(ctx context.Context, c store.Conn, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]E, error) {
	out := map[uuid.UUID]E{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := f.readByIDs(ctx, c, sc, ids)
	if err != nil {
		return nil, err
	}
	var visible []E
	for _, r := range rows {
		e, err := f.FromRow(r)
		if err != nil {
			return nil, err
		}
		if sc.Allows(authz.View, f.target(e)) {
			visible = append(visible, e)
		}
	}
	if len(visible) == 0 {
		return out, nil
	}
	visible, err = f.enrich(ctx, c.Queries(), visible...)
	for _, e := range visible {
		out[e.ObjectMeta().ID] = e
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

// CreateIn is Create in tx, as one part of a write of another family (a Component's backing Unit, the
// Attestation of an approval): the same checks, hooks and event as Create, committed or rolled back with tx.
func (s *Service[R, E, F]) CreateIn(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, f F) (E, error) {
	out, _, err := s.create(ctx, sc, tx, spaceID, f, false)
	return out, err
}

// create is one create in tx; created is false when allowExists handed back an existing entity.
func (s *Service[R, E, F]) create(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, f F, allowExists bool) (out E, created bool, err error) {
	if f, err = s.normalize(f); err != nil {
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
	checkCreate := s.hooks().authorizeCreate
	if checkCreate == nil {
		checkCreate = func(sc authz.Scope, in authz.Target) error { return authz.Check(sc, authz.CreateChildren, in) }
	}
	if err := checkCreate(sc, createIn); err != nil {
		return out, false, err
	}
	if err := s.checkWriteNeeds(sc); err != nil {
		return out, false, err
	}
	if grants := s.grantsOf(f); len(grants) > 0 {
		if err := authz.Check(sc, authz.Manage, createIn); err != nil {
			return out, false, err
		}
		if err := s.Grantees.Check(ctx, sc, tx.Q, "Permissions", nil, grants); err != nil {
			return out, false, err
		}
	}
	// existing hands back the entity of the same Slug (allow_exists), if the caller may view it.
	existing := func(row *R) (E, bool, error) {
		e, err := s.FromRow(row)
		if err != nil {
			return e, false, err
		}
		return e, false, authz.Check(sc, authz.View, s.target(e))
	}
	slug := f.CommonFields().Slug
	var row *R
	if allowExists {
		var err error
		row, err = s.readBySlug(ctx, tx, sc, spaceID, slug)
		switch {
		case err == nil:
			return existing(row)
		case !apierr.Is(err, apierr.TypeNotFound):
			return out, false, err
		}
	}
	if f, err = s.check(ctx, tx, sc, spaceID, nil, f); err != nil {
		return out, false, err
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
			return out, false, apierr.AlreadyExists(s.Type, slug)
		}
		if row, err = s.readBySlug(ctx, tx, sc, spaceID, slug); err != nil {
			if apierr.Is(err, apierr.TypeNotFound) { // the winner is not one the caller may read
				return out, false, apierr.AlreadyExists(s.Type, slug)
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
type change[E Entity, F Fields] func(cur E) (*int64, F, error)

// Update replaces an entity's fields (named by ID or Slug); version must be the stored one.
func (s *Service[R, E, F]) Update(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, version int64, f F, dryRun bool) (E, error) {
	if err := RequireVersion(version); err != nil {
		var zero E
		return zero, err
	}
	return s.write(ctx, sc, spaceID, ref, dryRun, func(cur E) (*int64, F, error) {
		if h := s.hooks(); h.onPut != nil {
			f = h.onPut(cur, f)
		}
		return &version, f, nil
	})
}

// Patch applies an RFC 7386 merge patch to an entity's fields (Version checked when the patch has one).
func (s *Service[R, E, F]) Patch(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, patch json.RawMessage, dryRun bool) (E, error) {
	return s.write(ctx, sc, spaceID, ref, dryRun, s.mergePatch(patch))
}

// UpdateIn is Update in tx as one part of a larger write of the family (a Unit's PUT with upgrade), which
// emits the one event of the whole write: UpdateIn emits none.
func (s *Service[R, E, F]) UpdateIn(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID uuid.UUID, ref string, version int64, f F) (E, error) {
	if err := RequireVersion(version); err != nil {
		var zero E
		return zero, err
	}
	return s.update(ctx, sc, tx, spaceID, ref, func(cur E) (*int64, F, error) {
		if h := s.hooks(); h.onPut != nil {
			f = h.onPut(cur, f)
		}
		return &version, f, nil
	}, false)
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
		merged, err := MergePatch(s.fieldsOf(cur), patch)
		if err != nil {
			return nil, f, err
		}
		if err := json.Unmarshal(merged, &f); err != nil {
			return nil, f, apierr.UserInput(fmt.Sprintf("the patched %s is not valid: %v", s.Type, err))
		}
		if h := s.hooks(); h.onPatch != nil {
			f = h.onPatch(cur, patch, f)
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
	cur, err := s.Resolve(ctx, sc, tx, spaceID, ref, true)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Edit, s.target(cur)); err != nil {
		return cur, err
	}
	if err := s.checkWriteNeeds(sc); err != nil {
		return cur, err
	}
	version, f, err := ch(cur)
	if err != nil {
		return cur, err
	}
	if f, err = s.normalize(f); err != nil {
		return cur, err
	}
	if before, after := s.grantsOf(s.fieldsOf(cur)), s.grantsOf(f); !before.Equal(after) {
		if err := authz.Check(sc, authz.Manage, s.target(cur)); err != nil {
			return cur, err
		}
		if err := s.Grantees.Check(ctx, sc, tx.Q, "Permissions", before, after); err != nil {
			return cur, err
		}
	}
	o := cur.ObjectMeta()
	if err := CheckVersion(s.Type, o.ID, version, o.Version); err != nil {
		return cur, err
	}
	if f, err = s.check(ctx, tx, sc, spaceID, &cur, f); err != nil {
		return cur, err
	}
	row, err := s.UpdateRow(ctx, tx.Q, sc, cur, f)
	if err != nil {
		return cur, SlugClash(err, s.Type, f.CommonFields().Slug)
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
	cur, err := s.Resolve(ctx, sc, tx, spaceID, ref, true)
	if err != nil {
		return cur, err
	}
	id := cur.ObjectMeta().ID
	if err := authz.Check(sc, authz.Delete, s.target(cur)); err != nil {
		return cur, err
	}
	if err := s.checkWriteNeeds(sc); err != nil {
		return cur, err
	}
	c := cur.CommonFields()
	if err := CheckDeleteGates(s.Type, id, c.Slug, c.DeleteGates); err != nil {
		return cur, err
	}
	if h := s.hooks(); h.beforeDelete != nil {
		if err := h.beforeDelete(ctx, tx, sc, cur); err != nil {
			return cur, err
		}
	}
	n, err := s.deleteRow(ctx, tx, sc, cur)
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
			o := e.ObjectMeta()
			refs[i] = Ref{ID: o.ID, SpaceID: o.SpaceID, Slug: e.CommonFields().Slug}
		}
		return refs, nil
	}
}
