package httpapi

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/hubd/hubd/internal/identity"
	"github.com/hubd/hubd/internal/signin"
)

// tokenExchange serves the token-exchange grant (RFC 8693) of POST {base}/auth/token: the identity
// provider's access token (subject_token) becomes a service token for the member it names
// (identity.Exchanger). Failed exchanges count against the sign-in guard like failed assertions, per
// the token's subject from the caller's address.
func (s *Server) tokenExchange(c echo.Context, form url.Values) error {
	fail := func(status int, code, description string) error { return oauthFail(c, status, code, description) }
	subjectToken := form.Get("subject_token")
	if subjectToken == "" {
		return fail(http.StatusBadRequest, "invalid_request", "subject_token is required: the identity provider's access token")
	}
	if t := form.Get("subject_token_type"); t != tokenTypeAccess {
		return fail(http.StatusBadRequest, "invalid_request", "subject_token_type must be "+tokenTypeAccess)
	}
	if t := form.Get("requested_token_type"); t != "" && t != tokenTypeAccess {
		return fail(http.StatusBadRequest, "invalid_request", "requested_token_type must be "+tokenTypeAccess+" (or absent)")
	}
	credential := "subject:" + identity.SubjectHint(subjectToken)
	if wait := s.signIns.check(c.Request(), credential); wait > 0 {
		return s.signInsRefused(c, wait)
	}
	p, err := s.deps.Exchange.Exchange(c.Request().Context(), subjectToken)
	if ge, ok := signin.IsGrantError(err); ok {
		s.signIns.failed(c.Request(), credential)
		return fail(http.StatusBadRequest, ge.Code, ge.Description)
	}
	var unavailable *identity.UnavailableError
	if errors.As(err, &unavailable) {
		s.log.Warn("identity provider unavailable", "issuer", unavailable.Issuer, "err", unavailable.Err)
		return fail(http.StatusServiceUnavailable, "temporarily_unavailable",
			"the identity provider ("+unavailable.Issuer+") cannot be reached to verify the token; retry shortly")
	}
	if err != nil {
		return s.oauthInternal(c, err)
	}
	return s.issue(c, p)
}
