package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/password"
)

func TestUserAddCommand(t *testing.T) {
	dbURL := apitest.NewDatabase(t)
	env := apitest.New(t, apitest.Options{DatabaseURL: dbURL})
	ctx := context.Background()
	add := func(stdin string, extra ...string) (string, error) {
		args := append([]string{"add", "--database-url", dbURL, "--base-url", env.URL}, extra...)
		return captureStdout(t, func() error { return userCmd(ctx, args, strings.NewReader(stdin)) })
	}
	passwordOf := func(id uuid.UUID) string {
		h, err := env.App.Store.Q().UserPasswordGet(ctx, id)
		require.NoError(t, err)
		return h
	}

	out, err := add("first password\nignored second line\n", "--org", "acme", "--username", "carol", "--role", "member")
	require.NoError(t, err)
	id, err := uuid.Parse(strings.TrimSpace(out))
	require.NoError(t, err)
	u, err := env.App.Store.Q().UserGetByUsername(ctx, "carol")
	require.NoError(t, err)
	require.Equal(t, id, u.UserID)
	require.Equal(t, "carol", u.Slug)
	ok, err := password.Verify("first password", passwordOf(id))
	require.NoError(t, err)
	require.True(t, ok)
	role, member, err := env.App.Orgs.RoleOf(ctx, env.Principal("acme", "carol", "").OrganizationID, id)
	require.NoError(t, err)
	require.True(t, member)
	require.Equal(t, auth.RoleMember, role)

	// Again for the same Username: the same User, the new role and password (stdin without a newline).
	out, err = add("second password", "--org", "acme", "--username", "carol", "--role", "manager")
	require.NoError(t, err)
	require.Equal(t, id.String(), strings.TrimSpace(out))
	ok, err = password.Verify("second password", passwordOf(id))
	require.NoError(t, err)
	require.True(t, ok)
	role, _, err = env.App.Orgs.RoleOf(ctx, env.Principal("acme", "carol", "").OrganizationID, id)
	require.NoError(t, err)
	require.Equal(t, auth.RoleManager, role)

	// An existing User (made by hubd token) joins another organization and gets a password.
	dave := env.Principal("acme", "dave", auth.RoleAdmin)
	out, err = add("daves password\n", "--org", "beta", "--username", "dave", "--role", "viewer")
	require.NoError(t, err)
	require.Equal(t, dave.UserID.String(), strings.TrimSpace(out))

	for name, c := range map[string]struct {
		stdin string
		args  []string
	}{
		"empty password": {"\n", []string{"--org", "acme", "--username", "erin", "--role", "member"}},
		"no stdin":       {"", []string{"--org", "acme", "--username", "erin", "--role", "member"}},
		"short password": {"1234567\n", []string{"--org", "acme", "--username", "erin", "--role", "member"}},
		"no role":        {"long enough\n", []string{"--org", "acme", "--username", "erin"}},
		"bad role":       {"long enough\n", []string{"--org", "acme", "--username", "erin", "--role", "owner"}},
		"no username":    {"long enough\n", []string{"--org", "acme", "--role", "member"}},
	} {
		_, err := add(c.stdin, c.args...)
		require.Error(t, err, name)
	}
	_, err = env.App.Store.Q().UserGetByUsername(ctx, "erin")
	require.Error(t, err, "refused commands create no User")
}
