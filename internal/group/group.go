// Package group holds the rules of Groups: named sets of the organization's Users. Permissions grant to a
// Group (GroupIDs) as they grant to a User, so a team is given access once. Membership changes what its
// members may do, so writing Groups needs ManageMembers (the manager or admin role); every role sees the
// organization's Groups, and a guest sees the ones it is in.
package group

import (
	"context"
	"slices"
	"sort"
	"time"

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
	ID             uuid.UUID
	OrganizationID uuid.UUID
	HiddenReason   string
	Version        int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Fields
}

// Fields are what a write sets.
type Fields struct {
	Slug        string      `json:"Slug"`
	DisplayName string      `json:"DisplayName"`
	UserIDs     []uuid.UUID `json:"UserIDs"`
	entity.Meta
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

// target: a Group's members may view it whatever their role (a guest sees its own Groups).
func (g Group) target() authz.Target {
	members := make(map[string]bool, len(g.UserIDs))
	for _, id := range g.UserIDs {
		members[id.String()] = true
	}
	return authz.Target{EntityType: EntityType, ID: g.ID.String(),
		Grants: authz.Grants{string(authz.View): authz.Subjects{UserIDs: members}}}
}

func fromRow(r *db.UserGroup) (Group, error) {
	g := Group{ID: r.GroupID, OrganizationID: r.OrganizationID, HiddenReason: r.HiddenReason, Version: r.Version,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Fields: Fields{Slug: r.Slug, DisplayName: r.DisplayName, UserIDs: r.UserIds}}
	var err error
	g.Meta, err = entity.DecodeMeta(r.Labels, r.Annotations, r.DeleteGates)
	g.Fields = g.Fields.normalized()
	return g, err
}

// ListEntity is how Groups are listed.
var ListEntity = listquery.Define(&listquery.Entity{
	Name: EntityType, From: "user_group", Columns: "user_group.*", ID: "GroupID", Org: "user_group.organization_id", Slug: "Slug",
	Contains: "user_group.search_text", HiddenReason: "user_group.hidden_reason",
	Visibility:    &listquery.Visibility{Members: "user_group.user_ids"},
	ContainsAttrs: []string{"Slug", "DisplayName", "Labels", "Annotations"},
	Attributes: []listquery.Attribute{
		{Name: "GroupID", Type: listquery.UUID, SQL: "user_group.group_id", Filterable: true, Orderable: true, Always: true},
		{Name: "OrganizationID", Type: listquery.UUID, SQL: "user_group.organization_id", Filterable: true, Orderable: true, Always: true},
		{Name: "Slug", Type: listquery.String, SQL: "user_group.slug", Filterable: true, Orderable: true, Always: true},
		{Name: "DisplayName", Type: listquery.String, SQL: "user_group.display_name", Filterable: true, Orderable: true},
		{Name: "UserIDs", Type: listquery.UUIDList, SQL: "user_group.user_ids", Filterable: true},
		{Name: "Labels", Type: listquery.StringMap, SQL: "user_group.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "user_group.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "user_group.delete_gates", Filterable: true},
		{Name: "HiddenReason", Type: listquery.String, SQL: "user_group.hidden_reason", Filterable: true, Orderable: true},
		{Name: "CreatedAt", Type: listquery.Time, SQL: "user_group.created_at", Filterable: true, Orderable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "user_group.updated_at", Filterable: true, Orderable: true},
		{Name: "Version", Type: listquery.Opaque}, {Name: "EntityType", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "OrganizationID", Field: "Organization"}, {Name: "UserIDs", Field: "Users", Type: org.UserType}},
})

// Family declares Groups to the entity kit: a family of the organization without Permissions of its own,
// whose writes need ManageMembers, and whose members must be members of the organization.
var Family = &entity.Family[db.UserGroup, Group, Fields]{
	Type: EntityType, Event: "group", Listing: ListEntity, WriteNeeds: authz.ManageMembers,
	ReadRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, _, id uuid.UUID, lock bool) (*db.UserGroup, error) {
		if lock {
			return q.GroupGetByIDForUpdate(ctx, db.GroupGetByIDForUpdateParams{OrganizationID: sc.OrganizationID, GroupID: id})
		}
		return q.GroupGetByID(ctx, db.GroupGetByIDParams{OrganizationID: sc.OrganizationID, GroupID: id})
	},
	ReadBySlug: func(ctx context.Context, q *db.Queries, sc authz.Scope, _ uuid.UUID, slug string) (*db.UserGroup, error) {
		return q.GroupGetBySlug(ctx, db.GroupGetBySlugParams{OrganizationID: sc.OrganizationID, Slug: slug})
	},
	ReadByIDs: func(ctx context.Context, q *db.Queries, sc authz.Scope, ids []uuid.UUID) ([]*db.UserGroup, error) {
		return q.GroupListByIDs(ctx, db.GroupListByIDsParams{OrganizationID: sc.OrganizationID, GroupIDs: ids})
	},
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
	DeleteRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Group) (int64, error) {
		return q.GroupDelete(ctx, db.GroupDeleteParams{OrganizationID: sc.OrganizationID, GroupID: cur.ID})
	},
	FromRow: fromRow,
	Ident: func(g Group) entity.Ident {
		return entity.Ident{ID: g.ID, Slug: g.Slug, Version: g.Version, DeleteGates: g.DeleteGates}
	},
	Fields: func(g Group) Fields { return g.Fields },
	Slug:   func(f Fields) string { return f.Slug },
	Target: Group.target,
	Normalize: func(f Fields) (Fields, error) {
		f = f.normalized()
		return f, f.validate()
	},
	Check: checkMembers,
}

// checkMembers requires every User a write adds to be a member of the organization; one that is not (or
// is another organization's) is named as UserIDs.<id>, with the same answer either way. Members already in
// the Group pass again (one who left the organization was taken out when the membership ended).
func checkMembers(ctx context.Context, tx *store.Tx, sc authz.Scope, _ uuid.UUID, cur *Group, f Fields) (Fields, error) {
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

// Service carries out Group operations (the kit's).
type Service = entity.Service[db.UserGroup, Group, Fields]

// NewService serves Groups from a store.
func NewService(deps entity.Deps) *Service {
	return entity.NewService(Family, deps)
}
