package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
)

func permissionsToAPI(g authz.Grants) api.Permissions {
	out := api.Permissions{}
	for name, s := range g {
		out[name] = api.PermissionSubjects{UserIDs: s.UserIDs, GroupIDs: s.GroupIDs}
	}
	return out
}

func permissionsFromAPI(p api.Permissions) authz.Grants {
	out := authz.Grants{}
	for name, s := range p {
		out[name] = authz.Subjects{UserIDs: s.UserIDs, GroupIDs: s.GroupIDs}
	}
	return out
}
