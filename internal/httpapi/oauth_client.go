package httpapi

import (
	"context"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/oauthclient"
)

// oauthClientAPI serves the OAuthClient family (registered public clients of browser apps).
type oauthClientAPI struct{ *base }

func oauthClientToAPI(c oauthclient.Client) api.OAuthClient {
	return api.OAuthClient{ClientID: c.ClientID, Name: c.Name, RedirectURIs: c.RedirectURIs, AllowAllOrgs: c.AllowAllOrgs,
		OrganizationID: c.OrganizationID, CreatedAt: c.CreatedAt}
}

func (h oauthClientAPI) ListOAuthClients(ctx context.Context, _ api.ListOAuthClientsRequestObject) (api.ListOAuthClientsResponseObject, error) {
	clients, err := h.s.deps.OAuthClients.List(ctx, scopeOf(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]api.OAuthClient, len(clients))
	for i, c := range clients {
		out[i] = oauthClientToAPI(c)
	}
	return api.ListOAuthClients200JSONResponse{Body: out}, nil
}

func (h oauthClientAPI) CreateOAuthClient(ctx context.Context, r api.CreateOAuthClientRequestObject) (api.CreateOAuthClientResponseObject, error) {
	c, err := h.s.deps.OAuthClients.Create(ctx, scopeOf(ctx), oauthclient.Input{
		Name: r.Body.Name, RedirectURIs: r.Body.RedirectURIs, AllowAllOrgs: r.Body.AllowAllOrgs})
	if err != nil {
		return nil, err
	}
	return api.CreateOAuthClient200JSONResponse{Body: oauthClientToAPI(c)}, nil
}

func (h oauthClientAPI) GetOAuthClient(ctx context.Context, r api.GetOAuthClientRequestObject) (api.GetOAuthClientResponseObject, error) {
	c, err := h.s.deps.OAuthClients.Get(ctx, scopeOf(ctx), r.OauthClient)
	if err != nil {
		return nil, err
	}
	return api.GetOAuthClient200JSONResponse{Body: oauthClientToAPI(c)}, nil
}

func (h oauthClientAPI) DeleteOAuthClient(ctx context.Context, r api.DeleteOAuthClientRequestObject) (api.DeleteOAuthClientResponseObject, error) {
	if err := h.s.deps.OAuthClients.Delete(ctx, scopeOf(ctx), r.OauthClient); err != nil {
		return nil, err
	}
	return api.DeleteOAuthClient200JSONResponse{Body: deleted(oauthclient.EntityType)}, nil
}
