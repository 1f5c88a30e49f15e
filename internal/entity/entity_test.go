package entity_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apierr/apierrtest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
)

func TestValidateSlug(t *testing.T) {
	t.Parallel()
	for _, slug := range []string{"a", "A9", "web-1", "a_b.c-d", "1", strings.Repeat("x", 128)} {
		require.NoError(t, entity.ValidateSlug(slug), slug)
	}
	apierrtest.Require(t, entity.ValidateSlug(""), apierr.TypeUserInput, "Slug")
	for _, slug := range []string{"-a", "a-", ".a", "a.", "_a", "a b", "a/b", "caf\u00e9", "a\n", strings.Repeat("x", 129)} {
		apierrtest.Require(t, entity.ValidateSlug(slug), apierr.TypeUserInput, "Slug")
	}
}

func TestMetaNormalized(t *testing.T) {
	t.Parallel()
	m := entity.Meta{}.Normalized()
	require.NotNil(t, m.Labels)
	require.NotNil(t, m.Annotations)
	require.NotNil(t, m.DeleteGates)
	// Empty maps, not null: the wire form always carries the three objects.
	out, err := json.Marshal(m)
	require.NoError(t, err)
	require.JSONEq(t, `{"Labels": {}, "Annotations": {}, "DeleteGates": {}}`, string(out))

	kept := entity.Meta{Labels: map[string]string{"tier": "prod"}}.Normalized()
	require.Equal(t, map[string]string{"tier": "prod"}, kept.Labels)
}

func TestMetaValidate(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", 253)
	tests := []struct {
		name  string
		meta  entity.Meta
		items []string // nil: valid
	}{
		{"empty maps", entity.Meta{}, nil},
		{"keys of 1 and 253 characters", entity.Meta{Labels: map[string]string{"a": "", long: "x"}, DeleteGates: map[string]bool{"keep": true}}, nil},
		{"an empty label key", entity.Meta{Labels: map[string]string{"": "x"}}, []string{"Labels"}},
		{"a key of 254 characters", entity.Meta{Annotations: map[string]string{long + "k": "x"}}, []string{"Annotations"}},
		{"one item per map however many keys are bad", entity.Meta{Labels: map[string]string{"": "x", long + "k": "y"}}, []string{"Labels"}},
		{"every map named, in order", entity.Meta{
			Labels: map[string]string{"": "x"}, Annotations: map[string]string{"": "x"}, DeleteGates: map[string]bool{"": true},
		}, []string{"Annotations", "DeleteGates", "Labels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.meta.Validate()
			if tt.items == nil {
				require.NoError(t, err)
				return
			}
			apierrtest.Require(t, err, apierr.TypeValidation, tt.items...)
		})
	}
}

func TestDecodeMeta(t *testing.T) {
	t.Parallel()
	m, err := entity.DecodeMeta(nil, []byte(`{}`), []byte(`{"keep": true}`))
	require.NoError(t, err)
	require.Equal(t, map[string]string{}, m.Labels, "an unread column is an empty map")
	require.Equal(t, map[string]string{}, m.Annotations)
	require.Equal(t, map[string]bool{"keep": true}, m.DeleteGates)

	_, err = entity.DecodeMeta([]byte(`{"a": 1}`), nil, nil)
	require.Error(t, err, "a label value that is not a string")
	_, err = entity.DecodeMeta(nil, nil, []byte(`[true]`))
	require.Error(t, err, "DeleteGates that are not an object")
}

func TestVersionRules(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	apierrtest.Require(t, entity.RequireVersion(0), apierr.TypeUserInput, "Version")
	apierrtest.Require(t, entity.RequireVersion(-1), apierr.TypeUserInput, "Version")
	require.NoError(t, entity.RequireVersion(1))

	require.NoError(t, entity.CheckVersion("Tag", id, nil, 7), "a PATCH without Version is not checked")
	seven, six := int64(7), int64(6)
	require.NoError(t, entity.CheckVersion("Tag", id, &seven, 7))
	e := apierrtest.Require(t, entity.CheckVersion("Tag", id, &six, 7), apierr.TypeConflict)
	require.Equal(t, "Tag", e.EntityType)
	require.Equal(t, id.String(), e.EntityID)
	require.Contains(t, e.Message, "Version 6 was sent but 7 is stored")

	for patch, want := range map[string]*int64{`{"Version": 7}`: &seven, `{}`: nil, `{"Version": null}`: nil, `{"Slug": "x"}`: nil} {
		got, err := entity.SentVersion([]byte(patch))
		require.NoError(t, err, patch)
		require.Equal(t, want, got, patch)
	}
	for _, patch := range []string{`[]`, `"x"`, `{"Version": "7"}`, `{`} {
		_, err := entity.SentVersion([]byte(patch))
		apierrtest.Require(t, err, apierr.TypeUserInput)
	}
}

func TestCheckDeleteGates(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	require.NoError(t, entity.CheckDeleteGates("Space", id, "dev", nil))
	require.NoError(t, entity.CheckDeleteGates("Space", id, "dev", map[string]bool{}))

	err := entity.CheckDeleteGates("Space", id, "dev", map[string]bool{"release": true, "audit": true})
	e := apierrtest.Require(t, err, apierr.TypeConflict, "DeleteGates.audit", "DeleteGates.release")
	require.Equal(t, "Space", e.EntityType)
	require.Equal(t, id.String(), e.EntityID)
	require.Equal(t, "dev", e.EntitySlug)
}

func TestChangeEvent(t *testing.T) {
	t.Parallel()
	org, id, spaceID := uuid.New(), uuid.New(), uuid.New()
	tests := []struct {
		change entity.Change
		space  *entity.SpaceRef
		want   string
	}{
		{entity.Created, &entity.SpaceRef{ID: spaceID, Slug: "dev"}, "tag.created"},
		{entity.Updated, &entity.SpaceRef{ID: spaceID, Slug: "dev"}, "tag.updated"},
		{entity.Deleted, nil, "tag.deleted"},
	}
	for _, tt := range tests {
		e := entity.ChangeEvent("tag", "Tag", tt.change, org, id, "v1", 3, tt.space)
		require.Equal(t, tt.want, e.EventType)
		require.Equal(t, org, e.OrganizationID)
		require.Equal(t, "Tag", e.SubjectEntityType)
		require.Equal(t, id, e.SubjectEntityID)
		p, ok := e.Payload.(event.EntityPayload)
		require.True(t, ok, "payload %T", e.Payload)
		require.Equal(t, event.EntityPayload{EntityType: "Tag", EntityID: id, Slug: "v1", Version: 3, SpaceSlug: spaceSlug(tt.space)}, p)
		if tt.space == nil {
			require.Nil(t, e.SpaceID, "an entity of the organization has no Space")
		} else {
			require.Equal(t, spaceID, *e.SpaceID)
		}
	}
}

func spaceSlug(s *entity.SpaceRef) string {
	if s == nil {
		return ""
	}
	return s.Slug
}

func TestSlugClash(t *testing.T) {
	t.Parallel()
	// The unique violation translated where the query ran is anonymous: SlugClash names the entity.
	clash := entity.SlugClash(apierr.AlreadyExists("", ""), "Filter", "prod")
	e := apierrtest.Require(t, clash, apierr.TypeAlreadyExists, "Slug")
	require.Equal(t, "Filter", e.EntityType)
	require.Equal(t, "prod", e.EntitySlug)

	other := apierr.Conflict("stale")
	require.Same(t, other, entity.SlugClash(other, "Filter", "prod"))
	require.NoError(t, entity.SlugClash(nil, "Filter", "prod"))
}

func TestMergePatch(t *testing.T) {
	t.Parallel()
	type fields struct {
		Slug   string            `json:"Slug"`
		Labels map[string]string `json:"Labels"`
		Count  int               `json:"Count"`
	}
	base := fields{Slug: "web", Labels: map[string]string{"tier": "prod", "team": "a"}, Count: 2}
	tests := []struct {
		name, patch, want string
	}{
		{"a field replaced", `{"Slug": "api"}`, `{"Slug": "api", "Labels": {"tier": "prod", "team": "a"}, "Count": 2}`},
		{"maps merge key by key", `{"Labels": {"tier": "dev"}}`, `{"Slug": "web", "Labels": {"tier": "dev", "team": "a"}, "Count": 2}`},
		{"null removes a key", `{"Labels": {"team": null}}`, `{"Slug": "web", "Labels": {"tier": "prod"}, "Count": 2}`},
		{"null removes a field", `{"Count": null}`, `{"Slug": "web", "Labels": {"tier": "prod", "team": "a"}}`},
		{"an empty patch changes nothing", `{}`, `{"Slug": "web", "Labels": {"tier": "prod", "team": "a"}, "Count": 2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := entity.MergePatch(base, []byte(tt.patch))
			require.NoError(t, err)
			require.JSONEq(t, tt.want, string(got))
		})
	}
	_, err := entity.MergePatch(base, []byte(`{"Slug": `))
	apierrtest.Require(t, err, apierr.TypeUserInput)
}

func TestPermissionTargets(t *testing.T) {
	t.Parallel()
	type row struct {
		id          uuid.UUID
		permissions string
	}
	a, b := uuid.New(), uuid.New()
	user := uuid.NewString()
	rows := []row{{a, `{"Edit": {"UserIDs": {"` + user + `": true}}}`}, {b, ``}}
	of := func(r row) (uuid.UUID, []byte, authz.Target) {
		return r.id, []byte(r.permissions), authz.Target{EntityType: "View", ID: r.id.String()}
	}
	got, err := entity.PermissionTargets(rows, of)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "View", got[a].EntityType)
	require.True(t, got[a].Grants["Edit"].UserIDs[user])
	require.Empty(t, got[b].Grants)

	_, err = entity.PermissionTargets([]row{{a, `{"Edit": []}`}}, of)
	require.Error(t, err)
}

func TestBulkSelectionRules(t *testing.T) {
	t.Parallel()
	for _, p := range []listquery.Params{{}, {Where: "  "}, {Contains: " \t"}} {
		apierrtest.Require(t, entity.RequireSelection(p), apierr.TypeUserInput, "where")
	}
	for _, p := range []listquery.Params{{Where: "Slug = 'a'"}, {Filter: "mine"}, {Contains: "web"}} {
		require.NoError(t, entity.RequireSelection(p))
	}
	e := apierrtest.Require(t, entity.TooManySelected("Unit"), apierr.TypeUserInput, "where")
	require.Contains(t, e.Message, "more than 1000 Units")
}

// TestGranteesCheck: only subjects a write adds are looked up; each one not found is named by its dot
// path, Users and Groups in one error.
func TestGranteesCheck(t *testing.T) {
	t.Parallel()
	member, stranger, group, oldGroup, unknownGroup := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	var asked [][]uuid.UUID
	among := func(known ...uuid.UUID) entity.Among {
		return func(_ context.Context, _ authz.Scope, _ *db.Queries, ids []uuid.UUID) ([]uuid.UUID, error) {
			asked = append(asked, ids)
			var out []uuid.UUID
			for _, id := range ids {
				for _, k := range known {
					if id == k {
						out = append(out, id)
					}
				}
			}
			return out, nil
		}
	}
	g := entity.Grantees{Users: among(member), Groups: among(group)}
	sc := authz.RequestScope(auth.Principal{OrganizationID: uuid.New(), UserID: uuid.New(), Role: auth.RoleAdmin})
	grants := func(perm string, users, groups []uuid.UUID) authz.Grants {
		s := authz.Subjects{UserIDs: map[string]bool{}, GroupIDs: map[string]bool{}}
		for _, u := range users {
			s.UserIDs[u.String()] = true
		}
		for _, gr := range groups {
			s.GroupIDs[gr.String()] = true
		}
		return authz.Grants{perm: s}
	}
	ctx := context.Background()

	require.NoError(t, g.Check(ctx, sc, nil, "Permissions", nil, grants("Edit", []uuid.UUID{member}, []uuid.UUID{group})))

	// A Group named before passes again without a lookup (it may have been deleted since).
	asked = nil
	before := grants("View", nil, []uuid.UUID{oldGroup})
	require.NoError(t, g.Check(ctx, sc, nil, "Permissions", before, before))
	require.Empty(t, asked, "nothing new, nothing looked up")

	err := g.Check(ctx, sc, nil, "Permissions", nil, authz.Grants{
		"Edit": {UserIDs: map[string]bool{stranger.String(): true, member.String(): true}},
		"View": {GroupIDs: map[string]bool{unknownGroup.String(): true}},
	})
	e := apierrtest.Require(t, err, apierr.TypeValidation, "Permissions.Edit.UserIDs."+stranger.String(), "Permissions.View.GroupIDs."+unknownGroup.String())
	require.Contains(t, e.Message, "User")
	require.Contains(t, e.Message, "Group")

	// The same subject granted another permission is new there, and checked.
	err = g.Check(ctx, sc, nil, "Permissions", grants("View", []uuid.UUID{stranger}, nil), grants("Edit", []uuid.UUID{stranger}, nil))
	apierrtest.Require(t, err, apierr.TypeValidation, "Permissions.Edit.UserIDs."+stranger.String())
}
