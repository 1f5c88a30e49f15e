package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/serviceaccount"
	"github.com/hubd/hubd/internal/signin"
)

// serviceAccountAPI serves the ServiceAccount operations and the keys of accounts and Users.
type serviceAccountAPI struct{ *base }

func serviceAccountToAPI(s serviceaccount.ServiceAccount) api.ServiceAccount {
	return api.ServiceAccount{ServiceAccountID: s.ID, UserID: s.UserID, OrganizationID: s.OrganizationID, Slug: s.Slug,
		DisplayName: s.DisplayName, Labels: s.Labels, Annotations: s.Annotations, DeleteGates: s.DeleteGates,
		Permissions: permissionsToAPI(s.Permissions), OrgRole: api.OrgRole(s.OrgRole), HiddenReason: s.HiddenReason,
		EntityType: serviceaccount.EntityType, CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), Version: s.Version}
}

func serviceAccountFields(b *api.ServiceAccount) serviceaccount.Fields {
	return serviceaccount.Fields{Slug: b.Slug, DisplayName: b.DisplayName, OrgRole: auth.Role(b.OrgRole),
		Permissions: permissionsFromAPI(b.Permissions),
		Meta:        entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}}
}

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

func (h serviceAccountAPI) ListServiceAccounts(ctx context.Context, r api.ListServiceAccountsRequestObject) (api.ListServiceAccountsResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.ServiceAccounts.List(ctx, sc, nil, requestPath(ctx), listParams(ctx, r.Params))
	return listed(ctx, sc, page, err, serviceaccount.EntityType, h.extendServiceAccounts)
}

func (h serviceAccountAPI) extendServiceAccounts(ctx context.Context, sc authz.Scope, sas []serviceaccount.ServiceAccount, includes map[string]bool) ([]api.ExtendedServiceAccount, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(sas))
	for i, sa := range sas {
		ids[i] = sa.UserID
	}
	users, err := h.includedUsers(ctx, sc, includes, ids)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedServiceAccount, len(sas))
	for i, sa := range sas {
		out[i] = api.ExtendedServiceAccount{ServiceAccount: serviceAccountToAPI(sa), Organization: org}
		if u, ok := users[sa.UserID]; ok {
			out[i].User = &u
		}
	}
	return out, nil
}

func (h serviceAccountAPI) GetServiceAccount(ctx context.Context, r api.GetServiceAccountRequestObject) (api.GetServiceAccountResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, serviceaccount.ListEntity, r.Params.Select, r.Params.Include, func() (serviceaccount.ServiceAccount, error) {
		return h.s.deps.ServiceAccounts.Get(ctx, sc, uuid.Nil, r.ServiceAccountId.String())
	}, h.extendServiceAccounts)
}

func (h serviceAccountAPI) CreateServiceAccount(ctx context.Context, r api.CreateServiceAccountRequestObject) (api.CreateServiceAccountResponseObject, error) {
	sc := scopeOf(ctx)
	sa, err := h.s.deps.ServiceAccounts.Create(ctx, sc, uuid.Nil, serviceAccountFields(r.Body),
		entity.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateServiceAccount200JSONResponse{Body: serviceAccountToAPI(sa)}, nil
}

func (h serviceAccountAPI) UpdateServiceAccount(ctx context.Context, r api.UpdateServiceAccountRequestObject) (api.UpdateServiceAccountResponseObject, error) {
	sc := scopeOf(ctx)
	sa, err := h.s.deps.ServiceAccounts.Update(ctx, sc, uuid.Nil, r.ServiceAccountId.String(), r.Body.Version, serviceAccountFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateServiceAccount200JSONResponse{Body: serviceAccountToAPI(sa)}, nil
}

func (h serviceAccountAPI) PatchServiceAccount(ctx context.Context, r api.PatchServiceAccountRequestObject) (api.PatchServiceAccountResponseObject, error) {
	sc := scopeOf(ctx)
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	sa, err := h.s.deps.ServiceAccounts.Patch(ctx, sc, uuid.Nil, r.ServiceAccountId.String(), patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchServiceAccount200JSONResponse{Body: serviceAccountToAPI(sa)}, nil
}

func (h serviceAccountAPI) DeleteServiceAccount(ctx context.Context, r api.DeleteServiceAccountRequestObject) (api.DeleteServiceAccountResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.ServiceAccounts.Delete(ctx, sc, uuid.Nil, r.ServiceAccountId.String(), flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteServiceAccount200JSONResponse{Body: deleted(serviceaccount.EntityType)}, nil
}

func (h serviceAccountAPI) BulkPatchServiceAccounts(ctx context.Context, r api.BulkPatchServiceAccountsRequestObject) (api.BulkPatchServiceAccountsResponseObject, error) {
	return answeredInBulk(patchedInBulk[serviceaccount.ServiceAccount](ctx, h.s.deps.ServiceAccounts, r.Params, r.Params.DryRun, []*json.RawMessage{r.JSONBody, r.ApplicationMergePatchPlusJSONBody}, func(it entity.BulkItem[serviceaccount.ServiceAccount], e *api.ResponseError) api.ServiceAccountCreateOrUpdateResponse {
		if e != nil {
			return api.ServiceAccountCreateOrUpdateResponse{Error: e}
		}
		written := serviceAccountToAPI(it.Value)
		return api.ServiceAccountCreateOrUpdateResponse{ServiceAccount: &written}
	}))
}

func (h serviceAccountAPI) BulkDeleteServiceAccounts(ctx context.Context, r api.BulkDeleteServiceAccountsRequestObject) (api.BulkDeleteServiceAccountsResponseObject, error) {
	return answeredInBulk(deletedInBulk[serviceaccount.ServiceAccount](ctx, h.s.deps.ServiceAccounts, serviceaccount.EntityType, r.Params, r.Params.DryRun))
}

// accountUser resolves a ServiceAccount to its backing User; listing its keys needs View on it.
func (h serviceAccountAPI) accountUser(ctx context.Context, sc authz.Scope, id uuid.UUID) (uuid.UUID, error) {
	sa, err := h.s.deps.ServiceAccounts.Get(ctx, sc, uuid.Nil, id.String())
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
