package auth

import (
	"context"
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"

	"github.com/hubd/hubd/internal/apierr"
)

const cryptoSHA256 = crypto.SHA256

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Claim names beyond the registered ones.
const (
	claimOrganization = "org"
	claimRole         = "role"
)

// Audience is the audience of every service token: the hubd API.
const Audience = "hubd"

// Issuer mints and verifies service tokens.
type Issuer struct {
	Keys *KeyRing
	// URL is the issuer (the service's base address); tokens from another issuer are refused.
	URL string
	TTL time.Duration
	Now func() time.Time

	// verified remembers tokens already verified (NewIssuer makes it; without it every request verifies).
	verified *verifiedTokens
}

// NewIssuer returns an Issuer that remembers the tokens it has verified until they expire.
func NewIssuer(keys *KeyRing, url string, ttl time.Duration) *Issuer {
	return &Issuer{Keys: keys, URL: url, TTL: ttl, verified: &verifiedTokens{}}
}

func (is *Issuer) now() time.Time {
	if is.Now != nil {
		return is.Now()
	}
	return time.Now()
}

// Mint returns a signed service token for p, valid for the Issuer's TTL.
func (is *Issuer) Mint(p Principal) (string, time.Time, error) {
	now := is.now()
	exp := now.Add(is.TTL)
	tok, err := jwt.NewBuilder().
		Issuer(is.URL).
		Audience([]string{Audience}).
		Subject(p.UserID.String()).
		IssuedAt(now).
		NotBefore(now).
		Expiration(exp).
		JwtID(uuid.NewString()).
		Claim(claimOrganization, p.OrganizationID.String()).
		Claim(claimRole, string(p.Role)).
		Build()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("building token: %w", err)
	}
	key, _ := is.Keys.current()
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256, key))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("signing token: %w", err)
	}
	return string(signed), exp, nil
}

// Verify checks a service token's signature, issuer, audience and lifetime and returns its Principal.
// Every failure is an Authentication error whose message says what to do.
func (is *Issuer) Verify(ctx context.Context, token string) (Principal, error) {
	now := is.now()
	if is.verified != nil {
		// A token verified before is good while its key is still one of the service's.
		if p, kid, ok := is.verified.get(token, now); ok && is.Keys.knows(kid) {
			return p, nil
		}
	}
	kid := keyIDOf(token)
	if kid == "" {
		return Principal{}, apierr.Unauthenticated("the bearer token is not a signed JWT naming its key; get a new token")
	}
	if !is.Keys.knows(kid) && !is.Keys.learn(ctx, kid) {
		return Principal{}, apierr.Unauthenticated("the bearer token is not signed by a key of this service; get a new token")
	}
	p, exp, err := is.verify(token)
	if err == nil && is.verified != nil {
		is.verified.put(token, p, kid, exp, now)
	}
	return p, err
}

func (is *Issuer) verify(token string) (Principal, time.Time, error) {
	_, keys := is.Keys.current()
	tok, err := jwt.Parse([]byte(token),
		jwt.WithKeySet(keys, jws.WithRequireKid(true)),
		jwt.WithValidate(true),
		jwt.WithIssuer(is.URL),
		jwt.WithAudience(Audience),
		jwt.WithClock(jwt.ClockFunc(is.now)),
		jwt.WithAcceptableSkew(30*time.Second),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
		jwt.WithRequiredClaim(jwt.IssuedAtKey),
		jwt.WithRequiredClaim(jwt.IssuerKey),
		jwt.WithRequiredClaim(jwt.AudienceKey),
		jwt.WithRequiredClaim(claimOrganization),
		jwt.WithRequiredClaim(claimRole),
	)
	if errors.Is(err, jwt.ErrInvalidIssuer()) {
		// The signature verified (claims are validated after it), so the token is one of ours minted for
		// another base address: say which, since the fix is where the token was minted.
		presented := ""
		if insecure, perr := jwt.ParseInsecure([]byte(token)); perr == nil {
			presented = insecure.Issuer()
		}
		return Principal{}, time.Time{}, apierr.Unauthenticated("the bearer token was issued by %q, but this service's issuer "+
			"(its base URL) is %q; get a token minted for %q", presented, is.URL, is.URL).WithCause(err)
	}
	if err != nil {
		return Principal{}, time.Time{}, apierr.Unauthenticated("the bearer token is not valid: %s; get a new token", shortReason(err)).WithCause(err)
	}
	// A token that lives longer than this service issues them was not minted here as configured: a
	// token without a bound would be a credential forever.
	if lifetime := tok.Expiration().Sub(tok.IssuedAt()); lifetime > is.TTL+time.Second {
		return Principal{}, time.Time{}, apierr.Unauthenticated("the bearer token lives %s, longer than the %s this service issues; get a new token",
			lifetime.Round(time.Second), is.TTL)
	}
	userID, err1 := uuid.Parse(tok.Subject())
	orgRaw, _ := tok.Get(claimOrganization)
	roleRaw, _ := tok.Get(claimRole)
	orgStr, _ := orgRaw.(string)
	roleStr, _ := roleRaw.(string)
	orgID, err2 := uuid.Parse(orgStr)
	role := Role(roleStr)
	if err1 != nil || err2 != nil || !role.Valid() {
		return Principal{}, time.Time{}, apierr.Unauthenticated("the bearer token's claims are malformed; get a new token")
	}
	return Principal{UserID: userID, OrganizationID: orgID, Role: role}, tok.Expiration(), nil
}

func shortReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired()):
		return "it has expired"
	case errors.Is(err, jwt.ErrInvalidAudience()):
		return "it is for another audience"
	case errors.Is(err, jwt.ErrTokenNotYetValid()), errors.Is(err, jwt.ErrInvalidIssuedAt()):
		return "it is not valid yet"
	case errors.Is(err, jwt.ErrRequiredClaim()):
		return "it lacks a required claim (exp, iat, iss, aud, org and role are required)"
	}
	return "it could not be verified"
}

// keyIDOf reads the kid of a compact JWS without verifying it.
func keyIDOf(token string) string {
	msg, err := jws.ParseString(token)
	if err != nil || len(msg.Signatures()) == 0 {
		return ""
	}
	return msg.Signatures()[0].ProtectedHeaders().KeyID()
}
