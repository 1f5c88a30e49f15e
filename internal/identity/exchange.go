package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/org"
	"github.com/hubd/hubd/internal/signin"
	"github.com/hubd/hubd/internal/store"
)

// Leeway is the clock skew allowed between hubd and the identity provider for nbf and iat (go-oidc
// allows five minutes for nbf; hubd is stricter).
const Leeway = 30 * time.Second

// discoveryRetry is how long a failed discovery is remembered: requests in that time fail at once
// instead of each asking an unreachable provider again.
const discoveryRetry = 5 * time.Second

// fetchTimeout bounds each request to the provider (discovery, JWKS).
const fetchTimeout = 10 * time.Second

// signingAlgs are the algorithms a subject token may be signed with: asymmetric ones only (a provider's
// published keys verify them; HS256 would need a shared secret, and "none" is never accepted).
var signingAlgs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}

// Exchanger verifies identity providers' access tokens and resolves whom they sign in.
type Exchanger struct {
	store    *store.Store
	orgs     *org.Service
	mode     Mode
	issuer   string
	audience string
	orgClaim string
	keySet   oidc.KeySet
	client   *http.Client
	// keys are the JWKS the provider published last and keysFetched when (unix nanoseconds), as the key
	// set fetched them; fetchFailures counts failed requests to the provider.
	keys          atomic.Pointer[[]jose.JSONWebKey]
	keysFetched   atomic.Int64
	fetchFailures atomic.Int64
	minRefetch    time.Duration

	mu                sync.Mutex
	verifier          *oidc.IDTokenVerifier
	discoveryFailedAt time.Time
	discoveryErr      error
}

// New builds the Exchanger of cfg, or nil when cfg is off. It contacts nobody: discovery runs on the
// first exchange, so the server starts whether or not the provider is reachable.
func New(cfg Config, baseURL string, st *store.Store, orgs *org.Service) *Exchanger {
	if cfg.Mode == ModeOff {
		return nil
	}
	x := &Exchanger{store: st, orgs: orgs, mode: cfg.Mode, issuer: cfg.IssuerURL(baseURL),
		audience: cfg.AudienceFor(baseURL), orgClaim: cfg.orgClaim(), keySet: cfg.KeySet, minRefetch: cfg.MinKeyRefetch}
	if x.minRefetch <= 0 {
		x.minRefetch = DefaultMinKeyRefetch
	}
	x.client = &http.Client{Timeout: fetchTimeout, Transport: watchingTransport{base: http.DefaultTransport, x: x}}
	return x
}

// Mode is the provider's mode.
func (x *Exchanger) Mode() Mode { return x.mode }

// Issuer is the issuer tokens must name (/api/info AuthIssuer).
func (x *Exchanger) Issuer() string { return x.issuer }

// Audience is the audience tokens must include (/api/info TokenExchangeAudience).
func (x *Exchanger) Audience() string { return x.audience }

// UnavailableError is a provider that cannot be asked for its keys right now (503, retry).
type UnavailableError struct {
	Issuer string
	Err    error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("identity provider %s is unavailable: %v", e.Issuer, e.Err)
}

func refuse(format string, args ...any) error {
	return &signin.GrantError{Code: "invalid_grant", Description: fmt.Sprintf(format, args...)}
}

// verifierFor returns the verifier, running discovery the first time (and again after a failure, at
// most every discoveryRetry). The one verifier, and its key set, serve every request: keys are fetched
// once and again only when a token names a key the cache lacks (go-oidc RemoteKeySet).
func (x *Exchanger) verifierFor(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.verifier != nil {
		return x.verifier, nil
	}
	// go-oidc names its verifier for ID tokens, but it checks any JWT the same way (signature by the
	// provider's keys, iss, aud, exp, nbf), which is how providers' JWT access tokens are commonly
	// verified. ClientID is the audience the token must include.
	config := &oidc.Config{ClientID: x.audience, SupportedSigningAlgs: signingAlgs}
	keySet := x.keySet
	if keySet == nil {
		if !x.discoveryFailedAt.IsZero() && time.Since(x.discoveryFailedAt) < discoveryRetry {
			return nil, &UnavailableError{Issuer: x.issuer, Err: x.discoveryErr}
		}
		// The client rides in the context (go-oidc's way); the key set keeps it for its later fetches.
		clientCtx := oidc.ClientContext(context.WithoutCancel(ctx), x.client)
		provider, err := oidc.NewProvider(clientCtx, x.issuer)
		if err == nil {
			var meta struct {
				JWKSURI string `json:"jwks_uri"`
			}
			if err = provider.Claims(&meta); err == nil && meta.JWKSURI == "" {
				err = errors.New("its discovery document names no jwks_uri")
			}
			keySet = oidc.NewRemoteKeySet(clientCtx, meta.JWKSURI)
		}
		if err != nil {
			x.discoveryFailedAt, x.discoveryErr = time.Now(), err
			return nil, &UnavailableError{Issuer: x.issuer, Err: err}
		}
	}
	if x.keySet == nil {
		keySet = throttledKeySet{remote: keySet, x: x}
	}
	x.verifier = oidc.NewVerifier(x.issuer, notingKeySet{keySet}, config)
	return x.verifier, nil
}

// tokenClaims are the claims the exchange reads from a verified token.
type tokenClaims struct {
	Subject           string   `json:"sub"`
	AuthorizedParty   string   `json:"azp"`
	ClientID          string   `json:"client_id"`
	NotBefore         *float64 `json:"nbf"`
	IssuedAt          *float64 `json:"iat"`
	PreferredUsername string   `json:"preferred_username"`
	Email             string   `json:"email"`
	Name              string   `json:"name"`
}

// unverifiedClaims are read before verification, only to say why a token was refused.
type unverifiedClaims struct {
	Issuer    string          `json:"iss"`
	Audience  json.RawMessage `json:"aud"`
	NotBefore *float64        `json:"nbf"`
	Expiry    *float64        `json:"exp"`
	Subject   string          `json:"sub"`
}

func unixTime(f float64) time.Time { return time.Unix(int64(f), 0).UTC() }

// verify checks subjectToken (signature, iss, aud, exp, nbf, iat) and returns its claims and the raw
// claim set. A refusal is an invalid_grant *signin.GrantError saying which check failed.
func (x *Exchanger) verify(ctx context.Context, subjectToken string) (tokenClaims, map[string]json.RawMessage, error) {
	var tc tokenClaims
	parsed, err := jose.ParseSigned(subjectToken, joseAlgs())
	if err != nil || len(parsed.Signatures) != 1 {
		return tc, nil, refuse("subject_token is not a signed JWT (the identity provider's access token, signed with one of %s)",
			strings.Join(signingAlgs, ", "))
	}
	kid := parsed.Signatures[0].Header.KeyID
	var uc unverifiedClaims
	if json.Unmarshal(parsed.UnsafePayloadWithoutVerification(), &uc) != nil {
		return tc, nil, refuse("subject_token's payload is not a JSON claim set")
	}
	v, err := x.verifierFor(ctx)
	if err != nil {
		return tc, nil, err
	}
	note := &verifyNote{}
	failures := x.fetchFailures.Load()
	tok, err := v.Verify(context.WithValue(ctx, noteKey{}, note), subjectToken)
	if err != nil {
		return tc, nil, x.explain(err, note, failures, kid, uc)
	}
	var all map[string]json.RawMessage
	if err := tok.Claims(&tc); err != nil {
		return tc, nil, refuse("subject_token's claims cannot be read: %v", err)
	}
	if err := tok.Claims(&all); err != nil {
		return tc, nil, refuse("subject_token's claims cannot be read: %v", err)
	}
	now := time.Now()
	// go-oidc allows five minutes of skew on nbf; hubd allows Leeway.
	if tc.NotBefore != nil && unixTime(*tc.NotBefore).After(now.Add(Leeway)) {
		return tc, nil, refuse("subject_token is not valid before %s", unixTime(*tc.NotBefore).Format(time.RFC3339))
	}
	if tc.IssuedAt != nil && unixTime(*tc.IssuedAt).After(now.Add(Leeway)) {
		return tc, nil, refuse("subject_token was issued in the future (iat %s): check the identity provider's clock",
			unixTime(*tc.IssuedAt).Format(time.RFC3339))
	}
	return tc, all, nil
}

// explain turns a verification failure into what the caller is told. The signature is checked first,
// so a failure after it concerns an authentic token's claims.
func (x *Exchanger) explain(err error, note *verifyNote, failures int64, kid string, uc unverifiedClaims) error {
	if note.checked && note.err != nil {
		if x.fetchFailures.Load() > failures {
			return &UnavailableError{Issuer: x.issuer, Err: note.err}
		}
		if keys := x.keys.Load(); keys != nil && kid != "" && !slices.ContainsFunc(*keys, func(k jose.JSONWebKey) bool { return k.KeyID == kid }) {
			return refuse("subject_token is signed with a key (kid %q) the identity provider does not publish", kid)
		}
		return refuse("subject_token's signature does not verify with the identity provider's keys")
	}
	if !note.checked {
		// Refused before the signature was checked: the header (algorithm, signatures) is unfit.
		return refuse("subject_token is not a JWT signed with one of %s", strings.Join(signingAlgs, ", "))
	}
	var expired *oidc.TokenExpiredError
	switch {
	case uc.Issuer != x.issuer:
		return refuse("subject_token was issued by %q, not by the identity provider this service trusts (%s)", uc.Issuer, x.issuer)
	case !audienceIncludes(uc.Audience, x.audience):
		return refuse("subject_token's audience (aud) does not include %s: the identity provider must issue it for this service", x.audience)
	case errors.As(err, &expired) && uc.Expiry == nil:
		return refuse("subject_token has no expiry (exp)")
	case errors.As(err, &expired):
		return refuse("subject_token expired at %s; sign in again", expired.Expiry.UTC().Format(time.RFC3339))
	case uc.NotBefore != nil && unixTime(*uc.NotBefore).After(time.Now()):
		return refuse("subject_token is not valid before %s", unixTime(*uc.NotBefore).Format(time.RFC3339))
	default:
		return refuse("subject_token is not valid: %v", err)
	}
}

func audienceIncludes(raw json.RawMessage, audience string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == audience
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, a := range many {
			if a == audience {
				return true
			}
		}
	}
	return false
}

// verifyNote records, for one verification, whether the signature was checked and how it went (go-oidc
// reports every failure as text).
type verifyNote struct {
	checked bool
	err     error
}

type noteKey struct{}

// notingKeySet passes signatures to the key set and notes the outcome in the request's verifyNote.
type notingKeySet struct{ oidc.KeySet }

func (k notingKeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := k.KeySet.VerifySignature(ctx, jwt)
	if n, ok := ctx.Value(noteKey{}).(*verifyNote); ok {
		n.checked, n.err = true, err
	}
	return payload, err
}

// DefaultMinKeyRefetch is the least time between two fetches of the provider's keys when no other is
// configured (Config.MinKeyRefetch).
const DefaultMinKeyRefetch = 10 * time.Second

// throttledKeySet guards the provider's key set (go-oidc RemoteKeySet), which fetches the keys again
// whenever a token fails to verify with those it holds: an unknown kid (the provider rotated its keys),
// but also any forged signature. Sooner than minRefetch after the last fetch, a token that no held key
// verifies is refused without asking the provider, so forged tokens cannot make hubd fetch per request.
type throttledKeySet struct {
	remote oidc.KeySet
	x      *Exchanger
}

func (k throttledKeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	keys := k.x.keys.Load()
	if keys == nil || time.Since(time.Unix(0, k.x.keysFetched.Load())) >= k.x.minRefetch {
		return k.remote.VerifySignature(ctx, jwt)
	}
	parsed, err := jose.ParseSigned(jwt, joseAlgs())
	if err != nil || len(parsed.Signatures) != 1 {
		return nil, errors.New("not a JWT with one signature")
	}
	kid := parsed.Signatures[0].Header.KeyID
	for _, key := range *keys {
		if kid == "" || key.KeyID == kid {
			if _, err := parsed.Verify(&key); err == nil {
				// A held key verifies it: the key set verifies it again from its cache, without a fetch.
				return k.remote.VerifySignature(ctx, jwt)
			}
		}
	}
	return nil, errors.New("no key the provider published verifies the signature (keys fetched too recently to fetch again)")
}

func joseAlgs() []jose.SignatureAlgorithm {
	algs := make([]jose.SignatureAlgorithm, len(signingAlgs))
	for i, a := range signingAlgs {
		algs[i] = jose.SignatureAlgorithm(a)
	}
	return algs
}

// maxProviderResponse bounds what is read of a discovery document or a JWKS.
const maxProviderResponse = 1 << 20

// watchingTransport carries the requests to the provider, counting failures and remembering the key
// IDs of each JWKS it fetches.
type watchingTransport struct {
	base http.RoundTripper
	x    *Exchanger
}

func (t watchingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.x.fetchFailures.Add(1)
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		t.x.fetchFailures.Add(1)
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProviderResponse))
	_ = resp.Body.Close()
	if err != nil {
		t.x.fetchFailures.Add(1)
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var set struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(body, &set) == nil && set.Keys != nil {
		// Keys go-jose cannot read (or private ones, which no provider should publish) are left out.
		keys := []jose.JSONWebKey{}
		for _, raw := range *set.Keys {
			var k jose.JSONWebKey
			if k.UnmarshalJSON(raw) == nil && k.IsPublic() {
				keys = append(keys, k)
			}
		}
		t.x.keys.Store(&keys)
		t.x.keysFetched.Store(time.Now().UnixNano())
	}
	return resp, nil
}

// SubjectHint is the unverified subject of a token, for counting failed sign-ins per credential.
func SubjectHint(subjectToken string) string {
	parsed, err := jose.ParseSigned(subjectToken, joseAlgs())
	if err != nil {
		return ""
	}
	var uc unverifiedClaims
	_ = json.Unmarshal(parsed.UnsafePayloadWithoutVerification(), &uc)
	if len(uc.Subject) > 200 {
		return uc.Subject[:200]
	}
	return uc.Subject
}

// Exchange verifies subjectToken and returns whom it signs in: the registered OAuth client the token
// was issued to (azp, else client_id) must exist; the organization claim names an organization (its ID
// or ExternalID) that client may sign in to; sub names a member of it (ModeExternal: the User whose
// ExternalID it is; ModeEmbedded: the UserID), whose membership gives the role. A person who is not a
// member is refused, unless the organization provisions members on first sign-in. Refusals are
// invalid_grant *signin.GrantErrors; an unreachable provider is an *UnavailableError.
func (x *Exchanger) Exchange(ctx context.Context, subjectToken string) (auth.Principal, error) {
	tc, all, err := x.verify(ctx, subjectToken)
	if err != nil {
		return auth.Principal{}, err
	}
	q := x.store.Q()
	clientID := tc.AuthorizedParty
	if clientID == "" {
		clientID = tc.ClientID
	}
	if clientID == "" {
		return auth.Principal{}, refuse("subject_token names no client (azp or client_id): hubd signs in only apps registered with it")
	}
	client, err := q.OAuthClientGet(ctx, clientID)
	if apierr.Is(err, apierr.TypeNotFound) {
		return auth.Principal{}, refuse("the token was issued to client %s, which is not registered with hubd", clientID)
	}
	if err != nil {
		return auth.Principal{}, err
	}
	o, err := x.organization(ctx, q, all, client)
	if err != nil {
		return auth.Principal{}, err
	}
	if tc.Subject == "" {
		return auth.Principal{}, refuse("subject_token has no subject (sub)")
	}
	person := org.SignInPerson{ExternalID: tc.Subject, PreferredUsername: tc.PreferredUsername, Email: tc.Email, DisplayName: tc.Name}
	var userID *uuid.UUID
	if x.mode == ModeEmbedded {
		id, err := uuid.Parse(tc.Subject)
		if err != nil {
			return auth.Principal{}, refuse("subject_token's subject (sub) must be a UserID")
		}
		if _, err := q.UserGetByID(ctx, id); apierr.Is(err, apierr.TypeNotFound) {
			return auth.Principal{}, refuse("subject_token's subject %s is no User of this service", id)
		} else if err != nil {
			return auth.Principal{}, err
		}
		userID, person.UserID, person.ExternalID = &id, &id, ""
	} else {
		users, err := q.UserListByExternalID(ctx, tc.Subject)
		if err != nil {
			return auth.Principal{}, err
		}
		if len(users) > 1 {
			return auth.Principal{}, refuse("several Users have the ExternalID %q; an admin must give it to one only", tc.Subject)
		}
		if len(users) == 1 {
			userID = &users[0].UserID
		}
	}
	if userID != nil {
		m, err := q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: o.OrganizationID, UserID: *userID})
		if err == nil {
			return auth.Principal{UserID: *userID, OrganizationID: o.OrganizationID, Role: auth.Role(m.OrgRole)}, nil
		}
		if !apierr.Is(err, apierr.TypeNotFound) {
			return auth.Principal{}, err
		}
	}
	if o.SignInProvisionRole == "" {
		return auth.Principal{}, refuse("you (%s) are not a member of organization %s; ask one of its admins to add you", tc.Subject, o.Slug)
	}
	return x.orgs.ProvisionMember(ctx, o.OrganizationID, person, auth.Role(o.SignInProvisionRole))
}

// maxOrgCandidates bounds how many organizations one claim may name.
const maxOrgCandidates = 16

// organization resolves the organization claim to the organization the token signs in to.
func (x *Exchanger) organization(ctx context.Context, q *db.Queries, all map[string]json.RawMessage, client *db.OauthClient) (*db.Organization, error) {
	raw, ok := all[x.orgClaim]
	if !ok || string(raw) == "null" {
		return nil, refuse("subject_token has no %q claim naming the organization: sign in asking for the organization scope", x.orgClaim)
	}
	names := orgNames(raw)
	if len(names) == 0 || len(names) > maxOrgCandidates {
		return nil, refuse("the %q claim must name one organization (its ID or ExternalID)", x.orgClaim)
	}
	var found []*db.Organization
	seen := map[uuid.UUID]bool{}
	for _, n := range names {
		o, err := organizationNamed(ctx, q, n)
		if err != nil {
			return nil, err
		}
		if o != nil && !seen[o.OrganizationID] {
			seen[o.OrganizationID] = true
			found = append(found, o)
		}
	}
	if len(found) == 0 {
		return nil, refuse("no organization of this service is %s (the token's %q claim)", strings.Join(names, ", "), x.orgClaim)
	}
	if !client.AllowAllOrgs {
		for _, o := range found {
			if o.OrganizationID == client.OrganizationID {
				return o, nil
			}
		}
		owner, err := q.OrganizationGetByID(ctx, client.OrganizationID)
		if err != nil {
			return nil, err
		}
		return nil, refuse("this app signs in members of organization %s only", owner.Slug)
	}
	if len(found) > 1 {
		return nil, refuse("the %q claim names several organizations; sign in to one at a time", x.orgClaim)
	}
	return found[0], nil
}

// orgNames reads the organization claim: a string, a list of strings, or an object keyed by the
// organizations (whose values may carry an "id"), as providers emit it.
func orgNames(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil
		}
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	var byName map[string]struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &byName) == nil {
		var out []string
		for name, v := range byName {
			if v.ID != "" {
				out = append(out, v.ID)
			} else {
				out = append(out, name)
			}
		}
		return out
	}
	return nil
}

// organizationNamed finds the organization whose OrganizationID, else whose non-empty ExternalID, is
// name; nil when none (or several) is.
func organizationNamed(ctx context.Context, q *db.Queries, name string) (*db.Organization, error) {
	if id, err := uuid.Parse(name); err == nil {
		o, err := q.OrganizationGetByID(ctx, id)
		if err == nil {
			return o, nil
		}
		if !apierr.Is(err, apierr.TypeNotFound) {
			return nil, err
		}
	}
	rows, err := q.OrganizationListByExternalID(ctx, name)
	if err != nil || len(rows) != 1 {
		return nil, err
	}
	return rows[0], nil
}
