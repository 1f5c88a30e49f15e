package httpapi

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/signin"
)

// serviceAccountAPI serves the keys of ServiceAccounts and Users (edge_service_account.gen.go serves
// the ServiceAccount operations).
type serviceAccountAPI struct{ *base }

func keyToAPI(k signin.Key) api.UserKey {
	return api.UserKey{UserKeyID: k.ID, OrganizationID: k.OrganizationID, UserID: k.UserID, Kid: k.Kid, PublicJWK: k.PublicJWK,
		Description: k.Description, MaxOrgRole: api.OrgRole(k.MaxOrgRole), ExpiresAt: k.ExpiresAt, LastUsedAt: k.LastUsedAt,
		CreatedAt: k.CreatedAt.UTC()}
}

func keysToAPI(keys []signin.Key) []api.UserKey {
	out := make([]api.UserKey, len(keys))
	for i, k := range keys {
		out[i] = keyToAPI(k)
	}
	return out
}

// accountUser resolves a ServiceAccount to its backing User; listing its keys needs View on it.
func (h serviceAccountAPI) accountUser(ctx context.Context, sc authz.Scope, id uuid.UUID) (uuid.UUID, error) {
	sa, err := serviceAccountEdge.of(h.base).Get(ctx, sc, uuid.Nil, id.String())
	return sa.UserID, err
}

// memberUser requires a User of the caller's organization (any other is NotFound).
func (h serviceAccountAPI) memberUser(ctx context.Context, sc authz.Scope, id uuid.UUID) (uuid.UUID, error) {
	u, err := h.s.deps.Orgs.GetUser(ctx, sc, id)
	return u.ID, err
}

func (h serviceAccountAPI) ListServiceAccountKeys(ctx context.Context, r api.ListServiceAccountKeysRequestObject) (api.ListServiceAccountKeysResponseObject, error) {
	sc := scopeOf(ctx)
	userID, err := h.accountUser(ctx, sc, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	keys, err := h.s.deps.SignIn.ListKeys(ctx, sc, userID)
	if err != nil {
		return nil, err
	}
	return api.ListServiceAccountKeys200JSONResponse{Body: keysToAPI(keys)}, nil
}

func (h serviceAccountAPI) CreateServiceAccountKey(ctx context.Context, r api.CreateServiceAccountKeyRequestObject) (api.CreateServiceAccountKeyResponseObject, error) {
	sc := scopeOf(ctx)
	userID, err := h.accountUser(ctx, sc, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	k, err := h.s.deps.SignIn.RegisterKey(ctx, sc, userID, r.Body.PublicJWK, r.Body.Description, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.CreateServiceAccountKey200JSONResponse{Body: keyToAPI(k)}, nil
}

func (h serviceAccountAPI) DeleteServiceAccountKey(ctx context.Context, r api.DeleteServiceAccountKeyRequestObject) (api.DeleteServiceAccountKeyResponseObject, error) {
	sc := scopeOf(ctx)
	userID, err := h.accountUser(ctx, sc, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	if err := h.s.deps.SignIn.DeleteKey(ctx, sc, userID, r.Kid); err != nil {
		return nil, err
	}
	return api.DeleteServiceAccountKey200JSONResponse{Body: deleted("UserKey")}, nil
}

func (h serviceAccountAPI) ListUserKeys(ctx context.Context, r api.ListUserKeysRequestObject) (api.ListUserKeysResponseObject, error) {
	sc := scopeOf(ctx)
	userID, err := h.memberUser(ctx, sc, r.UserId)
	if err != nil {
		return nil, err
	}
	if err := authz.Check(sc, authz.View, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return nil, err
	}
	keys, err := h.s.deps.SignIn.ListKeys(ctx, sc, userID)
	if err != nil {
		return nil, err
	}
	return api.ListUserKeys200JSONResponse{Body: keysToAPI(keys)}, nil
}

func (h serviceAccountAPI) CreateUserKey(ctx context.Context, r api.CreateUserKeyRequestObject) (api.CreateUserKeyResponseObject, error) {
	sc := scopeOf(ctx)
	userID, err := h.memberUser(ctx, sc, r.UserId)
	if err != nil {
		return nil, err
	}
	k, err := h.s.deps.SignIn.RegisterKey(ctx, sc, userID, r.Body.PublicJWK, r.Body.Description, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.CreateUserKey200JSONResponse{Body: keyToAPI(k)}, nil
}

func (h serviceAccountAPI) DeleteUserKey(ctx context.Context, r api.DeleteUserKeyRequestObject) (api.DeleteUserKeyResponseObject, error) {
	sc := scopeOf(ctx)
	userID, err := h.memberUser(ctx, sc, r.UserId)
	if err != nil {
		return nil, err
	}
	if err := h.s.deps.SignIn.DeleteKey(ctx, sc, userID, r.Kid); err != nil {
		return nil, err
	}
	return api.DeleteUserKey200JSONResponse{Body: deleted("UserKey")}, nil
}
