package org

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
)

// BotKind names the entity a bot User acts for; it is the prefix of the bot's Username.
type BotKind string

// The entities backed by a bot User.
const (
	BotServiceAccount BotKind = "sa"
	BotBridgeWorker   BotKind = "bw"
)

// CreateBotUser makes the bot User of a ServiceAccount or BridgeWorker, named "<kind>-<entity ID>" (a
// form reserved for bots: members cannot be added under it, see botUsername), and its membership of
// sc's organization with role. The caller inserts the entity with the same queries (one transaction), so
// all three commit together.
func CreateBotUser(ctx context.Context, sc authz.Scope, q *db.Queries, kind BotKind, entityID uuid.UUID, displayName string, role auth.Role) (uuid.UUID, error) {
	username := string(kind) + "-" + entityID.String()
	user, err := q.UserInsert(ctx, db.UserInsertParams{UserID: uuid.New(), Username: username, Slug: username, DisplayName: displayName})
	if err != nil {
		return uuid.Nil, err
	}
	if err := q.OrganizationMemberInsert(ctx, db.OrganizationMemberInsertParams{OrganizationID: sc.OrganizationID, UserID: user.UserID, OrgRole: string(role)}); err != nil {
		return uuid.Nil, err
	}
	return user.UserID, nil
}

// SetBotRole changes the role of a bot User's membership (a ServiceAccount's or BridgeWorker's OrgRole).
// The caller has checked that it may grant it.
func SetBotRole(ctx context.Context, sc authz.Scope, q *db.Queries, userID uuid.UUID, role auth.Role) error {
	return q.OrganizationMemberSetRole(ctx, db.OrganizationMemberSetRoleParams{OrganizationID: sc.OrganizationID, UserID: userID, OrgRole: string(role)})
}

// DeleteBotUser deletes a bot User, and with it what it backs (its ServiceAccount or BridgeWorker), its
// membership and its keys; the count is of Users deleted.
func DeleteBotUser(ctx context.Context, q *db.Queries, userID uuid.UUID) (int64, error) {
	return q.UserDelete(ctx, userID)
}

// LockMemberships serializes the changes of sc's organization's memberships until q's transaction ends,
// so that checks over them (the count of its admins) never race.
func LockMemberships(ctx context.Context, sc authz.Scope, q *db.Queries) error {
	return q.OrganizationLockForMembership(ctx, sc.OrganizationID)
}

// BotFields are what a write of an entity backed by a bot User sets (ServiceAccount, BridgeWorker): its
// OrgRole is its User's membership role, and its Permissions say who may manage it.
type BotFields struct {
	entity.Common
	OrgRole auth.Role `json:"OrgRole"`
}

// Normalized puts the fields in their one stored form; no OrgRole is defaultRole.
func (f BotFields) Normalized(defaultRole auth.Role) BotFields {
	f.Common = f.Common.Normalized()
	if f.OrgRole == "" {
		f.OrgRole = defaultRole
	}
	return f
}

// Validate checks the fields on their own (no database).
func (f BotFields) Validate() error {
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

// MembersAmong returns which of users are members of sc's organization, in one query.
func MembersAmong(ctx context.Context, sc authz.Scope, q *db.Queries, users []uuid.UUID) ([]uuid.UUID, error) {
	return q.OrganizationMembersAmong(ctx, db.OrganizationMembersAmongParams{OrganizationID: sc.OrganizationID, UserIds: users})
}

// BotRules are the rules of a bot's OrgRole (ServiceAccount, BridgeWorker): nobody grants a bot a role
// stronger than their own, nor changes the role of, or deletes, a bot stronger than themselves.
type BotRules struct {
	// Noun names the entity in errors ("a worker").
	Noun string
	// ManageMembers: creating or deleting one, or changing its role, is managing the organization's
	// members. It needs ManageMembers, and holds the memberships' lock (LockMemberships) so that checks
	// over them never race.
	ManageMembers bool
}

// A bot is an entity that embeds BotFields.
type bot interface{ botFields() BotFields }

func (f BotFields) botFields() BotFields { return f }

// CheckBotWrite checks a write of f to cur (nil: a create) under r; a write that leaves OrgRole alone
// needs nothing.
func CheckBotWrite[E bot](ctx context.Context, q *db.Queries, sc authz.Scope, r BotRules, cur *E, f BotFields) error {
	if cur != nil && (*cur).botFields().OrgRole == f.OrgRole {
		return nil
	}
	if err := r.checkManage(sc); err != nil {
		return err
	}
	if err := authz.CheckReach(sc, f.OrgRole, "grant the role"); err != nil {
		return err
	}
	if cur != nil {
		if err := authz.CheckReach(sc, (*cur).botFields().OrgRole, "change the role of "+r.Noun+" with the role"); err != nil {
			return err
		}
	}
	if r.ManageMembers {
		return LockMemberships(ctx, sc, q)
	}
	return nil
}

// CheckDelete checks deleting a bot whose role is role.
func (r BotRules) CheckDelete(sc authz.Scope, role auth.Role) error {
	if err := r.checkManage(sc); err != nil {
		return err
	}
	return authz.CheckReach(sc, role, "delete "+r.Noun+" with the role")
}

func (r BotRules) checkManage(sc authz.Scope) error {
	if !r.ManageMembers {
		return nil
	}
	return authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(sc.OrganizationID))
}
