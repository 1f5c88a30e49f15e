package oidcprovider

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/password"
)

// The login form's field names (and, but for the CSRF token and request ID, its elements' ids).
const (
	fieldUsername     = "username"
	fieldPassword     = "password"
	fieldOrganization = "organization"
	fieldCSRF         = "csrf_token"
	// csrfCookie holds the browser's random CSRF secret; the form's token is an HMAC of it and the auth
	// request ID, so a token works only in the browser that loaded the page and only for that sign-in.
	csrfCookie = "hubd_oidc_csrf"
	// maxLoginBody bounds a login POST.
	maxLoginBody = 64 << 10
)

// Messages of the login page: one for a wrong username and a wrong password alike.
const (
	msgWrongCredentials = "Wrong username or password."
	msgExpired          = "This sign-in is unknown or has expired. Return to the app and sign in again."
	msgCSRF             = "This form has expired or was not sent from this page. Reload the page and try again."
	msgNotMember        = "This user is not a member of the organization this app signs in to. Ask one of its admins to add you."
	msgNoOrganization   = "This user is not a member of any organization. Ask an organization's admin to add you."
	msgChooseOrg        = "Choose the organization to sign in to, and enter your password again."
	msgOtherBrowser     = "This sign-in was completed in another browser. Return to the app and sign in again."
)

//go:embed login.html
var loginHTML string

var loginTemplate = template.Must(template.New("login").Parse(loginHTML))

// login serves the login page at {issuer}/login: the authorize endpoint redirects here with the auth
// request ID; a right username and password complete the request and send the browser back to the
// provider's callback, which issues the code to the client's redirect URI.
type login struct {
	storage  *storage
	limiter  Limiter
	csrfKey  []byte
	log      *slog.Logger
	secure   bool
	callback func(ctx context.Context, id string) string
}

type loginPage struct {
	Action, RequestID, CSRF, Username, Error, ClientName string
	Organizations                                        []orgOption
	status                                               int
	formAction                                           string
}

type orgOption struct {
	ID, Name string
	Selected bool
}

func (l *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		l.show(w, r)
	case http.MethodPost:
		l.submit(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		l.render(w, loginPage{status: http.StatusMethodNotAllowed, Error: "Use the sign-in form."})
	}
}

// show renders the empty form for the auth request named in the query.
func (l *login) show(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get(loginRequestField)
	req, cl, err := l.request(r.Context(), id)
	if err != nil {
		l.fail(w, err)
		return
	}
	secret := l.csrfSecret(w, r)
	l.render(w, l.form(req, cl, secret, ""))
}

func (l *login) form(req *authRequest, cl *client, secret, username string) loginPage {
	return loginPage{Action: l.storage.issuer + loginPath, RequestID: req.id, CSRF: l.csrfToken(secret, req.id),
		Username: username, ClientName: cl.row.Name, status: http.StatusOK, formAction: origin(req.req.RedirectURI)}
}

// submit checks the form and, on success, completes the auth request.
func (l *login) submit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	if err := r.ParseForm(); err != nil {
		l.render(w, loginPage{status: http.StatusBadRequest, Error: "The form could not be read."})
		return
	}
	ctx := r.Context()
	req, cl, err := l.request(ctx, r.PostForm.Get(loginRequestField))
	if err != nil {
		l.fail(w, err)
		return
	}
	cookie, _ := r.Cookie(csrfCookie)
	if cookie == nil || !hmac.Equal([]byte(r.PostForm.Get(fieldCSRF)), []byte(l.csrfToken(cookie.Value, req.id))) {
		page := l.form(req, cl, l.csrfSecret(w, r), "")
		page.status, page.Error = http.StatusForbidden, msgCSRF
		l.render(w, page)
		return
	}
	username, pw := r.PostForm.Get(fieldUsername), r.PostForm.Get(fieldPassword)
	page := l.form(req, cl, cookie.Value, username)
	credential := "user:" + username
	if wait := l.limiter.Check(r, credential); wait > 0 {
		secs := strconv.Itoa(int(math.Max(1, math.Ceil(wait.Seconds()))))
		w.Header().Set("Retry-After", secs)
		page.status, page.Error = http.StatusTooManyRequests, "Too many failed sign-ins for this username or from this address. Try again in "+secs+" seconds."
		l.render(w, page)
		return
	}
	user, ok, err := l.check(ctx, username, pw)
	if err != nil {
		l.fail(w, err)
		return
	}
	if !ok {
		l.limiter.Failed(r, credential)
		page.Error = msgWrongCredentials
		l.render(w, page)
		return
	}
	orgID, choices, msg, err := l.organization(ctx, cl.row, user, r.PostForm.Get(fieldOrganization))
	if err != nil {
		l.fail(w, err)
		return
	}
	if orgID == uuid.Nil {
		page.Error, page.Organizations = msg, choices
		l.render(w, page)
		return
	}
	n, err := l.storage.store.Q().OIDCAuthRequestComplete(ctx, db.OIDCAuthRequestCompleteParams{
		AuthRequestID: req.id, UserID: &user, OrganizationID: &orgID})
	if err != nil {
		l.fail(w, err)
		return
	}
	if n == 0 {
		l.fail(w, errUnknownRequest)
		return
	}
	// The callback issues the code; only this browser may follow it (guardCallback).
	http.Redirect(w, r, l.callback(ctx, req.id)+"&"+callbackProofField+"="+l.callbackProof(cookie.Value, req.id), http.StatusSeeOther)
}

// callbackProofField carries, on the way to the provider's callback, an HMAC of the browser's CSRF secret
// and the auth request ID.
const callbackProofField = "proof"

func (l *login) callbackProof(secret, requestID string) string {
	return l.csrfToken("callback\x00"+secret, requestID)
}

// guardCallback lets through to the provider's callback (which issues the code to the app's redirect URI)
// only the browser that signed in: whoever else knows an auth request's ID, such as the one who started
// it and sent its login link to someone, gets no code from it.
func (l *login) guardCallback(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		cookie, _ := r.Cookie(csrfCookie)
		if cookie == nil || !hmac.Equal([]byte(q.Get(callbackProofField)), []byte(l.callbackProof(cookie.Value, q.Get("id")))) {
			l.render(w, loginPage{status: http.StatusForbidden, Error: msgOtherBrowser})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// request loads an auth request that is still waiting for its user, and its client.
func (l *login) request(ctx context.Context, id string) (*authRequest, *client, error) {
	if id == "" {
		return nil, nil, errUnknownRequest
	}
	req, err := l.storage.authRequestByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if req.userID != nil {
		return nil, nil, errUnknownRequest
	}
	c, err := l.storage.GetClientByClientID(ctx, req.clientID)
	if err != nil {
		return nil, nil, errUnknownRequest
	}
	return req, c.(*client), nil
}

// check verifies username and password. An unknown user and a user without a password cost the same
// time as a wrong password, and answer the same.
func (l *login) check(ctx context.Context, username, pw string) (uuid.UUID, bool, error) {
	q := l.storage.store.Q()
	u, err := q.UserGetByUsername(ctx, username)
	if apierr.Is(err, apierr.TypeNotFound) || (err == nil && username == "") {
		password.VerifyNone(pw)
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, err
	}
	hash, err := q.UserPasswordGet(ctx, u.UserID)
	if apierr.Is(err, apierr.TypeNotFound) {
		password.VerifyNone(pw)
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, err
	}
	ok, err := password.Verify(pw, hash)
	if err != nil {
		return uuid.Nil, false, err
	}
	return u.UserID, ok, nil
}

// organization decides the organization a sign-in is for: the client's, which the user must belong to;
// for a client serving every organization, the user's only one, or the one chosen on the page. It
// returns uuid.Nil with a message (and the choices) when the page must answer instead.
func (l *login) organization(ctx context.Context, cl *db.OauthClient, user uuid.UUID, chosen string) (uuid.UUID, []orgOption, string, error) {
	q := l.storage.store.Q()
	if !cl.AllowAllOrgs {
		_, err := q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: cl.OrganizationID, UserID: user})
		if apierr.Is(err, apierr.TypeNotFound) {
			return uuid.Nil, nil, msgNotMember, nil
		}
		if err != nil {
			return uuid.Nil, nil, "", err
		}
		return cl.OrganizationID, nil, "", nil
	}
	orgs, err := q.OrganizationMemberListByUser(ctx, user)
	if err != nil {
		return uuid.Nil, nil, "", err
	}
	switch len(orgs) {
	case 0:
		return uuid.Nil, nil, msgNoOrganization, nil
	case 1:
		return orgs[0].OrganizationID, nil, "", nil
	}
	choices := make([]orgOption, len(orgs))
	for i, o := range orgs {
		if o.OrganizationID.String() == chosen {
			return o.OrganizationID, nil, "", nil
		}
		name := o.DisplayName
		if name == "" || name == o.Slug {
			name = o.Slug
		} else {
			name += " (" + o.Slug + ")"
		}
		choices[i] = orgOption{ID: o.OrganizationID.String(), Name: name}
	}
	return uuid.Nil, choices, msgChooseOrg, nil
}

// csrfSecret returns the browser's CSRF secret, setting a new one when it has none.
func (l *login) csrfSecret(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: secret, Path: Path + "/", HttpOnly: true,
		Secure: l.secure, SameSite: http.SameSiteLaxMode})
	return secret
}

func (l *login) csrfToken(secret, requestID string) string {
	m := hmac.New(sha256.New, l.csrfKey)
	m.Write([]byte(secret))
	m.Write([]byte{0})
	m.Write([]byte(requestID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// fail answers an unknown or expired request with 400, any other error with 500 (logged).
func (l *login) fail(w http.ResponseWriter, err error) {
	if err == errUnknownRequest {
		l.render(w, loginPage{status: http.StatusBadRequest, Error: msgExpired})
		return
	}
	l.log.Error("login page failed", "err", err)
	l.render(w, loginPage{status: http.StatusInternalServerError, Error: "Signing in failed on our side. Try again shortly."})
}

func (l *login) render(w http.ResponseWriter, page loginPage) {
	h := w.Header()
	// No script, no framing, forms only to this page and on to the app's redirect URI (the redirects after
	// a successful POST are checked against form-action too).
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"+page.formActionSource())
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(page.status)
	if err := loginTemplate.Execute(w, page); err != nil {
		l.log.Error("rendering the login page", "err", err)
	}
}

func (p loginPage) formActionSource() string {
	if p.formAction == "" {
		return ""
	}
	return " " + p.formAction
}

// origin is scheme://host of u, or "" when u has none.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host
}
