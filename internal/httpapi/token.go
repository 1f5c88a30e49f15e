package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/signin"
	"github.com/hubd/hubd/internal/store"
)

// The grant types of POST {base}/auth/token (one token endpoint for both).
const (
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
)

// tokenResponse is the endpoint's success body (RFC 6749 section 5.1, plus organization_id).
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	IssuedTokenType string `json:"issued_token_type"`
	OrganizationID  string `json:"organization_id"`
}

// oauthError is the endpoint's error body (RFC 6749 section 5.2): the one place the error body differs.
type oauthError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// oauthFail answers an RFC 6749 error (section 5.2).
func oauthFail(c echo.Context, status int, code, description string) error {
	return c.JSON(status, oauthError{Error: code, ErrorDescription: description})
}

// oauthInternal answers a failure of the service itself in the token endpoints' error shape: 503
// temporarily_unavailable when the database cannot take requests, else 500 server_error (logged).
func (s *Server) oauthInternal(c echo.Context, err error) error {
	ae := apierr.From(store.Translate(err))
	if ae.Type == apierr.TypeServiceUnavailable || ae.Type == apierr.TypeGatewayTimeout {
		return oauthFail(c, http.StatusServiceUnavailable, "temporarily_unavailable", "the service cannot issue tokens right now; retry shortly")
	}
	s.log.Error("token endpoint failed", "path", c.Request().URL.Path, "err", err)
	return oauthFail(c, http.StatusInternalServerError, "server_error", "the service failed to issue a token; retry, else report it")
}

// token serves POST {base}/auth/token: a signed assertion of a registered key (RFC 7523) becomes a
// service token, and so does an identity provider's access token (RFC 8693 token exchange,
// tokenExchange) when one is configured.
func (s *Server) token(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	fail := func(status int, code, description string) error { return oauthFail(c, status, code, description) }
	if err := c.Request().ParseForm(); err != nil {
		return fail(http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	form := c.Request().PostForm
	switch form.Get("grant_type") {
	case grantJWTBearer:
	case grantTokenExchange:
		if s.deps.Exchange == nil {
			return fail(http.StatusBadRequest, "unsupported_grant_type", "token exchange needs an identity provider, and none is configured (see /api/info AuthIssuer)")
		}
		return s.tokenExchange(c, form)
	case "":
		return fail(http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		return fail(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be "+grantJWTBearer)
	}
	assertion := form.Get("assertion")
	if assertion == "" {
		return fail(http.StatusBadRequest, "invalid_request", "assertion is required")
	}
	var orgID *uuid.UUID
	if v := form.Get("organization_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			return fail(http.StatusBadRequest, "invalid_request", "organization_id must be a UUID")
		}
		orgID = &id
	}
	kid, _ := signin.KeyID(assertion)
	credential := "key:" + kid
	if wait := s.signIns.check(c.Request(), credential); wait > 0 {
		return s.signInsRefused(c, wait)
	}
	p, err := s.deps.SignIn.Exchange(c.Request().Context(), assertion, s.cfg.BaseURL+"/auth/token", orgID)
	if ge, ok := signin.IsGrantError(err); ok {
		s.signIns.failed(c.Request(), credential)
		return fail(http.StatusBadRequest, ge.Code, ge.Description)
	}
	if err != nil {
		return s.oauthInternal(c, err)
	}
	return s.issue(c, p)
}

// signInsRefused answers a sign-in attempt made while its credential or address has too many recent
// failures (signInGuard).
func (s *Server) signInsRefused(c echo.Context, wait time.Duration) error {
	c.Response().Header().Set("Retry-After", retryAfterSeconds(wait))
	return oauthFail(c, http.StatusTooManyRequests, "slow_down",
		"too many failed sign-ins for this credential or from this address; retry after "+retryAfterSeconds(wait)+" seconds")
}

func (s *Server) issue(c echo.Context, p auth.Principal) error {
	return s.issueWith(c, s.deps.Issuer, p)
}

// issueWith answers a token of issuer for p in the endpoint's success shape.
func (s *Server) issueWith(c echo.Context, issuer *auth.Issuer, p auth.Principal) error {
	tok, exp, err := issuer.Mint(p)
	if err != nil {
		return s.oauthInternal(c, err)
	}
	return c.JSON(http.StatusOK, tokenResponse{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int64(time.Until(exp).Seconds()),
		IssuedTokenType: tokenTypeAccess, OrganizationID: p.OrganizationID.String()})
}
