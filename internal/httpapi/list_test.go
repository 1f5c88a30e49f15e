package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// listFixture is an organization with Spaces of varied fields.
type listFixture struct {
	env    *apitest.Env
	c      *apitest.Client
	spaces map[string]api.Space // by Slug
}

func newListFixture(t *testing.T) *listFixture {
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	comp := uuid.MustParse("6f1c1a2e-1111-4222-8333-444455556666")
	f := &listFixture{env: env, c: c, spaces: map[string]api.Space{}}
	for _, body := range []map[string]any{
		{"Slug": "alpha", "DisplayName": "Alpha Team", "Labels": map[string]string{"tier": "prod", "app.kubernetes.io/name": "web"}},
		{"Slug": "beta", "DisplayName": "beta", "Labels": map[string]string{"tier": "dev"}, "Annotations": map[string]string{"owner": "Platform"}},
		{"Slug": "gamma", "DisplayName": "Gamma 100%", "DeleteGates": map[string]bool{"keep": true}},
		{"Slug": "delta", "DisplayName": "Delta_x", "Labels": map[string]string{"tier": "prod"}, "DeleteGates": map[string]bool{"keep": false}},
	} {
		sp := createSpace(t, c, body)
		f.spaces[sp.Slug] = sp
	}
	// gamma is a Variant of a Component of a known ID (the where cases name it), set directly.
	_, err := env.App.Store.Pool.Exec(context.Background(), `INSERT INTO component (component_id, organization_id, slug)
		SELECT $1, organization_id, 'gamma-comp' FROM space WHERE slug = 'gamma'`, comp)
	require.NoError(t, err)
	_, err = env.App.Store.Pool.Exec(context.Background(), "UPDATE space SET component_id = $1 WHERE slug = 'gamma'", comp)
	require.NoError(t, err)
	return f
}

// slugs lists with the query and returns the Slugs, in response order.
func (f *listFixture) slugs(t *testing.T, query url.Values) []string {
	t.Helper()
	var list []api.ExtendedSpace
	f.c.Get("/api/space?" + query.Encode()).Expect(http.StatusOK).JSON(&list)
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Space.Slug
	}
	return out
}

func where(w string) url.Values { return url.Values{"where": {w}} }

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestWhereOperators(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	gamma := f.spaces["gamma"]
	for w, want := range map[string][]string{
		`Slug = 'alpha'`:                                           {"alpha"},
		`Slug != 'alpha'`:                                          {"beta", "delta", "gamma"},
		`Slug < 'c'`:                                               {"alpha", "beta"},
		`Slug > 'c'`:                                               {"delta", "gamma"},
		`Slug <= 'beta'`:                                           {"alpha", "beta"},
		`Slug >= 'delta'`:                                          {"delta", "gamma"},
		`DisplayName LIKE 'Al%'`:                                   {"alpha"},
		`DisplayName NOT LIKE '%a%'`:                               {},
		`DisplayName ILIKE 'al%'`:                                  {"alpha"},
		`DisplayName ~~ '_eta'`:                                    {"beta"},
		`DisplayName !~~ '%e%'`:                                    {"gamma"},
		`DisplayName ~ '^[A-Z]'`:                                   {"alpha", "delta", "gamma"},
		`DisplayName ~* '^BETA$'`:                                  {"beta"},
		`DisplayName !~ '^[A-Z]'`:                                  {"beta"},
		`DisplayName !~* 'a'`:                                      {},
		`Slug IN ('alpha', 'gamma', 'nope')`:                       {"alpha", "gamma"},
		`Slug NOT IN ('alpha', 'gamma')`:                           {"beta", "delta"},
		`SpaceID = '` + gamma.SpaceID.String() + `'`:               {"gamma"},
		`SpaceID != '` + gamma.SpaceID.String() + `'`:              {"alpha", "beta", "delta"},
		`ComponentID = '6f1c1a2e-1111-4222-8333-444455556666'`:     {"gamma"},
		`ComponentID IS NULL`:                                      {"alpha", "beta", "delta"},
		`ComponentID IS NOT NULL`:                                  {"gamma"},
		`DeleteGates.keep = true`:                                  {"gamma"},
		`DeleteGates.keep != true`:                                 {"delta"},
		`DeleteGates.keep IS NOT NULL`:                             {"delta", "gamma"},
		`Labels.tier = 'prod'`:                                     {"alpha", "delta"},
		`Labels.tier != 'prod'`:                                    {"beta"},
		`Labels.tier IS NULL`:                                      {"gamma"},
		`Labels.'app.kubernetes.io/name' = 'web'`:                  {"alpha"},
		`Labels.tier LIKE 'p%'`:                                    {"alpha", "delta"},
		`Annotations.owner ILIKE 'platform'`:                       {"beta"},
		`(Labels.tier = 'prod') IS NOT TRUE`:                       {"beta", "gamma"},
		`(Labels.tier = 'prod') IS TRUE`:                           {"alpha", "delta"},
		`(Labels.tier = 'prod') IS FALSE`:                          {"beta"},
		`(Labels.tier = 'prod') IS NOT FALSE`:                      {"alpha", "delta", "gamma"},
		`Labels.tier = 'prod' AND Slug != 'alpha'`:                 {"delta"},
		`CreatedAt = UpdatedAt`:                                    {"alpha", "beta", "delta", "gamma"},
		`Slug = DisplayName`:                                       {"beta"},
		`CreatedAt > '2000-01-01T00:00:00Z'`:                       {"alpha", "beta", "delta", "gamma"},
		`CreatedAt < '2000-01-01T00:00:00Z'`:                       {},
		`HiddenReason = ''`:                                        {"alpha", "beta", "delta", "gamma"},
		`OrganizationID = '` + gamma.OrganizationID.String() + `'`: {"alpha", "beta", "delta", "gamma"},
	} {
		got := f.slugs(t, where(w))
		require.Equal(t, sorted(want), sorted(got), w)
	}
}

func TestWhereIntegersArraysAndMembers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	bob := env.Principal("acme", "bob", auth.RoleMember)
	env.Principal("acme", "carol", auth.RoleViewer)
	var g1, g2 api.Group
	c.Post("/api/group", map[string]any{"Slug": "g1", "UserIDs": []uuid.UUID{bob.UserID}}).Expect(http.StatusOK).JSON(&g1)
	c.Post("/api/group", map[string]any{"Slug": "g2", "UserIDs": []uuid.UUID{bob.UserID}}).Expect(http.StatusOK).JSON(&g2)

	users := func(w string) []string {
		var list []api.ExtendedUser
		c.Get("/api/user?" + where(w).Encode()).Expect(http.StatusOK).JSON(&list)
		var out []string
		for _, u := range list {
			out = append(out, u.User.Username)
		}
		sort.Strings(out)
		return out
	}
	require.Equal(t, []string{"bob"}, users(`GroupIDs ? '`+g1.GroupID.String()+`'`))
	require.Equal(t, []string(nil), users(`GroupIDs ? '`+uuid.NewString()+`'`))
	require.Equal(t, []string{"bob"}, users(`LEN(GroupIDs) = 2`))
	require.Equal(t, []string{"alice", "carol"}, users(`LEN(GroupIDs) != 2`))
	require.Equal(t, []string{"alice", "carol"}, users(`LEN(GroupIDs) < 1`))
	require.Equal(t, []string{"bob"}, users(`LEN(GroupIDs) > 1`))
	require.Equal(t, []string{"alice", "bob", "carol"}, users(`LEN(GroupIDs) >= 0`))
	require.Equal(t, []string{"alice", "carol"}, users(`LEN(GroupIDs) <= 0`))
	require.Equal(t, []string{"bob"}, users(`LEN(GroupIDs) IN (2, 3)`))
	require.Equal(t, []string{"alice", "carol"}, users(`LEN(GroupIDs) NOT IN (2, 3)`))
	require.Equal(t, []string{"bob"}, users(`Username = 'bob'`))
	var u []api.ExtendedUser
	c.Get("/api/user?order_by=DESC:Username&select=Username").Expect(http.StatusOK).JSON(&u)
	require.Equal(t, "carol", u[0].User.Username)

	// Members: the attributes the API names for where.
	var me api.OrganizationMember
	c.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	members := "/api/organization/" + me.OrganizationID.String() + "/organization_member?"
	var ms []api.ExtendedOrganizationMember
	c.Get(members + where(`Username IN ('bob', 'carol') AND OrgRole = 'viewer'`).Encode()).Expect(http.StatusOK).JSON(&ms)
	require.Len(t, ms, 1)
	require.Equal(t, "carol", ms[0].OrganizationMember.Username)
	c.Get(members + where(`UserID = '`+bob.UserID.String()+`' AND Slug = 'bob' AND DisplayName = '' AND ExternalID = ''`).Encode()).Expect(http.StatusOK).JSON(&ms)
	require.Len(t, ms, 1)
	c.Get(members + url.Values{"contains": {"CAR"}}.Encode()).Expect(http.StatusOK).JSON(&ms)
	require.Len(t, ms, 1)

	// The organization list takes the same language.
	var orgs []api.ExtendedOrganization
	c.Get("/api/organization?" + where(`Slug = 'acme'`).Encode()).Expect(http.StatusOK).JSON(&orgs)
	require.Len(t, orgs, 1)
	c.Get("/api/organization?" + where(`Slug = 'other'`).Encode()).Expect(http.StatusOK).JSON(&orgs)
	require.Empty(t, orgs)
}

func TestWhereErrors(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	for w, frag := range map[string]string{
		`Nope = 'a'`:               "position 1",
		`Slug = 'a`:                "not closed",
		`Slug = 'a' OR Slug = 'b'`: "OR is not supported",
		`SpaceID LIKE 'a%'`:        "LIKE does not apply",
		`SpaceID = 'not-a-uuid'`:   "a quoted UUID",
		`CreatedAt > 'yesterday'`:  "a quoted time",
		`Slug = 5`:                 "a quoted string",
		`Labels = 'x'`:             "is a map",
		`Slug.*.x = 'a'`:           "not a list of entities",
		`Slug IS NULL`:             "never null",
		`Permissions = 'x'`:        "not an attribute",
		`DisplayName ~ '('`:        "where: invalid regular expression: parentheses () not balanced",
		`Slug`:                     "expected an operator",
	} {
		e := f.c.Get("/api/space?"+where(w).Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.Contains(t, e.Error.Message, frag, w)
		require.Equal(t, "where", e.Error.ErrorMetadata.Items[0].Item, w)
	}
	// The same rules on every list.
	f.c.Get("/api/user?"+where(`Bogus = 1`).Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// A too-long expression is refused by the document's limit before parsing.
	f.c.Get("/api/space?"+where("Slug = '"+strings.Repeat("x", 9000)+"'").Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
}

// TestWhereInjection: expressions crafted as SQL reach the database only as values.
func TestWhereInjection(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	for _, w := range []string{
		`Slug = 'x'' OR ''1''=''1'`,
		`Slug = 'alpha''; DELETE FROM space; --'`,
		`Labels.'tier'' OR 1=1 --' IS NOT NULL`,
		`Slug IN ('a'') OR (1=1', 'b')`,
	} {
		require.Empty(t, f.slugs(t, where(w)), w)
	}
	require.Len(t, f.slugs(t, url.Values{}), 4, "nothing was deleted")
}

func TestContains(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	for q, want := range map[string][]string{
		"ALPHA":      {"alpha"},          // Slug and DisplayName, case-insensitively
		"team":       {"alpha"},          // DisplayName
		"kubernetes": {"alpha"},          // a label key
		"prod":       {"alpha", "delta"}, // a label value
		"platform":   {"beta"},           // an annotation value
		"100%":       {"gamma"},          // % is literal
		"_x":         {"delta"},          // _ is literal
		"zzz":        {},
	} {
		got := f.slugs(t, url.Values{"contains": {q}})
		require.Equal(t, sorted(want), sorted(got), q)
	}
	// contains is ANDed with where.
	require.Equal(t, []string{"delta"}, f.slugs(t, url.Values{"contains": {"prod"}, "where": {`Slug != 'alpha'`}}))
}

func TestFilterAndView(t *testing.T) {
	t.Parallel()
	f := newListFixture(t)
	// A Filter or View that does not exist is a missing reference, by ID, by Space/Slug or by Slug (outside a
	// Space, a bare Slug names none).
	for _, ref := range []string{uuid.NewString(), "dev/nope", "nope/nope", "not-a-uuid"} {
		e := f.c.Get("/api/space?filter="+ref).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, "filter", e.Error.ErrorMetadata.Items[0].Item)
		e = f.c.Get("/api/space?view="+ref).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, "view", e.Error.ErrorMetadata.Items[0].Item)
	}
	e := f.c.Get("/api/space?filter=not-a-uuid").ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "outside a Space")
	f.c.Get("/api/user?view="+uuid.NewString()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}
