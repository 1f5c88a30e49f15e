package org

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
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
