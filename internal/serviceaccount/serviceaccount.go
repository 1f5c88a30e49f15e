// Package serviceaccount holds the rules of ServiceAccounts: non-person identities of an organization,
// each backed by a User (whose membership carries the account's OrgRole) that Permissions and Groups
// name. They sign in with registered public keys (package signin); nothing secret is stored.
package serviceaccount

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
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
type Fields = org.BotFields

// Target is the account as a permission target: its Permissions say who may manage it (View lists its
// keys), and its own User views it whatever its role (a guest bot sees its account).
func (s ServiceAccount) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: s.ID.String(), Grants: s.Permissions.WithViewer(s.UserID)}
}

// normalized: an account is a member unless told otherwise.
func normalized(f Fields) Fields { return f.Normalized(auth.RoleMember) }

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
	s.Fields = normalized(s.Fields)
	return s, nil
}

// ListEntity is how ServiceAccounts are listed (the API's order fields; indexes in migration 000007).
var ListEntity = listquery.Define(&listquery.Entity{
	Name:    EntityType,
	From:    "service_account sa JOIN organization_member m ON m.user_id = sa.user_id AND m.organization_id = sa.organization_id",
	Columns: "sa.*, m.org_role", ID: "ServiceAccountID", Org: "sa.organization_id", Slug: "Slug",
	Contains: "sa.search_text", HiddenReason: "sa.hidden_reason",
	Visibility:    &listquery.Visibility{Grants: "sa.permissions", Members: "ARRAY[sa.user_id]"},
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

// Family declares ServiceAccounts to the entity kit: a family of the organization with Permissions (who
// may manage the account), backed by a bot User whose membership carries OrgRole. Creating and deleting
// one, or changing its role, is managing members: it needs ManageMembers, and nobody grants or reaches a
// role stronger than their own.
var Family = &entity.Family[db.ServiceAccountGetWithRoleRow, ServiceAccount, Fields]{
	Type: EntityType, Event: "service_account", Listing: ListEntity,
	ReadRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, lock bool) (*db.ServiceAccountGetWithRoleRow, error) {
		if lock {
			row, err := q.ServiceAccountGetWithRoleForUpdate(ctx, db.ServiceAccountGetWithRoleForUpdateParams{OrganizationID: sc.OrganizationID, ServiceAccountID: id})
			return (*db.ServiceAccountGetWithRoleRow)(row), err
		}
		return q.ServiceAccountGetWithRole(ctx, db.ServiceAccountGetWithRoleParams{OrganizationID: sc.OrganizationID, ServiceAccountID: id})
	},
	ReadBySlug: func(ctx context.Context, q *db.Queries, sc authz.Scope, _ uuid.UUID, slug string) (*db.ServiceAccountGetWithRoleRow, error) {
		row, err := q.ServiceAccountGetWithRoleBySlug(ctx, db.ServiceAccountGetWithRoleBySlugParams{OrganizationID: sc.OrganizationID, Slug: slug})
		return (*db.ServiceAccountGetWithRoleRow)(row), err
	},
	// The bot User and its membership are made with the account, in the write's savepoint.
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, f Fields) (*db.ServiceAccountGetWithRoleRow, error) {
		userID, err := org.CreateBotUser(ctx, sc, q, org.BotServiceAccount, id, f.DisplayName, f.OrgRole)
		if err != nil {
			return nil, err
		}
		if _, err := q.ServiceAccountInsert(ctx, db.ServiceAccountInsertParams{
			ServiceAccountID: id, OrganizationID: sc.OrganizationID, UserID: userID, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		}); err != nil {
			return nil, err
		}
		return q.ServiceAccountGetWithRole(ctx, db.ServiceAccountGetWithRoleParams{OrganizationID: sc.OrganizationID, ServiceAccountID: id})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur ServiceAccount, f Fields) (*db.ServiceAccountGetWithRoleRow, error) {
		if f.OrgRole != cur.OrgRole {
			if err := org.SetBotRole(ctx, sc, q, cur.UserID, f.OrgRole); err != nil {
				return nil, err
			}
		}
		if _, err := q.ServiceAccountUpdate(ctx, db.ServiceAccountUpdateParams{
			OrganizationID: sc.OrganizationID, ServiceAccountID: cur.ID, Version: cur.Version, Slug: f.Slug, DisplayName: f.DisplayName,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions),
		}); err != nil {
			return nil, err
		}
		return q.ServiceAccountGetWithRole(ctx, db.ServiceAccountGetWithRoleParams{OrganizationID: sc.OrganizationID, ServiceAccountID: cur.ID})
	},
	// Deleting the backing User deletes the account, its membership and its keys with it.
	DeleteRow: func(ctx context.Context, q *db.Queries, _ authz.Scope, cur ServiceAccount) (int64, error) {
		return org.DeleteBotUser(ctx, q, cur.UserID)
	},
	FromRow: fromRow,
	Ident: func(s ServiceAccount) entity.Ident {
		return entity.Ident{ID: s.ID, Slug: s.Slug, Version: s.Version, DeleteGates: s.DeleteGates}
	},
	Fields: func(s ServiceAccount) Fields { return s.Fields },
	Slug:   func(f Fields) string { return f.Slug },
	Target: ServiceAccount.Target,
	Grants: func(f Fields) authz.Grants { return f.Permissions },
	Normalize: func(f Fields) (Fields, error) {
		f = normalized(f)
		return f, f.Validate()
	},
	Check: checkRoleChange,
	BeforeDelete: func(_ context.Context, _ *store.Tx, sc authz.Scope, cur ServiceAccount) error {
		return checkRemoval(sc, cur)
	},
}

// checkRoleChange: a new account, or one whose OrgRole changes, is a membership granted, so it needs
// ManageMembers and a role no stronger than the caller's; a change also needs to reach the role held now.
// Memberships of the organization change one at a time (the organization's row lock), so the count of
// its admins never races.
func checkRoleChange(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *ServiceAccount, f Fields) (Fields, error) {
	if cur != nil && cur.OrgRole == f.OrgRole {
		return f, nil
	}
	if err := authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return f, err
	}
	if err := authz.CheckReach(sc, f.OrgRole, "grant the role"); err != nil {
		return f, err
	}
	if cur != nil {
		if err := authz.CheckReach(sc, cur.OrgRole, "change the role of an account with the role"); err != nil {
			return f, err
		}
	}
	return f, org.LockMemberships(ctx, sc, tx.Q)
}

// checkRemoval: deleting an account removes a member; nobody removes one stronger than themselves.
func checkRemoval(sc authz.Scope, cur ServiceAccount) error {
	if err := authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return err
	}
	return authz.CheckReach(sc, cur.OrgRole, "delete an account with the role")
}

// Service carries out ServiceAccount operations (the kit's).
type Service = entity.Service[db.ServiceAccountGetWithRoleRow, ServiceAccount, Fields]

// NewService serves ServiceAccounts from a store.
func NewService(deps entity.Deps) *Service {
	return entity.NewService(Family, deps)
}
