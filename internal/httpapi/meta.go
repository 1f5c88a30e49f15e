package httpapi

import (
	"context"

	"github.com/hubd/hubd/gen/api"
)

// metaAPI serves the document, /api/info and /api/me.
type metaAPI struct{ *base }

func (h metaAPI) GetAPIDocs(ctx context.Context, _ api.GetAPIDocsRequestObject) (api.GetAPIDocsResponseObject, error) {
	return rawJSON(h.s.docJSON), nil
}

func (h metaAPI) ApiInfo(ctx context.Context, _ api.ApiInfoRequestObject) (api.ApiInfoResponseObject, error) {
	// Without an identity provider browser apps cannot sign in (AuthIssuer is empty); the audience is then
	// the one a signed assertion names: the token endpoint.
	issuer, audience := "", h.s.cfg.BaseURL+"/auth/token"
	if x := h.s.deps.Exchange; x != nil {
		issuer, audience = x.Issuer(), x.Audience()
	}
	return api.ApiInfo200JSONResponse{Body: api.ApiInfo{
		AuthIssuer:            issuer,
		TokenExchangeEndpoint: h.s.cfg.BaseURL + "/auth/token",
		TokenExchangeAudience: audience,
		Version:               h.s.cfg.Version,
	}}, nil
}

func (h metaAPI) GetMe(ctx context.Context, _ api.GetMeRequestObject) (api.GetMeResponseObject, error) {
	sc := scopeOf(ctx)
	m, err := h.s.deps.Orgs.Me(ctx, sc)
	if err != nil {
		return nil, err
	}
	return api.GetMe200JSONResponse{Body: memberToAPI(m)}, nil
}
