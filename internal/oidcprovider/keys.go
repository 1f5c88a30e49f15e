package oidcprovider

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/hubd/hubd/internal/store"
)

// signingKeySecret names the provider's key pair in instance_secret: one ES256 key shared by every
// replica, apart from signing_key (whose keys sign service tokens), so the API never accepts a token of
// the provider as its own.
const signingKeySecret = "oidc-provider-signing-key"

// signingKey is the provider's ES256 key; it is both op.SigningKey and op.Key (the public half).
type signingKey struct {
	id   string
	priv *ecdsa.PrivateKey
}

// loadSigningKey returns the shared key, creating it if no replica has yet.
func loadSigningKey(ctx context.Context, st *store.Store) (*signingKey, error) {
	fresh, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the provider's signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(fresh)
	if err != nil {
		return nil, err
	}
	stored, err := st.EnsureSecret(ctx, signingKeySecret, der)
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParsePKCS8PrivateKey(stored)
	if err != nil {
		return nil, fmt.Errorf("parsing the provider's signing key: %w", err)
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the provider's signing key is not an ECDSA key")
	}
	// The key ID is its RFC 7638 thumbprint.
	tp, err := (&jose.JSONWebKey{Key: &priv.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	return &signingKey{id: base64.RawURLEncoding.EncodeToString(tp), priv: priv}, nil
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k *signingKey) ID() string                                  { return k.id }

// signer is the private half, for op.SigningKey.
type signer struct{ *signingKey }

func (s signer) Key() any { return s.priv }

// public is the public half, for op.Key (the JWKS).
type public struct{ *signingKey }

func (p public) Key() any                           { return &p.priv.PublicKey }
func (p public) Algorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (p public) Use() string                        { return "sig" }
