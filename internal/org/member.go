package org

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// MemberType and UserType are the type names of the two families.
const (
	MemberType = "OrganizationMember"
	UserType   = "User"
)

// Member is a User's membership of an organization, with the User's fields.
type Member struct {
	OrganizationID         uuid.UUID
	UserID                 uuid.UUID
	Username               string
	Slug                   string
	DisplayName            string
	ExternalID             string
	ExternalOrganizationID string
	ProfilePictureURL      string
	OrgRole                auth.Role
}

// MemberInput names the User to make a member (by UserID or Username) and the role.
type MemberInput struct {
	UserID      *uuid.UUID
	Username    string
	DisplayName string
	OrgRole     auth.Role
}

// User is a stored User.
type User struct {
	ID                uuid.UUID
	Username          string
	Slug              string
	DisplayName       string
	ExternalID        string
	ProfilePictureURL string
	GroupIDs          []uuid.UUID
	HiddenReason      string
	Version           int64
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

func memberFromRow(r *db.OrganizationMemberGetRow) Member {
	return Member{
		OrganizationID: r.OrganizationID, UserID: r.UserID, Username: r.Username, Slug: r.Slug,
		DisplayName: r.DisplayName, ExternalID: r.ExternalID, ExternalOrganizationID: r.ExternalOrganizationID,
		ProfilePictureURL: r.ProfilePictureURL, OrgRole: auth.Role(r.OrgRole),
	}
}

func userFromRow(r *db.User) User {
	return User{
		ID: r.UserID, Username: r.Username, Slug: r.Slug, DisplayName: r.DisplayName, ExternalID: r.ExternalID,
		ProfilePictureURL: r.ProfilePictureURL, GroupIDs: []uuid.UUID{}, HiddenReason: r.HiddenReason, Version: r.Version,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func loadMember(ctx context.Context, q *db.Queries, orgID, userID uuid.UUID) (Member, error) {
	row, err := q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: orgID, UserID: userID})
	if err != nil {
		return Member{}, apierr.NotFoundAs(err, MemberType, userID.String())
	}
	return memberFromRow(row), nil
}

// Me returns the caller's membership.
func (s *Service) Me(ctx context.Context, sc authz.Scope) (Member, error) {
	m, err := loadMember(ctx, s.Store.Q(), sc.OrganizationID, sc.UserID)
	if err != nil {
		return Member{}, err
	}
	// The token may carry a weaker role than the membership; report the one in force.
	m.OrgRole = sc.Role
	return m, nil
}

// ListMembers returns a page of the members of the caller's organization.
func (s *Service) ListMembers(ctx context.Context, sc authz.Scope, orgID uuid.UUID, path string, params listquery.Params) (listquery.Page[Member], error) {
	if err := ownOrganization(sc, orgID); err != nil {
		return listquery.Page[Member]{}, err
	}
	if err := authz.Check(sc, authz.View, authz.OrganizationTarget(orgID)); err != nil {
		return listquery.Page[Member]{}, err
	}
	page, err := listquery.Run[db.OrganizationMemberGetRow](ctx, s.Store.Pool, s.Tokens,
		listquery.Query{Entity: MemberList, Caller: sc, Path: path, Params: params})
	return mapPage(page, err, func(r *db.OrganizationMemberGetRow) (Member, error) { return memberFromRow(r), nil })
}

// GetMember returns one member of the caller's organization.
func (s *Service) GetMember(ctx context.Context, sc authz.Scope, orgID, userID uuid.UUID) (Member, error) {
	if err := ownOrganization(sc, orgID); err != nil {
		return Member{}, err
	}
	if err := authz.Check(sc, authz.View, authz.OrganizationTarget(orgID)); err != nil {
		return Member{}, err
	}
	return loadMember(ctx, s.Store.Q(), orgID, userID)
}

// CreateMember makes a User a member of the caller's organization, creating the User when it is named
// by a Username nobody has; a User of other organizations named by Username joins as well (Usernames
// are unique in the service), so the answer is the same whether or not the Username existed. Nobody
// grants a role stronger than their own.
func (s *Service) CreateMember(ctx context.Context, sc authz.Scope, orgID uuid.UUID, in MemberInput, opts entity.WriteOptions) (Member, error) {
	if err := ownOrganization(sc, orgID); err != nil {
		return Member{}, err
	}
	if in.OrgRole == "" {
		in.OrgRole = auth.RoleMember
	}
	if !in.OrgRole.Valid() {
		return Member{}, apierr.UserInput("OrgRole must be "+auth.RoleNames, apierr.Item{Item: "OrgRole", Description: "unknown role"})
	}
	if in.UserID == nil && in.Username == "" {
		return Member{}, apierr.UserInput("name the User by UserID or Username", apierr.Item{Item: "UserID", Description: "UserID or Username is required"})
	}
	if err := authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(orgID)); err != nil {
		return Member{}, err
	}
	if err := authz.CheckReach(sc, in.OrgRole, "grant the role"); err != nil {
		return Member{}, err
	}
	var out Member
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		// Serialize membership changes of the organization (and creations of the same member).
		if err := tx.Q.OrganizationLockForMembership(ctx, orgID); err != nil {
			return err
		}
		if existing, err := findMember(ctx, tx, orgID, in); err != nil || existing != nil {
			if err == nil && opts.AllowExists {
				out = *existing
				return nil
			}
			if err == nil {
				return (&apierr.Error{Type: apierr.TypeAlreadyExists, Message: fmt.Sprintf("User %s is already a member of this organization", existing.Username),
					Items: []apierr.Item{{Item: "Username", Description: "already a member"}}}).WithEntity(MemberType, existing.UserID.String(), existing.Slug)
			}
			return err
		}
		user, err := newUser(ctx, tx, in)
		if err != nil {
			return err
		}
		if err := addMember(ctx, tx, orgID, user.ID, in.OrgRole); err != nil {
			return err
		}
		out, err = loadMember(ctx, tx.Q, orgID, user.ID)
		return err
	})
	return out, err
}

// findMember returns the existing membership a MemberInput names, if any. Users outside the organization
// are not visible to it: a UserID of one is refused exactly like an unknown one.
func findMember(ctx context.Context, tx *store.Tx, orgID uuid.UUID, in MemberInput) (*Member, error) {
	var userID uuid.UUID
	switch {
	case in.UserID != nil:
		userID = *in.UserID
	default:
		row, err := tx.Q.UserGetByUsername(ctx, in.Username)
		if apierr.Is(err, apierr.TypeNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		userID = row.UserID
	}
	m, err := loadMember(ctx, tx.Q, orgID, userID)
	switch {
	case err == nil:
		if in.UserID != nil && in.Username != "" && in.Username != m.Username {
			return nil, apierr.Validation("UserID and Username name different Users",
				apierr.Item{Item: "Username", Description: "does not match the User of UserID"})
		}
		return &m, nil
	case !apierr.Is(err, apierr.TypeNotFound):
		return nil, err
	case in.UserID != nil:
		return nil, apierr.Validation("no User with this UserID is a member of this organization; name a new member by Username",
			apierr.Item{Item: "UserID", Description: in.UserID.String()})
	}
	// A Username of a User who belongs to other organizations only: that User joins this one, exactly as a
	// new Username creates a User and joins it, so the answer never tells whether the Username existed.
	return nil, nil
}

// newUser returns the User a new member is named by, creating it when the Username is new.
func newUser(ctx context.Context, tx *store.Tx, in MemberInput) (User, error) {
	return ensureUser(ctx, tx, in.Username, in.DisplayName)
}

var (
	usernamePattern = regexp.MustCompile(`^[^\s\x00-\x1f]{1,128}$`)
	// botUsername is the form of the Usernames of bot Users (CreateBotUser): reserved, so a bot User is
	// never made a member of another organization, and refused by its form alone.
	botUsername = regexp.MustCompile(`^(?i)(sa|bw)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// ensureUser returns the User with username, creating it if there is none. No event tells the two apart
// (the organization the User joins sees organization_member.created either way), so an organization
// cannot learn which Usernames other organizations' Users have.
func ensureUser(ctx context.Context, tx *store.Tx, username, displayName string) (User, error) {
	if !usernamePattern.MatchString(username) {
		return User{}, apierr.UserInput("Username must be 1 to 128 characters without spaces or control characters",
			apierr.Item{Item: "Username", Description: "invalid"})
	}
	if botUsername.MatchString(username) {
		return User{}, apierr.UserInput("Usernames of the form sa-<uuid> and bw-<uuid> are reserved for the bot Users of ServiceAccounts and BridgeWorkers",
			apierr.Item{Item: "Username", Description: "reserved"})
	}
	row, err := tx.Q.UserGetByUsername(ctx, username)
	if err == nil {
		return userFromRow(row), nil
	}
	if !apierr.Is(err, apierr.TypeNotFound) {
		return User{}, err
	}
	id := uuid.New()
	slug := slugFor(username)
	if taken, err := tx.Q.UserSlugTaken(ctx, slug); err != nil {
		return User{}, err
	} else if taken {
		slug = slug + "-" + id.String()[:8]
	}
	row, err = tx.Q.UserInsert(ctx, db.UserInsertParams{UserID: id, Username: username, Slug: slug, DisplayName: displayName})
	if err != nil {
		return User{}, err
	}
	return userFromRow(row), nil
}

// slugFor derives a User's Slug from the Username: characters a Slug cannot hold become '-'.
func slugFor(username string) string {
	s := strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return r
		}
		return '-'
	}, username)
	s = strings.Trim(s, "-_.")
	if s == "" {
		s = "user"
	}
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

func addMember(ctx context.Context, tx *store.Tx, orgID, userID uuid.UUID, role auth.Role) error {
	if err := tx.Q.OrganizationMemberInsert(ctx, db.OrganizationMemberInsertParams{OrganizationID: orgID, UserID: userID, OrgRole: string(role)}); err != nil {
		return err
	}
	tx.Emit(event.Event{
		OrganizationID: orgID, EventType: "organization_member.created", SubjectEntityType: MemberType, SubjectEntityID: userID,
		Payload: event.EntityPayload{EntityType: MemberType, EntityID: userID},
	})
	return nil
}

// DeleteMember ends a membership. The last admin stays; only an admin removes an admin.
func (s *Service) DeleteMember(ctx context.Context, sc authz.Scope, orgID, userID uuid.UUID, dryRun bool) error {
	if err := ownOrganization(sc, orgID); err != nil {
		return err
	}
	if err := authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(orgID)); err != nil {
		return err
	}
	return s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		// Lock the organization so concurrent removals see each other's effect on the admin count.
		if err := tx.Q.OrganizationLockForMembership(ctx, orgID); err != nil {
			return err
		}
		m, err := loadMember(ctx, tx.Q, orgID, userID)
		if err != nil {
			return err
		}
		kind, err := tx.Q.UserBackingKind(ctx, userID)
		if err != nil {
			return err
		}
		if kind != "" {
			return apierr.Conflict("%s is the bot User of a %s; delete the %s instead", m.Username, kind, kind).
				WithEntity(MemberType, userID.String(), m.Slug)
		}
		if m.OrgRole == auth.RoleAdmin {
			if sc.Role != auth.RoleAdmin {
				return apierr.Forbidden("only an admin can remove an admin")
			}
			admins, err := tx.Q.OrganizationMemberCountAdmins(ctx, orgID)
			if err != nil {
				return err
			}
			if admins <= 1 {
				return apierr.Conflict("%s is the organization's last admin; make another member admin first", m.Username).
					WithEntity(MemberType, userID.String(), m.Slug)
			}
		}
		n, err := tx.Q.OrganizationMemberDelete(ctx, db.OrganizationMemberDeleteParams{OrganizationID: orgID, UserID: userID})
		if err != nil {
			return store.TranslateDelete(err, MemberType, userID.String())
		}
		if n == 0 {
			return apierr.NotFound(MemberType, userID.String())
		}
		tx.Emit(event.Event{
			OrganizationID: orgID, EventType: "organization_member.deleted", SubjectEntityType: MemberType, SubjectEntityID: userID,
			Payload: event.EntityPayload{EntityType: MemberType, EntityID: userID, Slug: m.Slug},
		})
		return nil
	})
}

// ListUsers returns a page of the Users that are members of the caller's organization.
func (s *Service) ListUsers(ctx context.Context, sc authz.Scope, path string, params listquery.Params) (listquery.Page[User], error) {
	page, err := listquery.Run[db.User](ctx, s.Store.Pool, s.Tokens,
		listquery.Query{Entity: UserList, Caller: sc, Path: path, Params: params})
	out, err := mapPage(page, err, func(r *db.User) (User, error) { return userFromRow(r), nil })
	if err != nil {
		return out, err
	}
	return out, s.withGroups(ctx, sc, out.Items)
}

// withGroups fills the GroupIDs of users (their Groups in the caller's organization), in one query.
func (s *Service) withGroups(ctx context.Context, sc authz.Scope, users []User) error {
	ids := make([]uuid.UUID, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	groups, err := s.GroupsOf(ctx, s.Store.Q(), sc.OrganizationID, ids)
	if err != nil {
		return err
	}
	for i := range users {
		if g := groups[users[i].ID]; g != nil {
			users[i].GroupIDs = g
		}
	}
	return nil
}

// userTarget is a User as a permission target: every role views the organization's Users, and a guest
// views itself.
func userTarget(id uuid.UUID) authz.Target {
	return authz.Target{EntityType: UserType, ID: id.String(),
		Grants: authz.Grants{string(authz.View): authz.Subjects{UserIDs: map[string]bool{id.String(): true}}}}
}

// UsersByID returns, in one query, the Users among ids that are members of the caller's organization
// (others are left out).
func (s *Service) UsersByID(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]User, error) {
	out := map[uuid.UUID]User{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.Store.Q().UsersInOrganization(ctx, db.UsersInOrganizationParams{OrganizationID: sc.OrganizationID, UserIds: ids})
	if err != nil {
		return nil, err
	}
	users := make([]User, 0, len(rows))
	for _, r := range rows {
		if sc.Allows(authz.View, userTarget(r.UserID)) {
			users = append(users, userFromRow(r))
		}
	}
	if err := s.withGroups(ctx, sc, users); err != nil {
		return nil, err
	}
	for _, u := range users {
		out[u.ID] = u
	}
	return out, nil
}

// GetUser returns a User that is a member of the caller's organization; any other is NotFound.
func (s *Service) GetUser(ctx context.Context, sc authz.Scope, id uuid.UUID) (User, error) {
	if err := authz.Viewable(sc, userTarget(id), id.String()); err != nil {
		return User{}, err
	}
	if _, err := loadMember(ctx, s.Store.Q(), sc.OrganizationID, id); err != nil {
		if apierr.Is(err, apierr.TypeNotFound) {
			return User{}, apierr.NotFound(UserType, id.String())
		}
		return User{}, err
	}
	row, err := s.Store.Q().UserGetByID(ctx, id)
	if err != nil {
		return User{}, apierr.NotFoundAs(err, UserType, id.String())
	}
	users := []User{userFromRow(row)}
	return users[0], s.withGroups(ctx, sc, users)
}

// RoleOf returns a user's current role in an organization, for authenticating its tokens. ok is false
// when the membership no longer exists.
func (s *Service) RoleOf(ctx context.Context, orgID, userID uuid.UUID) (role auth.Role, ok bool, err error) {
	row, err := s.Store.Q().OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: orgID, UserID: userID})
	if apierr.Is(err, apierr.TypeNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return auth.Role(row.OrgRole), true, nil
}

// EnsureMembership is what `hubd token` does: it finds or creates the organization (by Slug), the User
// (by Username) and the membership. A role given sets the membership's role; none keeps it (admin when new).
func (s *Service) EnsureMembership(ctx context.Context, orgSlug, username string, role auth.Role) (auth.Principal, error) {
	if role != "" && !role.Valid() {
		return auth.Principal{}, apierr.UserInput("role must be " + auth.RoleNames)
	}
	var p auth.Principal
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		var o Organization
		row, err := tx.Q.OrganizationGetBySlug(ctx, orgSlug)
		switch {
		case err == nil:
			if o, err = organizationFromRow(row); err != nil {
				return err
			}
		case apierr.Is(err, apierr.TypeNotFound):
			f := OrganizationFields{Common: entity.Common{Slug: orgSlug, DisplayName: orgSlug}}
			f.Meta = f.Meta.Normalized()
			if err := f.Common.Validate(false); err != nil {
				return err
			}
			if o, err = insertOrganization(ctx, tx, f); err != nil {
				return err
			}
		default:
			return err
		}
		u, err := ensureUser(ctx, tx, username, "")
		if err != nil {
			return err
		}
		m, err := loadMember(ctx, tx.Q, o.ID, u.ID)
		switch {
		case apierr.Is(err, apierr.TypeNotFound):
			if role == "" {
				role = auth.RoleAdmin
			}
			if err := addMember(ctx, tx, o.ID, u.ID, role); err != nil {
				return err
			}
		case err != nil:
			return err
		case role == "":
			role = m.OrgRole
		case role != m.OrgRole:
			if err := tx.Q.OrganizationMemberSetRole(ctx, db.OrganizationMemberSetRoleParams{OrganizationID: o.ID, UserID: u.ID, OrgRole: string(role)}); err != nil {
				return err
			}
			tx.Emit(event.Event{
				OrganizationID: o.ID, EventType: "organization_member.updated", SubjectEntityType: MemberType, SubjectEntityID: u.ID,
				Payload: event.EntityPayload{EntityType: MemberType, EntityID: u.ID},
			})
		}
		p = auth.Principal{UserID: u.ID, OrganizationID: o.ID, Role: role}
		return nil
	})
	return p, err
}
