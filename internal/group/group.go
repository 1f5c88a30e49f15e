// Package group holds the rules of Groups: named sets of the organization's Users. Permissions grant to a
// Group (GroupIDs) as they grant to a User, so a team is given access once. Membership changes what its
// members may do, so writing Groups needs ManageMembers (the manager or admin role); every role sees the
// organization's Groups, and a guest sees the ones it is in.
package group

import (
	"context"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/org"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Group's type name.
const EntityType = "Group"

// MaxMembers bounds a Group's UserIDs (the document says the same).
const MaxMembers = 10000

// Group is a stored Group.
type Group struct {
	entity.Object
	Fields
}

// Fields are what a write sets.
type Fields struct {
	entity.Common
	UserIDs []uuid.UUID `json:"UserIDs"`
}

// normalized keeps members in one stored form: ascending, without repeats, never nil.
func (f Fields) normalized() Fields {
	ids := slices.Clone(f.UserIDs)
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	f.UserIDs = slices.Compact(ids)
	if f.UserIDs == nil {
		f.UserIDs = []uuid.UUID{}
	}
	f.Meta = f.Meta.Normalized()
	return f
}

func (f Fields) validate() error {
	if err := entity.ValidateSlug(f.Slug); err != nil {
		return err
	}
	if len(f.UserIDs) > MaxMembers {
		return apierr.Validation("a Group has at most 10000 members",
			apierr.Item{Item: "UserIDs", Description: "at most 10000 Users"})
	}
	return f.Meta.Validate()
}

// Target is the Group as a permission target: its members may view it whatever their role (a guest sees
// its own Groups).
func (g Group) Target() authz.Target {
	members := make(map[string]bool, len(g.UserIDs))
	for _, id := range g.UserIDs {
		members[id.String()] = true
	}
	return authz.Target{EntityType: EntityType, ID: g.ID.String(),
		Grants: authz.Grants{string(authz.View): authz.Subjects{UserIDs: members}}}
}

func fromRow(r *db.UserGroup) (Group, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, nil)
	g := Group{Object: entity.Object{ID: r.GroupID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason, Version: r.Version,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, Fields: Fields{Common: c, UserIDs: r.UserIds}}
	g.Fields = g.Fields.normalized()
	return g, err
}

// ListEntity is how Groups are listed.
var ListEntity = listquery.Standard{Table: "user_group", ID: "GroupID"}.Define(&listquery.Entity{
	Name:       EntityType,
	Visibility: &listquery.Visibility{Members: "user_group.user_ids"},
	Attributes: []listquery.Attribute{{Name: "UserIDs", Type: listquery.UUIDList, SQL: "user_group.user_ids", Filterable: true}},
	Includes:   []listquery.Include{{Name: "UserIDs", Field: "Users", Type: org.UserType}},
})

// Family declares Groups to the entity kit: a family of the organization without Permissions of its own,
// whose writes need ManageMembers, and whose members must be members of the organization. Its events
// change what members may do, so they are not quiet.
var Family = entity.Declare(&entity.Family[db.UserGroup, Group, Fields]{
	Type: EntityType, Event: "group", Listing: ListEntity, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, f Fields) (*db.UserGroup, error) {
		return q.GroupInsert(ctx, db.GroupInsertParams{GroupID: id, OrganizationID: sc.OrganizationID, Slug: f.Slug,
			DisplayName: f.DisplayName, UserIds: f.UserIDs, Labels: store.EncodeJSON(f.Labels),
			Annotations: store.EncodeJSON(f.Annotations), DeleteGates: store.EncodeJSON(f.DeleteGates)})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Group, f Fields) (*db.UserGroup, error) {
		return q.GroupUpdate(ctx, db.GroupUpdateParams{OrganizationID: sc.OrganizationID, GroupID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, UserIds: f.UserIDs, Labels: store.EncodeJSON(f.Labels),
			Annotations: store.EncodeJSON(f.Annotations), DeleteGates: store.EncodeJSON(f.DeleteGates)})
	},
	FromRow: fromRow,
})

type strategy struct{}

// WriteNeeds: membership changes what members may do, so writing Groups is managing members.
func (strategy) WriteNeeds() authz.Permission { return authz.ManageMembers }

// Normalize puts the fields in their stored form and checks them on their own.
func (strategy) Normalize(f Fields) (Fields, error) {
	f = f.normalized()
	return f, f.validate()
}

// Check requires every User a write adds to be a member of the organization; one that is not (or
// is another organization's) is named as UserIDs.<id>, with the same answer either way. Members already in
// the Group pass again (one who left the organization was taken out when the membership ended).
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Group, f Fields) (Fields, error) {
	var added []uuid.UUID
	for _, id := range f.UserIDs {
		if cur == nil || !slices.Contains(cur.UserIDs, id) {
			added = append(added, id)
		}
	}
	if len(added) == 0 {
		return f, nil
	}
	members, err := org.MembersAmong(ctx, sc, tx.Q, added)
	if err != nil {
		return f, err
	}
	var bad []string
	for _, id := range added {
		if !slices.Contains(members, id) {
			bad = append(bad, "UserIDs."+id.String())
		}
	}
	if len(bad) == 0 {
		return f, nil
	}
	sort.Strings(bad)
	return f, apierr.NoSuchReference("User", "among the members of your organization", bad...)
}
