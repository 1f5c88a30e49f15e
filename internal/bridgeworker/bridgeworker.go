// Package bridgeworker holds BridgeWorkers: registered worker processes of a Space. Each is backed by a
// bot User (whose membership carries the worker's OrgRole) and signs in with a server-generated Secret
// at {base_url}/auth/worker; only a SHA-256 hash of the Secret is stored. Worker event consumers read the
// event log through named cursors the server keeps per worker (events.go).
package bridgeworker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/org"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the BridgeWorker's type name.
const EntityType = "BridgeWorker"

// ReadyWindow is how recently a worker must have polled to be Ready.
const ReadyWindow = time.Minute

// BridgeWorker is a stored BridgeWorker with its bot User's role.
type BridgeWorker struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	SpaceID        uuid.UUID
	UserID         uuid.UUID
	// Secret is set only in the result of Create, and of an update that issued a new one: it is never
	// stored, only its hash.
	Secret string
	// SecretMaxOrgRole is the strongest role a sign-in with the Secret gets: the role of whoever it was
	// issued to, so a worker raised above it does not raise the power of whoever holds its old Secret.
	SecretMaxOrgRole auth.Role
	LastSeenAt       *time.Time
	HiddenReason     string
	Version          int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Fields
}

// Ready reports whether the worker polled within ReadyWindow.
func (w BridgeWorker) Ready() bool {
	return w.LastSeenAt != nil && time.Since(*w.LastSeenAt) < ReadyWindow
}

// Fields are what a write sets.
type Fields struct {
	Slug        string       `json:"Slug"`
	DisplayName string       `json:"DisplayName"`
	OrgRole     auth.Role    `json:"OrgRole"`
	Permissions authz.Grants `json:"Permissions"`
	entity.Meta
}

// Target is the BridgeWorker as a permission target (View, Edit, Manage, Delete).
func (w BridgeWorker) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: w.ID.String(), Grants: w.Permissions, SpaceID: w.SpaceID}
}

func (f Fields) normalized() Fields {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	if f.OrgRole == "" {
		// A worker's token only needs to read: a leaked Secret should not be able to write anywhere.
		f.OrgRole = auth.RoleViewer
	}
	return f
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	if !f.OrgRole.Valid() {
		return apierr.UserInput("OrgRole must be "+auth.RoleNames, apierr.Item{Item: "OrgRole", Description: "unknown role"})
	}
	if err := f.Meta.Validate(); err != nil {
		return err
	}
	return f.Permissions.Validate("Permissions")
}

func fromRow(r *db.BridgeWorkerGetWithRoleRow) (BridgeWorker, error) {
	w := BridgeWorker{ID: r.BridgeWorkerID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, UserID: r.UserID,
		LastSeenAt: r.LastSeenAt, HiddenReason: r.HiddenReason, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		SecretMaxOrgRole: auth.Role(r.SecretMaxOrgRole),
		Fields:           Fields{Slug: r.Slug, DisplayName: r.DisplayName, OrgRole: auth.Role(r.OrgRole)}}
	var err error
	if w.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return w, err
	}
	if w.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return w, err
	}
	w.Fields = w.Fields.normalized()
	return w, nil
}

// ListEntity is how BridgeWorkers are listed (indexes in migration 000011).
var ListEntity = listquery.Define(&listquery.Entity{
	Name:    EntityType,
	From:    "bridge_worker bw JOIN organization_member m ON m.user_id = bw.user_id AND m.organization_id = bw.organization_id",
	Columns: "bw.*, m.org_role", ID: "BridgeWorkerID", Org: "bw.organization_id", Slug: "Slug",
	Contains: "bw.search_text", HiddenReason: "bw.hidden_reason",
	Visibility:    &listquery.Visibility{Grants: "bw.permissions", Space: "bw.space_id"},
	ContainsAttrs: []string{"Slug", "DisplayName", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "BridgeWorkerID", Type: listquery.UUID, SQL: "bw.bridge_worker_id", Filterable: true, Orderable: true, Always: true},
		{Name: "SpaceID", Type: listquery.UUID, SQL: "bw.space_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "bw.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "UserID", Type: listquery.UUID, SQL: "bw.user_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "bw.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "bw.display_name", Filterable: true, Orderable: true},
		{Name: "OrgRole", Type: listquery.String, SQL: "m.org_role", Filterable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "bw.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "bw.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "bw.delete_gates", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "bw.hidden_reason", Filterable: true, Orderable: true},
		{Name: "LastSeenAt", Type: listquery.Opaque},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "bw.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "bw.updated_at", Filterable: true, Orderable: true},
		{Name: "Permissions", Type: listquery.Opaque}, {Name: "Secret", Type: listquery.Opaque},
		{Name: "Condition", Type: listquery.Opaque}, {Name: "Version", Type: listquery.Opaque},
		{Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "SpaceID", Field: "Space"}, {Name: "UserID", Field: "User"}},
})

// Service carries out BridgeWorker operations.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
	// Notifier wakes event-cursor long polls when events commit on any replica.
	Notifier *event.Notifier
}

// resolve reads a BridgeWorker named by ID or Slug in a Space of the caller's organization, locking its
// row first when lock is set.
func resolve(ctx context.Context, sc authz.Scope, q *db.Queries, spaceID uuid.UUID, ref string, lock bool) (BridgeWorker, error) {
	id, perr := uuid.Parse(ref)
	var err error
	if perr != nil {
		id, err = q.BridgeWorkerGetIDBySlug(ctx, db.BridgeWorkerGetIDBySlugParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, Slug: ref})
	}
	if err == nil && lock {
		_, err = q.BridgeWorkerLock(ctx, db.BridgeWorkerLockParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, BridgeWorkerID: id})
	}
	var row *db.BridgeWorkerGetWithRoleRow
	if err == nil {
		row, err = q.BridgeWorkerGetWithRole(ctx, db.BridgeWorkerGetWithRoleParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, BridgeWorkerID: id})
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		if _, serr := space.Parent(ctx, sc, q, spaceID); serr != nil {
			return BridgeWorker{}, serr
		}
		return BridgeWorker{}, apierr.NotFound(EntityType, ref)
	}
	if err != nil {
		return BridgeWorker{}, err
	}
	w, err := fromRow(row)
	if err != nil {
		return w, err
	}
	return w, authz.Viewable(sc, w.Target(), ref)
}

// List returns a page of BridgeWorkers (of one Space when spaceID is set) the caller may view (the
// list's SQL keeps to them).
func (s *Service) List(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params) (listquery.Page[BridgeWorker], error) {
	q := listquery.Query{Entity: ListEntity, Caller: sc, Path: path, Params: params}
	if spaceID != nil {
		if _, _, err := space.VisibleParent(ctx, sc, s.Store.Q(), *spaceID); err != nil {
			return listquery.Page[BridgeWorker]{}, err
		}
		q.Scope = []listquery.Condition{{Column: "bw.space_id", Value: *spaceID}}
	}
	page, err := listquery.Run[db.BridgeWorkerGetWithRoleRow](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[BridgeWorker]{}, err
	}
	return listquery.MapPage(page, fromRow)
}

// Get returns one BridgeWorker (by ID or Slug).
func (s *Service) Get(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string) (BridgeWorker, error) {
	return resolve(ctx, sc, s.Store.Q(), spaceID, ref, false)
}

// ByIDs loads BridgeWorkers of the caller's organization the caller may view, by ID, in one query (for
// include=BridgeWorkerID on Targets).
func (s *Service) ByIDs(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]BridgeWorker, error) {
	out := map[uuid.UUID]BridgeWorker{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.Store.Q().BridgeWorkerListByIDs(ctx, db.BridgeWorkerListByIDsParams{OrganizationID: sc.OrganizationID, BridgeWorkerIds: ids})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		w, err := fromRow((*db.BridgeWorkerGetWithRoleRow)(r))
		if err != nil {
			return nil, err
		}
		if sc.Allows(authz.View, w.Target()) {
			out[w.ID] = w
		}
	}
	return out, nil
}

// Exists reports whether id names a BridgeWorker of the caller's organization (in any Space), for an
// entity that references one. The worker's row stays key-share locked until q's transaction ends, so
// it cannot be deleted before the reference commits.
func Exists(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (bool, error) {
	_, err := q.BridgeWorkerKeyShare(ctx, db.BridgeWorkerKeyShareParams{OrganizationID: sc.OrganizationID, BridgeWorkerID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (w BridgeWorker) changeEvent(ch entity.Change, spaceSlug string) event.Event {
	return entity.ChangeEvent("bridge_worker", EntityType, ch, w.OrganizationID, w.ID, w.Slug, w.Version, &entity.SpaceRef{ID: w.SpaceID, Slug: spaceSlug})
}

// newSecret returns a random Secret and the hash that is stored of it.
func newSecret() (string, []byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	secret := "bws_" + base64.RawURLEncoding.EncodeToString(b)
	return secret, hashSecret(secret), nil
}

func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// checkRole: nobody gives a worker's bot User a role stronger than their own.
func checkRole(ctx context.Context, sc authz.Scope, role auth.Role) error {
	return authz.CheckReach(sc, role, "grant the role")
}

// Create makes a BridgeWorker, its bot User and the User's membership with OrgRole. The result carries
// the Secret (unless it found an existing worker, or it is a dry run); it is never shown again.
func (s *Service) Create(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, f Fields, opts entity.WriteOptions) (BridgeWorker, error) {
	f = f.normalized()
	if err := f.validate(); err != nil {
		return BridgeWorker{}, err
	}
	if err := checkRole(ctx, sc, f.OrgRole); err != nil {
		return BridgeWorker{}, err
	}
	secret, hash, err := newSecret()
	if err != nil {
		return BridgeWorker{}, err
	}
	var out BridgeWorker
	err = s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		sp, st, err := space.VisibleParent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.CreateChildren, st); err != nil {
			return err
		}
		if len(f.Permissions) > 0 {
			if err := authz.Check(sc, authz.Manage, st); err != nil {
				return err
			}
			if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", nil, f.Permissions); err != nil {
				return err
			}
		}
		id := uuid.New()
		// The bot User, its membership and the worker go in together or not at all.
		err = tx.Savepoint(ctx, func(sv *store.Tx) error {
			userID, err := org.CreateBotUser(ctx, sc, sv.Q, org.BotBridgeWorker, id, f.DisplayName, f.OrgRole)
			if err != nil {
				return err
			}
			_, err = sv.Q.BridgeWorkerInsert(ctx, db.BridgeWorkerInsertParams{BridgeWorkerID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
				UserID: userID, Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
				DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions), SecretHash: hash,
				SecretMaxOrgRole: string(sc.Role)})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) {
			if !opts.AllowExists {
				return apierr.AlreadyExists(EntityType, f.Slug)
			}
			out, err = resolve(ctx, sc, tx.Q, spaceID, f.Slug, false)
			return err
		}
		if err != nil {
			return err
		}
		if out, err = resolve(ctx, sc, tx.Q, spaceID, id.String(), false); err != nil {
			return err
		}
		if !opts.DryRun {
			out.Secret = secret
		}
		tx.Emit(out.changeEvent(entity.Created, sp.Slug))
		return nil
	})
	return out, err
}

type changeFunc func(BridgeWorker) (*int64, Fields, error)

// Update replaces a BridgeWorker's fields; version must be the stored one.
func (s *Service) Update(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, version int64, f Fields, dryRun bool) (BridgeWorker, error) {
	if err := entity.RequireVersion(version); err != nil {
		return BridgeWorker{}, err
	}
	return s.write(ctx, sc, spaceID, ref, dryRun, func(BridgeWorker) (*int64, Fields, error) { return &version, f, nil })
}

// Patch applies a merge patch to a BridgeWorker's fields.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, patch json.RawMessage, dryRun bool) (BridgeWorker, error) {
	return s.write(ctx, sc, spaceID, ref, dryRun, func(cur BridgeWorker) (*int64, Fields, error) {
		version, err := entity.SentVersion(patch)
		if err != nil {
			return nil, Fields{}, err
		}
		merged, err := entity.MergePatch(cur.Fields, patch)
		if err != nil {
			return nil, Fields{}, err
		}
		var f Fields
		if err := json.Unmarshal(merged, &f); err != nil {
			return nil, Fields{}, apierr.UserInput("the patched BridgeWorker is not valid: " + err.Error())
		}
		return version, f, nil
	})
}

func (s *Service) write(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool, change changeFunc) (BridgeWorker, error) {
	var out BridgeWorker
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var secret string
		cur, err := resolve(ctx, sc, tx.Q, spaceID, ref, true)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Edit, cur.Target()); err != nil {
			return err
		}
		version, f, err := change(cur)
		if err != nil {
			return err
		}
		f = f.normalized()
		if err := f.validate(); err != nil {
			return err
		}
		if !cur.Permissions.Equal(f.Permissions) {
			if err := authz.Check(sc, authz.Manage, cur.Target()); err != nil {
				return err
			}
			if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", cur.Permissions, f.Permissions); err != nil {
				return err
			}
		}
		if err := entity.CheckVersion(EntityType, cur.ID, version, cur.Version); err != nil {
			return err
		}
		if f.OrgRole != cur.OrgRole {
			if err := checkRole(ctx, sc, f.OrgRole); err != nil {
				return err
			}
			if err := authz.CheckReach(sc, cur.OrgRole, "change the role of a worker with the role"); err != nil {
				return err
			}
			if err := tx.Q.OrganizationMemberSetRole(ctx, db.OrganizationMemberSetRoleParams{OrganizationID: sc.OrganizationID, UserID: cur.UserID, OrgRole: string(f.OrgRole)}); err != nil {
				return err
			}
			if !cur.SecretMaxOrgRole.AtLeast(f.OrgRole) {
				// The old Secret signs in with at most its holder's role; the new role comes with a new
				// Secret, issued to the caller, and the old one stops working.
				if secret, err = s.reissueSecret(ctx, sc, tx, cur.ID); err != nil {
					return err
				}
			}
		}
		if _, err := tx.Q.BridgeWorkerUpdate(ctx, db.BridgeWorkerUpdateParams{OrganizationID: sc.OrganizationID, BridgeWorkerID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions)}); err != nil {
			return entity.SlugClash(err, EntityType, f.Slug)
		}
		if out, err = resolve(ctx, sc, tx.Q, spaceID, cur.ID.String(), false); err != nil {
			return err
		}
		if !dryRun {
			out.Secret = secret
		}
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Updated, sp.Slug))
		return nil
	})
	return out, err
}

// reissueSecret gives a worker a new Secret that signs in with at most the caller's role, and returns it.
func (s *Service) reissueSecret(ctx context.Context, sc authz.Scope, tx *store.Tx, id uuid.UUID) (string, error) {
	secret, hash, err := newSecret()
	if err != nil {
		return "", err
	}
	return secret, tx.Q.BridgeWorkerSetSecret(ctx, db.BridgeWorkerSetSecretParams{OrganizationID: sc.OrganizationID, BridgeWorkerID: id,
		SecretHash: hash, SecretMaxOrgRole: string(sc.Role)})
}

// Delete removes a BridgeWorker with its bot User (and so its membership and tokens) and its cursors;
// refused (409 Conflict) while it has DeleteGates or Targets name it as their BridgeWorkerID (the
// foreign key of migration 000013).
func (s *Service) Delete(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		cur, err := resolve(ctx, sc, tx.Q, spaceID, ref, true)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Delete, cur.Target()); err != nil {
			return err
		}
		if err := entity.CheckDeleteGates(EntityType, cur.ID, cur.Slug, cur.DeleteGates); err != nil {
			return err
		}
		if err := authz.CheckReach(sc, cur.OrgRole, "delete a worker with the role"); err != nil {
			return err
		}
		// Deleting the bot User deletes the worker, its membership and its cursors with it.
		if _, err := tx.Q.UserDelete(ctx, cur.UserID); err != nil {
			return store.TranslateDelete(err, EntityType, cur.ID.String())
		}
		sp, err := space.Parent(ctx, sc, tx.Q, spaceID)
		if err != nil {
			return err
		}
		tx.Emit(cur.changeEvent(entity.Deleted, sp.Slug))
		return nil
	})
}
