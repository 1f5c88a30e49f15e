// Package serviceaccount holds the rules of ServiceAccounts: non-person identities of an organization,
// each backed by a User (whose membership carries the account's OrgRole) that Permissions and Groups
// name. They sign in with registered public keys (package signin); nothing secret is stored.
package serviceaccount

import (
	"context"
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
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the ServiceAccount's type name.
const EntityType = "ServiceAccount"

// ServiceAccount is a stored ServiceAccount with its role.
type ServiceAccount struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	UserID         uuid.UUID
	HiddenReason   string
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Fields
}

// Fields are what a write sets.
type Fields struct {
	Slug        string       `json:"Slug"`
	DisplayName string       `json:"DisplayName"`
	OrgRole     auth.Role    `json:"OrgRole"`
	Permissions authz.Grants `json:"Permissions"`
	entity.Meta
}

// Target is the account as a permission target: its Permissions say who may manage it (View lists its keys).
func (s ServiceAccount) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: s.ID.String(), Grants: s.Permissions}
}

func (f Fields) normalized() Fields {
	f.Meta = f.Meta.Normalized()
	f.Permissions = f.Permissions.Normalized()
	if f.OrgRole == "" {
		f.OrgRole = auth.RoleMember
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

func fromRow(r *db.ServiceAccountGetWithRoleRow) (ServiceAccount, error) {
	s := ServiceAccount{ID: r.ServiceAccountID, OrganizationID: r.OrganizationID, UserID: r.UserID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, OrgRole: auth.Role(r.OrgRole)}}
	var err error
	if s.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates); err != nil {
		return s, err
	}
	if s.Permissions, err = store.DecodeJSON[authz.Grants](r.Permissions); err != nil {
		return s, err
	}
	s.Fields = s.Fields.normalized()
	return s, nil
}

// ListEntity is how ServiceAccounts are listed (the API's order fields; indexes in migration 000007).
var ListEntity = listquery.Define(&listquery.Entity{
	Name:    EntityType,
	From:    "service_account sa JOIN organization_member m ON m.user_id = sa.user_id AND m.organization_id = sa.organization_id",
	Columns: "sa.*, m.org_role", ID: "ServiceAccountID", Org: "sa.organization_id", Slug: "Slug",
	Contains: "sa.search_text", HiddenReason: "sa.hidden_reason",
	Visibility:    &listquery.Visibility{Grants: "sa.permissions"},
	ContainsAttrs: []string{"Slug", "DisplayName", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "ServiceAccountID", Type: listquery.UUID, SQL: "sa.service_account_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "sa.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "UserID", Type: listquery.UUID, SQL: "sa.user_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "sa.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "sa.display_name", Filterable: true, Orderable: true},
		{Name: "OrgRole", Type: listquery.String, SQL: "m.org_role", Filterable: true, Orderable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "sa.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "sa.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "sa.delete_gates", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "sa.hidden_reason", Filterable: true, Orderable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "sa.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "sa.updated_at", Filterable: true, Orderable: true},
		{Name: "Permissions", Type: listquery.Opaque}, {Name: "Version", Type: listquery.Opaque}, {Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "UserID", Field: "User"}},
})

// Service carries out ServiceAccount operations.
type Service struct {
	Store  *store.Store
	Tokens *listquery.TokenCodec
}

// Load reads a ServiceAccount of the caller's organization.
func Load(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (ServiceAccount, error) {
	row, err := q.ServiceAccountGetWithRole(ctx, db.ServiceAccountGetWithRoleParams{OrganizationID: sc.OrganizationID, ServiceAccountID: id})
	if err != nil {
		return ServiceAccount{}, apierr.NotFoundAs(err, EntityType, id.String())
	}
	return fromRow(row)
}

// List returns a page of the organization's ServiceAccounts the caller may view (the list's SQL keeps to
// them).
func (s *Service) List(ctx context.Context, sc authz.Scope, path string, params listquery.Params) (listquery.Page[ServiceAccount], error) {
	page, err := listquery.Run[db.ServiceAccountGetWithRoleRow](ctx, s.Store.Pool, s.Tokens,
		listquery.Query{Entity: ListEntity, Caller: sc, Path: path, Params: params})
	if err != nil {
		return listquery.Page[ServiceAccount]{}, err
	}
	return listquery.MapPage(page, fromRow)
}

// Get returns one ServiceAccount.
func (s *Service) Get(ctx context.Context, sc authz.Scope, id uuid.UUID) (ServiceAccount, error) {
	sa, err := Load(ctx, sc, s.Store.Q(), id)
	if err != nil {
		return sa, err
	}
	return sa, authz.Viewable(sc, sa.Target(), id.String())
}

// checkRole: ServiceAccounts are organization members; managing them is managing members, and nobody
// grants a role stronger than their own.
func checkRole(ctx context.Context, sc authz.Scope, role auth.Role) error {
	if err := authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return err
	}
	return authz.CheckReach(sc, role, "grant the role")
}

func (sa ServiceAccount) changeEvent(c entity.Change) event.Event {
	return entity.ChangeEvent("service_account", EntityType, c, sa.OrganizationID, sa.ID, sa.Slug, sa.Version, nil)
}

// Create makes a ServiceAccount, its backing User and the User's membership with OrgRole.
func (s *Service) Create(ctx context.Context, sc authz.Scope, f Fields, opts entity.WriteOptions) (ServiceAccount, error) {
	f = f.normalized()
	if err := f.validate(); err != nil {
		return ServiceAccount{}, err
	}
	if err := checkRole(ctx, sc, f.OrgRole); err != nil {
		return ServiceAccount{}, err
	}
	var out ServiceAccount
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		if err := tx.Q.OrganizationLockForMembership(ctx, sc.OrganizationID); err != nil {
			return err
		}
		existing, err := tx.Q.ServiceAccountGetBySlug(ctx, db.ServiceAccountGetBySlugParams{OrganizationID: sc.OrganizationID, Slug: f.Slug})
		switch {
		case err == nil && opts.AllowExists:
			out, err = Load(ctx, sc, tx.Q, existing.ServiceAccountID)
			return err
		case err == nil:
			return apierr.AlreadyExists(EntityType, f.Slug)
		case !apierr.Is(err, apierr.TypeNotFound):
			return err
		}
		if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", nil, f.Permissions); err != nil {
			return err
		}
		id := uuid.New()
		userID, err := org.CreateBotUser(ctx, sc, tx, org.BotServiceAccount, id, f.DisplayName, f.OrgRole)
		if err != nil {
			return err
		}
		if _, err := tx.Q.ServiceAccountInsert(ctx, db.ServiceAccountInsertParams{
			ServiceAccountID: id, OrganizationID: sc.OrganizationID, UserID: userID, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		}); err != nil {
			return entity.SlugClash(err, EntityType, f.Slug)
		}
		if out, err = Load(ctx, sc, tx.Q, id); err != nil {
			return err
		}
		tx.Emit(out.changeEvent(entity.Created))
		return nil
	})
	return out, err
}

type changeFunc func(ServiceAccount) (*int64, Fields, error)

// Update replaces a ServiceAccount's fields; version must be the stored one.
func (s *Service) Update(ctx context.Context, sc authz.Scope, id uuid.UUID, version int64, f Fields, dryRun bool) (ServiceAccount, error) {
	if err := entity.RequireVersion(version); err != nil {
		return ServiceAccount{}, err
	}
	var out ServiceAccount
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var err error
		out, err = update(ctx, sc, tx, id, func(ServiceAccount) (*int64, Fields, error) { return &version, f, nil })
		return err
	})
	return out, err
}

// Patch applies a merge patch to a ServiceAccount's fields.
func (s *Service) Patch(ctx context.Context, sc authz.Scope, id uuid.UUID, patch json.RawMessage, dryRun bool) (ServiceAccount, error) {
	var out ServiceAccount
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var err error
		out, err = update(ctx, sc, tx, id, mergePatch(patch))
		return err
	})
	return out, err
}

func mergePatch(patch json.RawMessage) changeFunc {
	return func(cur ServiceAccount) (*int64, Fields, error) {
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
			return nil, Fields{}, apierr.UserInput("the patched ServiceAccount is not valid: " + err.Error())
		}
		return version, f, nil
	}
}

func update(ctx context.Context, sc authz.Scope, tx *store.Tx, id uuid.UUID, change changeFunc) (ServiceAccount, error) {
	if _, err := tx.Q.ServiceAccountGetByIDForUpdate(ctx, db.ServiceAccountGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, ServiceAccountID: id}); err != nil {
		return ServiceAccount{}, apierr.NotFoundAs(err, EntityType, id.String())
	}
	cur, err := Load(ctx, sc, tx.Q, id)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.Edit, cur.Target()); err != nil {
		return cur, err
	}
	version, f, err := change(cur)
	if err != nil {
		return cur, err
	}
	f = f.normalized()
	if err := f.validate(); err != nil {
		return cur, err
	}
	if err := entity.CheckVersion(EntityType, id, version, cur.Version); err != nil {
		return cur, err
	}
	if !cur.Permissions.Equal(f.Permissions) {
		if err := authz.Check(sc, authz.Manage, cur.Target()); err != nil {
			return cur, err
		}
		if err := entity.CheckGrantees(ctx, sc, tx.Q, "Permissions", cur.Permissions, f.Permissions); err != nil {
			return cur, err
		}
	}
	if f.OrgRole != cur.OrgRole {
		if err := checkRole(ctx, sc, f.OrgRole); err != nil {
			return cur, err
		}
		if err := authz.CheckReach(sc, cur.OrgRole, "change the role of an account with the role"); err != nil {
			return cur, err
		}
		if err := tx.Q.OrganizationMemberSetRole(ctx, db.OrganizationMemberSetRoleParams{OrganizationID: sc.OrganizationID, UserID: cur.UserID, OrgRole: string(f.OrgRole)}); err != nil {
			return cur, err
		}
	}
	if _, err := tx.Q.ServiceAccountUpdate(ctx, db.ServiceAccountUpdateParams{
		OrganizationID: sc.OrganizationID, ServiceAccountID: id, Version: cur.Version, Slug: f.Slug, DisplayName: f.DisplayName,
		Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
		DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
	}); err != nil {
		return cur, entity.SlugClash(err, EntityType, f.Slug)
	}
	out, err := Load(ctx, sc, tx.Q, id)
	if err != nil {
		return out, err
	}
	tx.Emit(out.changeEvent(entity.Updated))
	return out, nil
}

// Delete removes a ServiceAccount with its backing User, membership and keys.
func (s *Service) Delete(ctx context.Context, sc authz.Scope, id uuid.UUID, dryRun bool) error {
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		_, err := remove(ctx, sc, tx, id)
		return err
	})
}

func remove(ctx context.Context, sc authz.Scope, tx *store.Tx, id uuid.UUID) (ServiceAccount, error) {
	if _, err := tx.Q.ServiceAccountGetByIDForUpdate(ctx, db.ServiceAccountGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, ServiceAccountID: id}); err != nil {
		return ServiceAccount{}, apierr.NotFoundAs(err, EntityType, id.String())
	}
	cur, err := Load(ctx, sc, tx.Q, id)
	if err != nil {
		return cur, err
	}
	if err := authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return cur, err
	}
	if err := entity.CheckDeleteGates(EntityType, id, cur.Slug, cur.DeleteGates); err != nil {
		return cur, err
	}
	if err := authz.CheckReach(sc, cur.OrgRole, "delete an account with the role"); err != nil {
		return cur, err
	}
	// Deleting the backing User deletes the account, its membership and its keys with it.
	if err := tx.Q.UserDelete(ctx, cur.UserID); err != nil {
		return cur, store.TranslateDelete(err, EntityType, id.String())
	}
	tx.Emit(cur.changeEvent(entity.Deleted))
	return cur, nil
}

// BulkPatch applies a merge patch to every selected ServiceAccount.
func (s *Service) BulkPatch(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, patch json.RawMessage, dryRun bool) ([]entity.BulkItem[ServiceAccount], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (ServiceAccount, error) {
		return update(ctx, sc, tx, ref.ID, mergePatch(patch))
	})
}

// BulkDelete deletes every selected ServiceAccount.
func (s *Service) BulkDelete(ctx context.Context, sc authz.Scope, path string, sel listquery.Params, dryRun bool) ([]entity.BulkItem[ServiceAccount], error) {
	return entity.RunBulk(ctx, s.Store, EntityType, dryRun, s.selector(sc, path, sel), func(ctx context.Context, tx *store.Tx, ref entity.Ref) (ServiceAccount, error) {
		return remove(ctx, sc, tx, ref.ID)
	})
}

func (s *Service) selector(sc authz.Scope, path string, sel listquery.Params) entity.Selector {
	return func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		limit := entity.MaxBulk
		sel.Limit = &limit
		page, err := listquery.Run[db.ServiceAccountGetWithRoleRow](ctx, tx, s.Tokens,
			listquery.Query{Entity: ListEntity, Caller: sc, Path: path, Params: sel})
		if err != nil {
			return nil, err
		}
		if page.Continue != "" {
			return nil, entity.TooManySelected(EntityType)
		}
		refs := make([]entity.Ref, len(page.Items))
		for i, r := range page.Items {
			refs[i] = entity.Ref{ID: r.ServiceAccountID, Slug: r.Slug}
		}
		return refs, nil
	}
}
