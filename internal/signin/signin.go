// Package signin lets Users and ServiceAccounts sign in without a shared secret: an administrator
// registers the identity's public key (a JWK whose Kid is its RFC 7638 thumbprint), and the identity
// exchanges a short-lived JWT signed with the private key (RFC 7523 jwt-bearer) for a service token at
// {base_url}/auth/token.
package signin

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// Key is a registered public key. It signs in to OrganizationID only, with at most MaxOrgRole (the role
// of whoever registered it).
type Key struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	UserID         uuid.UUID
	Kid            string
	PublicJWK      map[string]any
	Description    string
	MaxOrgRole     auth.Role
	ExpiresAt      *time.Time
	LastUsedAt     *time.Time
	CreatedAt      time.Time
}

func keyFromRow(r *db.UserKey) (Key, error) {
	jwkMap, err := store.DecodeJSON[map[string]any](r.PublicJWK)
	return Key{ID: r.UserKeyID, OrganizationID: r.OrganizationID, UserID: r.UserID, Kid: r.Kid, PublicJWK: jwkMap,
		Description: r.Description, MaxOrgRole: auth.Role(r.MaxOrgRole), ExpiresAt: r.ExpiresAt, LastUsedAt: r.LastUsedAt,
		CreatedAt: r.CreatedAt}, err
}

// Service manages keys and exchanges assertions.
type Service struct {
	Store  *store.Store
	Issuer *auth.Issuer
}

// ListKeys returns the keys of a User registered in the caller's organization (unredacted: they are
// public). Keys another organization registered for the same User are not its to see.
func (s *Service) ListKeys(ctx context.Context, sc authz.Scope, userID uuid.UUID) ([]Key, error) {
	rows, err := s.Store.Q().UserKeyList(ctx, db.UserKeyListParams{OrganizationID: sc.OrganizationID, UserID: userID})
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(rows))
	for i, r := range rows {
		if out[i], err = keyFromRow(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkKeyManagement is the rule for registering and removing keys of userID in the caller's
// organization: it needs the admin or manager role, the holder's role may not be stronger than the
// caller's (a key is the power to act as its holder), and only an admin manages the keys of a person;
// managers manage those of bot Users (ServiceAccounts, BridgeWorkers). A User outside the organization
// is NotFound, like one that does not exist.
func checkKeyManagement(ctx context.Context, sc authz.Scope, q *db.Queries, userID uuid.UUID) error {
	if err := authz.Check(sc, authz.ManageMembers, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return err
	}
	member, err := q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: sc.OrganizationID, UserID: userID})
	if err != nil {
		return apierr.NotFoundAs(err, "User", userID.String())
	}
	if err := authz.CheckReach(sc, auth.Role(member.OrgRole), "manage the keys of a principal with the role"); err != nil {
		return err
	}
	kind, err := q.UserBackingKind(ctx, userID)
	if err != nil {
		return err
	}
	if kind == "" && sc.Role != auth.RoleAdmin {
		return apierr.Forbidden("only an admin manages the keys of a person; managers manage those of ServiceAccounts and BridgeWorkers")
	}
	return nil
}

// RegisterKey adds a public key to a User of the caller's organization (checkKeyManagement). Nobody
// registers a key for themselves. The key signs in to this organization only, with at most the caller's
// role.
func (s *Service) RegisterKey(ctx context.Context, sc authz.Scope, userID uuid.UUID, publicJWK map[string]any, description string, dryRun bool) (Key, error) {
	if userID == sc.UserID {
		return Key{}, apierr.Forbidden("registering a key for yourself is not permitted; ask another admin")
	}
	if err := checkKeyManagement(ctx, sc, s.Store.Q(), userID); err != nil {
		return Key{}, err
	}
	key, kid, err := publicKey(publicJWK)
	if err != nil {
		return Key{}, err
	}
	stored, err := json.Marshal(key)
	if err != nil {
		return Key{}, err
	}
	var out Key
	err = s.Store.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		var row *db.UserKey
		err := tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			row, err = sp.Q.UserKeyInsert(ctx, db.UserKeyInsertParams{UserKeyID: uuid.New(), OrganizationID: sc.OrganizationID,
				UserID: userID, Kid: kid, PublicJWK: stored, Description: description, MaxOrgRole: string(sc.Role)})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) {
			return (&apierr.Error{Type: apierr.TypeAlreadyExists, Message: "this key is already registered in this organization (its Kid " + kid + " is taken)",
				Items: []apierr.Item{{Item: "PublicJWK", Description: "already registered"}}}).WithEntity("UserKey", "", kid)
		}
		if err != nil {
			return err
		}
		out, err = keyFromRow(row)
		return err
	})
	return out, err
}

// DeleteKey removes a key a User holds in the caller's organization (checkKeyManagement; anyone may
// remove their own).
func (s *Service) DeleteKey(ctx context.Context, sc authz.Scope, userID uuid.UUID, kid string) error {
	q := s.Store.Q()
	if userID != sc.UserID {
		if err := checkKeyManagement(ctx, sc, q, userID); err != nil {
			return err
		}
	}
	n, err := q.UserKeyDelete(ctx, db.UserKeyDeleteParams{OrganizationID: sc.OrganizationID, UserID: userID, Kid: kid})
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.NotFound("UserKey", kid)
	}
	return nil
}

// publicKey checks a JWK: public only, of a kind fit for signing, and returns it with its thumbprint.
func publicKey(raw map[string]any) (jwk.Key, string, error) {
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, "", apierr.Validation("PublicJWK is not a JWK", apierr.Item{Item: "PublicJWK", Description: "not a JWK"})
	}
	key, err := jwk.ParseKey(data)
	if err != nil {
		return nil, "", apierr.Validation("PublicJWK is not a JWK: "+err.Error(), apierr.Item{Item: "PublicJWK", Description: "not a JWK"})
	}
	var rawKey any
	if err := key.Raw(&rawKey); err != nil {
		return nil, "", apierr.Validation("PublicJWK cannot be used: "+err.Error(), apierr.Item{Item: "PublicJWK", Description: "unusable"})
	}
	switch k := rawKey.(type) {
	case *ecdsa.PublicKey:
		if k.Curve.Params().BitSize < 256 {
			return nil, "", weakKey()
		}
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return nil, "", weakKey()
		}
	case ed25519.PublicKey:
	default:
		return nil, "", apierr.Validation("PublicJWK must be a public key (EC, RSA or Ed25519); never send a private key",
			apierr.Item{Item: "PublicJWK", Description: "not a public signing key"})
	}
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, "", err
	}
	kid := base64.RawURLEncoding.EncodeToString(tp)
	if err := key.Set(jwk.KeyIDKey, kid); err != nil {
		return nil, "", err
	}
	return key, kid, nil
}

func weakKey() error {
	return apierr.Validation("PublicJWK is too weak: use EC P-256 or stronger, RSA of 2048 bits or more, or Ed25519",
		apierr.Item{Item: "PublicJWK", Description: "too weak"})
}

// GrantError is an RFC 6749 error of the token endpoint.
type GrantError struct {
	Code        string // invalid_request, invalid_grant, unsupported_grant_type, ...
	Description string
}

func (e *GrantError) Error() string { return e.Code + ": " + e.Description }

func invalidGrant(format string, args ...any) error {
	return &GrantError{Code: "invalid_grant", Description: fmt.Sprintf(format, args...)}
}

// MaxAssertionLifetime bounds how long an assertion may be valid (at most 5 minutes, so a leaked one is soon useless).
const MaxAssertionLifetime = 5 * time.Minute

// Exchange verifies an RFC 7523 assertion and returns the identity it signs in: iss and sub name the
// User (or ServiceAccount) for whom the signing key is registered, aud is the token endpoint, it expires
// within MaxAssertionLifetime, and its jti was never used before. A key signs in only to the organization
// it was registered in, with at most the role of whoever registered it; orgID chooses among the
// organizations when the same key is registered for the same User in several.
func (s *Service) Exchange(ctx context.Context, assertion, audience string, orgID *uuid.UUID) (auth.Principal, error) {
	kid, err := KeyID(assertion)
	if err != nil {
		return auth.Principal{}, err
	}
	q := s.Store.Q()
	// Every registration of a kid holds the same public key (the kid is its thumbprint), so the signature
	// is checked once, before the claims choose a registration.
	raw, err := q.UserKeyPublicByKid(ctx, kid)
	if apierr.Is(err, apierr.TypeNotFound) {
		return auth.Principal{}, invalidGrant("no registered key has kid %s", kid)
	}
	if err != nil {
		return auth.Principal{}, err
	}
	pub, err := jwk.ParseKey(raw)
	if err != nil {
		return auth.Principal{}, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return auth.Principal{}, err
	}
	tok, err := jwt.Parse([]byte(assertion), jwt.WithKeySet(set, jws.WithInferAlgorithmFromKey(true)),
		jwt.WithValidate(true), jwt.WithAudience(audience), jwt.WithAcceptableSkew(30*time.Second),
		jwt.WithRequiredClaim(jwt.ExpirationKey), jwt.WithRequiredClaim(jwt.JwtIDKey))
	if err != nil {
		return auth.Principal{}, invalidGrant("the assertion is not valid: %v", err)
	}
	if tok.Expiration().Sub(time.Now()) > MaxAssertionLifetime+30*time.Second ||
		(!tok.IssuedAt().IsZero() && tok.Expiration().Sub(tok.IssuedAt()) > MaxAssertionLifetime) {
		return auth.Principal{}, invalidGrant("the assertion lives longer than %s", MaxAssertionLifetime)
	}
	if tok.Issuer() != tok.Subject() {
		return auth.Principal{}, invalidGrant("the assertion's iss and sub must both name the signing identity")
	}
	subject, err := uuid.Parse(tok.Subject())
	if err != nil {
		return auth.Principal{}, invalidGrant("the assertion's subject must be the ID of the User or ServiceAccount the key is registered for")
	}
	row, err := s.registration(ctx, q, kid, subject, orgID)
	if err != nil {
		return auth.Principal{}, err
	}
	if row.ExpiresAt != nil && row.ExpiresAt.Before(time.Now()) {
		return auth.Principal{}, invalidGrant("the key %s has expired", kid)
	}
	n, err := q.UsedAssertionRecord(ctx, db.UsedAssertionRecordParams{Jti: tok.JwtID(), ExpiresAt: tok.Expiration()})
	if err != nil {
		return auth.Principal{}, err
	}
	if n == 0 {
		return auth.Principal{}, invalidGrant("the assertion was used before (jti %s); sign a new one", tok.JwtID())
	}
	member, err := q.OrganizationMemberGet(ctx, db.OrganizationMemberGetParams{OrganizationID: row.OrganizationID, UserID: row.UserID})
	if apierr.Is(err, apierr.TypeNotFound) {
		return auth.Principal{}, invalidGrant("the identity of key %s is no longer a member of its organization", kid)
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if err := q.UserKeyTouch(ctx, row.UserKeyID); err != nil {
		return auth.Principal{}, err
	}
	role := auth.Weaker(auth.Role(member.OrgRole), auth.Role(row.MaxOrgRole))
	return auth.Principal{UserID: row.UserID, OrganizationID: row.OrganizationID, Role: role}, nil
}

// KeyID reads the kid an assertion names (unverified: it says which key to verify it with).
func KeyID(assertion string) (string, error) {
	msg, err := jws.ParseString(assertion)
	if err != nil || len(msg.Signatures()) != 1 {
		return "", invalidGrant("the assertion is not a signed JWT")
	}
	kid := msg.Signatures()[0].ProtectedHeaders().KeyID()
	if kid == "" {
		return "", invalidGrant("the assertion's header names no kid")
	}
	return kid, nil
}

// registration chooses the key registration an assertion signs in with: the kid's registration for its
// subject, in orgID when given.
func (s *Service) registration(ctx context.Context, q *db.Queries, kid string, subject uuid.UUID, orgID *uuid.UUID) (*db.UserKey, error) {
	rows, err := q.UserKeyGetForAssertion(ctx, db.UserKeyGetForAssertionParams{Kid: kid, Subject: subject})
	if err != nil {
		return nil, err
	}
	var match []*db.UserKey
	for _, r := range rows {
		if orgID == nil || r.OrganizationID == *orgID {
			match = append(match, r)
		}
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) > 1:
		return nil, &GrantError{Code: "invalid_request", Description: "this key is registered in several organizations: name the one to sign in to (organization_id)"}
	case orgID != nil && len(rows) > 0:
		return nil, invalidGrant("key %s is not registered in organization %s", kid, orgID)
	default:
		return nil, invalidGrant("the assertion's subject is not the identity of key %s", kid)
	}
}

// IsGrantError reports an RFC 6749 error.
func IsGrantError(err error) (*GrantError, bool) {
	var ge *GrantError
	ok := errors.As(err, &ge)
	return ge, ok
}

// PruneAssertions forgets assertion IDs whose assertions have expired (they can no longer be replayed).
// It is housekeeping across organizations, acting as no principal, so it takes no Scope.
func (s *Service) PruneAssertions(ctx context.Context) error {
	_, err := s.Store.Q().UsedAssertionPrune(ctx)
	return err
}
