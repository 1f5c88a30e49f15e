package httpapi

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/serviceaccount"
	"github.com/hubd/hubd/internal/signin"
)

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

func (h *handlers) ListServiceAccounts(ctx context.Context, r api.ListServiceAccountsRequestObject) (api.ListServiceAccountsResponseObject, error) {
	page, err := h.s.deps.ServiceAccounts.List(ctx, requestPath(ctx), listParams(r.Params))
	if err != nil {
		return nil, err
	}
	out, err := h.extendServiceAccounts(ctx, page.Items, page.Includes)
	if err != nil {
		return nil, err
	}
	return newPage(out, serviceaccount.EntityType, page.Fields, page.Continue), nil
}

func (h *handlers) extendServiceAccounts(ctx context.Context, sas []serviceaccount.ServiceAccount, includes map[string]bool) ([]api.ExtendedServiceAccount, error) {
	org, err := h.includedOrganization(ctx, includes)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(sas))
	for i, sa := range sas {
		ids[i] = sa.UserID
	}
	users, err := h.includedUsers(ctx, includes, ids)
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

func (h *handlers) GetServiceAccount(ctx context.Context, r api.GetServiceAccountRequestObject) (api.GetServiceAccountResponseObject, error) {
	fields, err := listquery.SelectFields(serviceaccount.ListEntity, deref(r.Params.Select))
	if err != nil {
		return nil, err
	}
	includes, err := listquery.ParseIncludes(serviceaccount.ListEntity, deref(r.Params.Include))
	if err != nil {
		return nil, err
	}
	sa, err := h.s.deps.ServiceAccounts.Get(ctx, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	ext, err := h.extendServiceAccounts(ctx, []serviceaccount.ServiceAccount{sa}, includes)
	if err != nil {
		return nil, err
	}
	return itemResponse{item: ext[0], entityField: serviceaccount.EntityType, fields: fields}, nil
}

func (h *handlers) CreateServiceAccount(ctx context.Context, r api.CreateServiceAccountRequestObject) (api.CreateServiceAccountResponseObject, error) {
	sa, err := h.s.deps.ServiceAccounts.Create(ctx, serviceAccountFields(r.Body),
		serviceaccount.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateServiceAccount200JSONResponse{Body: serviceAccountToAPI(sa)}, nil
}

func (h *handlers) UpdateServiceAccount(ctx context.Context, r api.UpdateServiceAccountRequestObject) (api.UpdateServiceAccountResponseObject, error) {
	sa, err := h.s.deps.ServiceAccounts.Update(ctx, r.ServiceAccountId, r.Body.Version, serviceAccountFields(r.Body), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.UpdateServiceAccount200JSONResponse{Body: serviceAccountToAPI(sa)}, nil
}

func (h *handlers) PatchServiceAccount(ctx context.Context, r api.PatchServiceAccountRequestObject) (api.PatchServiceAccountResponseObject, error) {
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	sa, err := h.s.deps.ServiceAccounts.Patch(ctx, r.ServiceAccountId, patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.PatchServiceAccount200JSONResponse{Body: serviceAccountToAPI(sa)}, nil
}

func (h *handlers) DeleteServiceAccount(ctx context.Context, r api.DeleteServiceAccountRequestObject) (api.DeleteServiceAccountResponseObject, error) {
	if err := h.s.deps.ServiceAccounts.Delete(ctx, r.ServiceAccountId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteServiceAccount200JSONResponse{Body: deleted(serviceaccount.EntityType)}, nil
}

func (h *handlers) BulkPatchServiceAccounts(ctx context.Context, r api.BulkPatchServiceAccountsRequestObject) (api.BulkPatchServiceAccountsResponseObject, error) {
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	items, err := h.s.deps.ServiceAccounts.BulkPatch(ctx, requestPath(ctx), sel, patch, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out := make([]api.ServiceAccountCreateOrUpdateResponse, len(items))
	errs := make([]*apierr.Error, len(items))
	for i, it := range items {
		errs[i] = it.Err
		if it.Err != nil {
			re := responseError(it.Err)
			out[i] = api.ServiceAccountCreateOrUpdateResponse{Error: &re}
			continue
		}
		a := serviceAccountToAPI(it.Value)
		out[i] = api.ServiceAccountCreateOrUpdateResponse{ServiceAccount: &a}
	}
	status, err := bulkStatus(errs)
	if err != nil {
		return nil, err
	}
	if status == http.StatusMultiStatus {
		return api.BulkPatchServiceAccounts207JSONResponse{Body: out}, nil
	}
	return api.BulkPatchServiceAccounts200JSONResponse{Body: out}, nil
}

func (h *handlers) BulkDeleteServiceAccounts(ctx context.Context, r api.BulkDeleteServiceAccountsRequestObject) (api.BulkDeleteServiceAccountsResponseObject, error) {
	sel := listParams(r.Params)
	if err := entity.RequireSelection(sel); err != nil {
		return nil, err
	}
	items, err := h.s.deps.ServiceAccounts.BulkDelete(ctx, requestPath(ctx), sel, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	out := make([]api.DeleteResponse, len(items))
	errs := make([]*apierr.Error, len(items))
	for i, it := range items {
		errs[i] = it.Err
		out[i] = bulkDeleted(serviceaccount.EntityType, it.Ref, it.Err)
	}
	status, err := bulkStatus(errs)
	if err != nil {
		return nil, err
	}
	if status == http.StatusMultiStatus {
		return api.BulkDeleteServiceAccounts207JSONResponse{Body: out}, nil
	}
	return api.BulkDeleteServiceAccounts200JSONResponse{Body: out}, nil
}

// accountUser resolves a ServiceAccount to its backing User; listing its keys needs View on it.
func (h *handlers) accountUser(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	sa, err := h.s.deps.ServiceAccounts.Get(ctx, id)
	return sa.UserID, err
}

// memberUser requires a User of the caller's organization (any other is NotFound).
func (h *handlers) memberUser(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	u, err := h.s.deps.Orgs.GetUser(ctx, id)
	return u.ID, err
}

func (h *handlers) ListServiceAccountKeys(ctx context.Context, r api.ListServiceAccountKeysRequestObject) (api.ListServiceAccountKeysResponseObject, error) {
	userID, err := h.accountUser(ctx, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	keys, err := h.s.deps.SignIn.ListKeys(ctx, userID)
	if err != nil {
		return nil, err
	}
	return api.ListServiceAccountKeys200JSONResponse{Body: keysToAPI(keys)}, nil
}

func (h *handlers) CreateServiceAccountKey(ctx context.Context, r api.CreateServiceAccountKeyRequestObject) (api.CreateServiceAccountKeyResponseObject, error) {
	userID, err := h.accountUser(ctx, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	k, err := h.s.deps.SignIn.RegisterKey(ctx, userID, r.Body.PublicJWK, r.Body.Description, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.CreateServiceAccountKey200JSONResponse{Body: keyToAPI(k)}, nil
}

func (h *handlers) DeleteServiceAccountKey(ctx context.Context, r api.DeleteServiceAccountKeyRequestObject) (api.DeleteServiceAccountKeyResponseObject, error) {
	userID, err := h.accountUser(ctx, r.ServiceAccountId)
	if err != nil {
		return nil, err
	}
	if err := h.s.deps.SignIn.DeleteKey(ctx, userID, r.Kid); err != nil {
		return nil, err
	}
	return api.DeleteServiceAccountKey200JSONResponse{Body: deleted("UserKey")}, nil
}

func (h *handlers) ListUserKeys(ctx context.Context, r api.ListUserKeysRequestObject) (api.ListUserKeysResponseObject, error) {
	userID, err := h.memberUser(ctx, r.UserId)
	if err != nil {
		return nil, err
	}
	if err := authz.Check(authz.Caller(ctx), authz.View, authz.OrganizationTarget(authz.Caller(ctx).OrganizationID)); err != nil {
		return nil, err
	}
	keys, err := h.s.deps.SignIn.ListKeys(ctx, userID)
	if err != nil {
		return nil, err
	}
	return api.ListUserKeys200JSONResponse{Body: keysToAPI(keys)}, nil
}

func (h *handlers) CreateUserKey(ctx context.Context, r api.CreateUserKeyRequestObject) (api.CreateUserKeyResponseObject, error) {
	userID, err := h.memberUser(ctx, r.UserId)
	if err != nil {
		return nil, err
	}
	k, err := h.s.deps.SignIn.RegisterKey(ctx, userID, r.Body.PublicJWK, r.Body.Description, flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.CreateUserKey200JSONResponse{Body: keyToAPI(k)}, nil
}

func (h *handlers) DeleteUserKey(ctx context.Context, r api.DeleteUserKeyRequestObject) (api.DeleteUserKeyResponseObject, error) {
	userID, err := h.memberUser(ctx, r.UserId)
	if err != nil {
		return nil, err
	}
	if err := h.s.deps.SignIn.DeleteKey(ctx, userID, r.Kid); err != nil {
		return nil, err
	}
	return api.DeleteUserKey200JSONResponse{Body: deleted("UserKey")}, nil
}
