package entity

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/store"
)

// A family's behaviour beyond what the kit does for all is its Strategy: a value implementing those of
// the interfaces below that the family needs, and no others. The kit finds them once, when it first
// serves the family. R is the family's row type, E its entity, F its Fields.

// Normalizer puts a write's fields into their one stored form and validates them on their own (no
// database). Without one, the kit normalizes and validates the Common fields (Slug, Labels,
// Annotations, DeleteGates, and Permissions when the family has them).
type Normalizer[F any] interface {
	Normalize(F) (F, error)
}

// CreateAuthorizer replaces the CreateChildren check of a create on the Space (or the organization) it
// is made in: an Organization, which any member may create, is not made in theirs.
type CreateAuthorizer interface {
	AuthorizeCreate(sc authz.Scope, in authz.Target) error
}

// WriteGuard names an organization permission every write needs beyond the entity's own (Groups:
// ManageMembers, since membership changes what members may do).
type WriteGuard interface {
	WriteNeeds() authz.Permission
}

// Checker validates what needs the database (references to other entities) and resolves what the
// database decides (a Channel's bookmark at the log's tail), in the write's transaction, after the
// permission checks; spaceID is the Space the entity lives or is created in (uuid.Nil for families of
// the organization), cur is nil on create.
type Checker[E, F any] interface {
	Check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *E, f F) (F, error)
}

// PutRule keeps what a PUT does not replace (a Channel's bookmark, which polls move without a new
// Version).
type PutRule[E, F any] interface {
	OnPut(cur E, f F) F
}

// PatchRule reads what a merge patch of cur means beyond the merge (a null bookmark: the log's tail).
type PatchRule[E, F any] interface {
	OnPatch(cur E, patch json.RawMessage, f F) F
}

// Enricher adds to entities read or written what is not in their row (a Channel's lease), in one query
// for a page.
type Enricher[E any] interface {
	Enrich(ctx context.Context, q *db.Queries, items []E) error
}

// AfterWriter does what a create or an update entails once the row is written (a BridgeWorker's Secret,
// issued with it; a Link's values, written into its From Unit through a service built on deps) and may add
// to the result what is not stored; before is nil on create. It runs in the write's transaction, before
// the event.
type AfterWriter[E any] interface {
	AfterWrite(ctx context.Context, deps Deps, tx *store.Tx, sc authz.Scope, before *E, after E) (E, error)
}

// DeleteChecker runs after the Delete and DeleteGates checks and before the row goes: it checks what
// removing the entity needs beyond Delete (a bot's role reach, ManageOrganization) and undoes what
// references it (a Tag comes off every Revision).
type DeleteChecker[E any] interface {
	BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur E) error
}

// EventAdjuster adds to a change event what the family's events carry beyond the common payload (a
// Target's events name the Target in TargetID).
type EventAdjuster[E any] interface {
	AdjustEvent(e E, ev event.Event) event.Event
}

// Mover puts cur in Space toSpaceID with a new Version: the family moves between Spaces (POST
// /<family>/move).
type Mover[R, E any] interface {
	MoveRow(ctx context.Context, q *db.Queries, sc authz.Scope, cur E, toSpaceID uuid.UUID) (*R, error)
}

// Placer says which Space an entity lives in when its fields decide it (a Link lives in its From Unit's
// Space): a copy is made there instead of in its source's Space. A reference it cannot resolve is the
// copy's error.
type Placer[F any] interface {
	SpaceFor(ctx context.Context, tx *store.Tx, sc authz.Scope, f F) (uuid.UUID, error)
}

// Copier records on a copy (clone) the entity it was copied from.
type Copier[R any] interface {
	SetUpstream(ctx context.Context, q *db.Queries, sc authz.Scope, id, upstream uuid.UUID) (*R, error)
}

// Documented families have document endpoints: DocumentSpec says what their documents leave out and
// name.
type Documented interface {
	DocumentSpec() DocumentSpec
}

// RowReader reads the family's rows its own way instead of by its listing's columns (the Organization,
// which is the tenant itself, not a row of it). A missing row is the anonymous NotFound.
type RowReader[R any] interface {
	ReadRow(ctx context.Context, c store.Conn, sc authz.Scope, spaceID, id uuid.UUID, lock bool) (*R, error)
	ReadBySlug(ctx context.Context, c store.Conn, sc authz.Scope, spaceID uuid.UUID, slug string) (*R, error)
}

// RowDeleter deletes the family's row its own way (a bot's User, which takes its entity with it) and
// reports how many rows went.
type RowDeleter[E any] interface {
	DeleteRow(ctx context.Context, q *db.Queries, sc authz.Scope, cur E) (int64, error)
}

// Targeted entities say themselves what permission target they are (a Group, which its members view);
// the others are the target of their type, ID, Space and Permissions.
type Targeted interface {
	Target() authz.Target
}
