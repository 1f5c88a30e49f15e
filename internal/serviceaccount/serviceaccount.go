// Package serviceaccount holds the rules of ServiceAccounts: non-person identities of an organization,
// each backed by a User (whose membership carries the account's OrgRole) that Permissions and Groups
// name. They sign in with registered public keys (package signin); nothing secret is stored.
package serviceaccount

import (
	"context"

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
	entity.Object
	UserID uuid.UUID
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
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	return ServiceAccount{Object: entity.Object{ID: r.ServiceAccountID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, UserID: r.UserID,
		Fields: normalized(Fields{Common: c, OrgRole: auth.Role(r.OrgRole)})}, err
}

// ListEntity is how ServiceAccounts are listed (the API's order fields; indexes in migration 000007).
var ListEntity = listquery.Standard{Table: "sa", ID: "ServiceAccountID", Permissions: true}.Define(&listquery.Entity{
	Name:       EntityType,
	From:       "service_account sa JOIN organization_member m ON m.user_id = sa.user_id AND m.organization_id = sa.organization_id",
	Columns:    "sa.*, m.org_role",
	Visibility: &listquery.Visibility{Grants: "sa.permissions", Members: "ARRAY[sa.user_id]"},
	Attributes: []listquery.Attribute{
		listquery.After("OrganizationID"),
		{Name: "UserID", Type: listquery.UUID, SQL: "sa.user_id", Filterable: true, Orderable: true, Always: true},
		listquery.After("DisplayName"),
		{Name: "OrgRole", Type: listquery.String, SQL: "m.org_role", Filterable: true, Orderable: true},
	},
	Includes: []listquery.Include{{Name: "UserID", Field: "User"}},
})

// Family declares ServiceAccounts to the entity kit: a family of the organization with Permissions (who
// may manage the account), backed by a bot User whose membership carries OrgRole. Creating and deleting
// one, or changing its role, is managing members: it needs ManageMembers, nobody grants or reaches a
// role stronger than their own, and its events are not quiet.
var Family = entity.Declare(&entity.Family[db.ServiceAccountGetWithRoleRow, ServiceAccount, Fields]{
	Type: EntityType, Event: "service_account", Listing: ListEntity, Strategy: strategy{},
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
	FromRow: fromRow,
})

type strategy struct{}

// botRules: an account's role is a membership like a member's.
var botRules = org.BotRules{Noun: "an account", ManageMembers: true}

// Normalize: an account is a member unless told otherwise.
func (strategy) Normalize(f Fields) (Fields, error) {
	f = normalized(f)
	return f, f.Validate()
}

// DeleteRow deletes the backing User, and the account, its membership and its keys with it.
func (strategy) DeleteRow(ctx context.Context, q *db.Queries, _ authz.Scope, cur ServiceAccount) (int64, error) {
	return org.DeleteBotUser(ctx, q, cur.UserID)
}

// BeforeDelete: deleting an account removes a member; nobody removes one stronger than themselves.
func (strategy) BeforeDelete(_ context.Context, _ *store.Tx, sc authz.Scope, cur ServiceAccount) error {
	return botRules.CheckDelete(sc, cur.OrgRole)
}

// Check: a new account, or one whose OrgRole changes, is a membership granted, so it needs ManageMembers
// and a role no stronger than the caller's; a change also needs to reach the role held now.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *ServiceAccount, f Fields) (Fields, error) {
	return f, org.CheckBotWrite(ctx, tx.Q, sc, botRules, cur, f)
}
