package oidcprovider

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/store"
)

// Lifetimes of what the provider issues and keeps.
const (
	authRequestTTL = 10 * time.Minute
	accessTokenTTL = 15 * time.Minute
	idTokenTTL     = 15 * time.Minute
)

// ScopeOrganization asks for the organization claim, which token exchange needs.
const ScopeOrganization = "organization"

// storage is op.Storage over PostgreSQL: auth requests and codes in oidc_auth_request, clients in
// oauth_client, users in app_user. It holds nothing in memory that a flow depends on.
type storage struct {
	store *store.Store
	key   *signingKey
	// issuer is {base_url}/oidc; exchangeAudience is {base_url}/auth/token, where apps exchange the tokens.
	issuer, exchangeAudience string
}

var (
	_ op.Storage                        = (*storage)(nil)
	_ op.CanSetUserinfoFromRequest      = (*storage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*storage)(nil)
)

// storedRequest is what oidc_auth_request.request keeps of an authorization request.
type storedRequest struct {
	Scopes              []string                 `json:"scopes"`
	ResponseType        oidc.ResponseType        `json:"response_type"`
	ResponseMode        oidc.ResponseMode        `json:"response_mode,omitempty"`
	RedirectURI         string                   `json:"redirect_uri"`
	State               string                   `json:"state,omitempty"`
	Nonce               string                   `json:"nonce,omitempty"`
	CodeChallenge       string                   `json:"code_challenge"`
	CodeChallengeMethod oidc.CodeChallengeMethod `json:"code_challenge_method"`
}

// authRequest is op.AuthRequest read from a row.
type authRequest struct {
	id, clientID string
	req          storedRequest
	userID       *uuid.UUID
	orgID        *uuid.UUID
	authTime     time.Time
	audience     []string
}

func (a *authRequest) GetID() string         { return a.id }
func (a *authRequest) GetACR() string        { return "" }
func (a *authRequest) GetAMR() []string      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string { return a.audience }
func (a *authRequest) GetAuthTime() time.Time {
	return a.authTime
}
func (a *authRequest) GetClientID() string { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}
func (a *authRequest) GetNonce() string                   { return a.req.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.req.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.req.ResponseMode }
func (a *authRequest) GetScopes() []string                { return a.req.Scopes }
func (a *authRequest) GetState() string                   { return a.req.State }
func (a *authRequest) GetSubject() string {
	if a.userID == nil {
		return ""
	}
	return a.userID.String()
}
func (a *authRequest) Done() bool { return a.userID != nil && a.orgID != nil }

func (s *storage) requestFromRow(row *db.OidcAuthRequest) (*authRequest, error) {
	a := &authRequest{id: row.AuthRequestID, clientID: row.ClientID, userID: row.UserID, orgID: row.OrganizationID,
		audience: []string{s.exchangeAudience, row.ClientID}}
	if err := json.Unmarshal(row.Request, &a.req); err != nil {
		return nil, fmt.Errorf("reading auth request %s: %w", row.AuthRequestID, err)
	}
	if row.AuthTime != nil {
		a.authTime = *row.AuthTime
	}
	return a, nil
}

// randomID is 32 random bytes, base64url: auth request IDs are bearer secrets until the request is done.
func randomID() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// CreateAuthRequest stores a validated authorization request. PKCE with S256 is required of every client
// (all are public): a request without a code_challenge, or with the plain method, is refused here, before
// anything is stored or a login page shown.
func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if contains(req.Prompt, oidc.PromptNone) {
		// No sign-in is remembered between requests: every one shows the login page.
		return nil, oidc.ErrLoginRequired().WithDescription("this provider keeps no session: sign in without prompt=none")
	}
	if req.CodeChallenge == "" {
		return nil, oidc.ErrInvalidRequest().WithDescription("PKCE is required: send code_challenge with code_challenge_method S256")
	}
	if req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	}
	if req.ResponseType != oidc.ResponseTypeCode {
		return nil, oidc.ErrInvalidRequest().WithDescription("response_type must be code")
	}
	id, err := randomID()
	if err != nil {
		return nil, err
	}
	stored := storedRequest{Scopes: req.Scopes, ResponseType: req.ResponseType, ResponseMode: req.ResponseMode,
		RedirectURI: req.RedirectURI, State: req.State, Nonce: req.Nonce, CodeChallenge: req.CodeChallenge,
		CodeChallengeMethod: req.CodeChallengeMethod}
	data, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	q := s.store.Q()
	// Expired requests go when new ones come: the table holds at most ten minutes of sign-ins.
	if err := q.OIDCAuthRequestPrune(ctx); err != nil {
		return nil, err
	}
	if err := q.OIDCAuthRequestInsert(ctx, db.OIDCAuthRequestInsertParams{AuthRequestID: id, ClientID: req.ClientID,
		Request: data, TtlSeconds: int64(authRequestTTL.Seconds())}); err != nil {
		return nil, err
	}
	return &authRequest{id: id, clientID: req.ClientID, req: stored, audience: []string{s.exchangeAudience, req.ClientID}}, nil
}

// errUnknownRequest is the answer for an auth request or code that is unknown, expired or used.
var errUnknownRequest = errors.New("the authorization request is unknown or expired")

func (s *storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	return s.authRequestByID(ctx, id)
}

func (s *storage) authRequestByID(ctx context.Context, id string) (*authRequest, error) {
	row, err := s.store.Q().OIDCAuthRequestGet(ctx, id)
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil, errUnknownRequest
	}
	if err != nil {
		return nil, err
	}
	return s.requestFromRow(row)
}

func codeHash(code string) []byte {
	h := sha256.Sum256([]byte(code))
	return h[:]
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	row, err := s.store.Q().OIDCAuthRequestGetByCode(ctx, codeHash(code))
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil, errUnknownRequest
	}
	if err != nil {
		return nil, err
	}
	return s.requestFromRow(row)
}

// SaveAuthCode keeps the hash of the one code a completed request gets.
func (s *storage) SaveAuthCode(ctx context.Context, id, code string) error {
	n, err := s.store.Q().OIDCAuthRequestSetCode(ctx, db.OIDCAuthRequestSetCodeParams{AuthRequestID: id, CodeHash: codeHash(code)})
	if err != nil {
		return err
	}
	if n == 0 {
		return oidc.ErrInvalidRequest().WithDescription("this sign-in has already issued its code, or it expired; start again")
	}
	return nil
}

func (s *storage) DeleteAuthRequest(ctx context.Context, id string) error {
	return s.store.Q().OIDCAuthRequestDelete(ctx, id)
}

// CreateAccessToken redeems the code of an authorization-code request: deleting its row is what makes the
// code single-use, and of two redemptions at once only the one that deleted it gets tokens.
func (s *storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	a, ok := req.(*authRequest)
	if !ok {
		return "", time.Time{}, oidc.ErrUnsupportedGrantType()
	}
	n, err := s.store.Q().OIDCAuthRequestRedeem(ctx, a.id)
	if err != nil {
		return "", time.Time{}, err
	}
	if n == 0 {
		return "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("the code was already used or expired")
	}
	return uuid.NewString(), time.Now().Add(accessTokenTTL), nil
}

// Refresh tokens, revocation and sessions are not offered: apps sign in again.
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, oidc.ErrUnsupportedGrantType().WithDescription("refresh tokens are not issued")
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return oidc.ErrRequestNotSupported().WithDescription("tokens of this provider expire on their own and cannot be revoked")
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return signer{s.key}, nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.ES256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) { return []op.Key{public{s.key}}, nil }

// GetClientByClientID reads the client from oauth_client; an unknown one is a plain error (not 500).
func (s *storage) GetClientByClientID(ctx context.Context, clientID string) (op.Client, error) {
	row, err := s.store.Q().OAuthClientGet(ctx, clientID)
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil, fmt.Errorf("no OAuth client %q is registered", clientID)
	}
	if err != nil {
		return nil, oidc.ErrServerError().WithParent(err)
	}
	return &client{row: row, loginURL: s.issuer + loginPath + "?" + loginRequestField + "="}, nil
}

func (s *storage) AuthorizeClientIDSecret(context.Context, string, string) error {
	return errors.New("every client is public: there are no client secrets")
}

func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// SetUserinfoFromRequest fills the ID token's claims by scope.
func (s *storage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.setUserinfo(ctx, info, req.GetSubject(), scopes); err != nil {
		return err
	}
	if a, ok := req.(*authRequest); ok && a.orgID != nil && contains(scopes, ScopeOrganization) {
		info.AppendClaims(ScopeOrganization, a.orgID.String())
	}
	return nil
}

// SetUserinfoFromToken answers the userinfo endpoint: the User's profile and email claims.
func (s *storage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	return s.setUserinfo(ctx, info, subject, []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail})
}

func (s *storage) setUserinfo(ctx context.Context, info *oidc.UserInfo, subject string, scopes []string) error {
	id, err := uuid.Parse(subject)
	if err != nil {
		return fmt.Errorf("subject %q is not a UserID", subject)
	}
	u, err := s.store.Q().UserGetByID(ctx, id)
	if err != nil {
		return err
	}
	info.Subject = u.UserID.String()
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeProfile:
			info.PreferredUsername = u.Username
			info.Name = u.DisplayName
			if info.Name == "" {
				info.Name = u.Username
			}
		case oidc.ScopeEmail:
			// Users have no email of their own; a Username that is an address is one.
			if addr, err := mail.ParseAddress(u.Username); err == nil && addr.Address == u.Username {
				info.Email = u.Username
			}
		}
	}
	return nil
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("introspection is not offered: every client is public")
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

// GetPrivateClaimsFromRequest adds the access token's own claims: azp and the organization.
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	a, ok := req.(*authRequest)
	if !ok || a.orgID == nil {
		return nil, oidc.ErrInvalidGrant()
	}
	return map[string]any{"azp": a.clientID, ScopeOrganization: a.orgID.String()}, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile grants are not offered")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("JWT profile grants are not offered")
}

func (s *storage) Health(ctx context.Context) error { return s.store.Pool.Ping(ctx) }

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
