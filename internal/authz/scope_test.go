package authz_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
)

func TestScopeChecks(t *testing.T) {
	t.Parallel()
	org, user := uuid.New(), uuid.New()
	channel := authz.Target{EntityType: "Channel", ID: uuid.NewString()}
	granted := authz.Target{EntityType: "Channel", ID: uuid.NewString(),
		Grants: authz.Grants{string(authz.Claim): {UserIDs: map[string]bool{user.String(): true}}}}
	viewer := authz.RequestScope(auth.Principal{UserID: user, OrganizationID: org, Role: auth.RoleViewer})
	system := authz.SystemScope(org, "command-run-sweeper")

	tests := []struct {
		name  string
		sc    authz.Scope
		perm  authz.Permission
		t     authz.Target
		allow bool
	}{
		{"a viewer views", viewer, authz.View, channel, true},
		{"a viewer does not edit", viewer, authz.Edit, channel, false},
		{"a grant lets a viewer claim", viewer, authz.Claim, granted, true},
		{"a system principal claims", system, authz.Claim, channel, true},
		{"a system principal manages the organization", system, authz.ManageOrganization, authz.OrganizationTarget(org), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.allow, tt.sc.Allows(tt.perm, tt.t))
			err := authz.Check(tt.sc, tt.perm, tt.t)
			if tt.allow {
				require.NoError(t, err)
			} else {
				require.True(t, apierr.Is(err, apierr.TypePermission), "got %v", err)
			}
		})
	}

	require.True(t, system.IsSystem())
	require.False(t, viewer.IsSystem())
	require.Equal(t, uuid.Nil, system.UserID, "a system principal is no User")
	require.NoError(t, authz.CheckReach(system, auth.RoleAdmin, "grant the role"))
	require.Error(t, authz.CheckReach(viewer, auth.RoleMember, "grant the role"))
	require.Equal(t, []int{1, 3}, authz.Filter(system, authz.Delete, []int{1, 3}, func(int) authz.Target { return channel }))
	require.Empty(t, authz.Filter(viewer, authz.Delete, []int{1, 3}, func(int) authz.Target { return channel }))

	// The zero Scope is nobody: a bug at the call site, refused as an unauthenticated request would be.
	require.True(t, apierr.Is(authz.Check(authz.Scope{}, authz.View, channel), apierr.TypeAuthentication))
}
