package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/periodic"
	"github.com/hubd/hubd/internal/store"
)

// KeyRing holds the signing keys shared by all replicas through the signing_key table. The newest
// unretired key signs; every usable key verifies. It reloads from the database periodically and when a
// token names a key it does not know, so a rotation done on one replica reaches the others.
type KeyRing struct {
	store *store.Store
	// grace is how long a retired key still verifies: the token lifetime plus clock skew.
	grace time.Duration

	mu      sync.RWMutex
	signing jwk.Key
	public  jwk.Set
}

// NewKeyRing loads the keys, creating the first one if the database has none.
func NewKeyRing(ctx context.Context, st *store.Store, tokenTTL time.Duration) (*KeyRing, error) {
	kr := &KeyRing{store: st, grace: tokenTTL + 5*time.Minute}
	if err := kr.ensureKey(ctx); err != nil {
		return nil, err
	}
	if err := kr.reload(ctx); err != nil {
		return nil, err
	}
	return kr, nil
}

// ensureKey creates a signing key when none is usable; replicas starting at once create only one.
func (kr *KeyRing) ensureKey(ctx context.Context) error {
	return kr.store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		if err := tx.Q.SigningKeyLock(ctx); err != nil {
			return err
		}
		keys, err := tx.Q.SigningKeyListUsable(ctx, kr.graceSeconds())
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.RetiredAt == nil {
				return nil
			}
		}
		_, err = insertNewKey(ctx, tx)
		return err
	})
}

// Rotate makes a new key the signing key and retires the others; they verify until their grace ends.
func (kr *KeyRing) Rotate(ctx context.Context) (string, error) {
	var kid string
	err := kr.store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		if err := tx.Q.SigningKeyLock(ctx); err != nil {
			return err
		}
		var err error
		if kid, err = insertNewKey(ctx, tx); err != nil {
			return err
		}
		return tx.Q.SigningKeyRetireAllBut(ctx, kid)
	})
	if err != nil {
		return "", err
	}
	return kid, kr.reload(ctx)
}

func insertNewKey(ctx context.Context, tx *store.Tx) (string, error) {
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generating signing key: %w", err)
	}
	key, err := jwk.FromRaw(raw)
	if err != nil {
		return "", err
	}
	kid, err := thumbprint(key)
	if err != nil {
		return "", err
	}
	if err := key.Set(jwk.KeyIDKey, kid); err != nil {
		return "", err
	}
	if err := key.Set(jwk.AlgorithmKey, jwa.ES256); err != nil {
		return "", err
	}
	data, err := json.Marshal(key)
	if err != nil {
		return "", err
	}
	return kid, tx.Q.SigningKeyInsert(ctx, db.SigningKeyInsertParams{Kid: kid, PrivateJWK: data})
}

// thumbprint is the RFC 7638 thumbprint of key, base64url without padding.
func thumbprint(key jwk.Key) (string, error) {
	tp, err := key.Thumbprint(cryptoSHA256)
	if err != nil {
		return "", err
	}
	return b64(tp), nil
}

func (kr *KeyRing) graceSeconds() int64 { return int64(kr.grace.Seconds()) }

func (kr *KeyRing) reload(ctx context.Context) error {
	rows, err := kr.store.Q().SigningKeyListUsable(ctx, kr.graceSeconds())
	if err != nil {
		return err
	}
	public := jwk.NewSet()
	var signing jwk.Key
	for _, row := range rows {
		key, err := jwk.ParseKey(row.PrivateJWK)
		if err != nil {
			return fmt.Errorf("parsing signing key %s: %w", row.Kid, err)
		}
		if signing == nil && row.RetiredAt == nil {
			signing = key
		}
		pub, err := key.PublicKey()
		if err != nil {
			return err
		}
		if err := public.AddKey(pub); err != nil {
			return err
		}
	}
	if signing == nil {
		return fmt.Errorf("no usable signing key")
	}
	kr.mu.Lock()
	kr.signing, kr.public = signing, public
	kr.mu.Unlock()
	return nil
}

// learn adds the key kid to the ring when the database holds it and it is still usable, so a token
// signed after a rotation on another replica verifies here at once. It reports whether the key is known.
func (kr *KeyRing) learn(ctx context.Context, kid string) bool {
	row, err := kr.store.Q().SigningKeyGetUsable(ctx, db.SigningKeyGetUsableParams{Kid: kid, GraceSeconds: kr.graceSeconds()})
	if err != nil {
		return false
	}
	key, err := jwk.ParseKey(row.PrivateJWK)
	if err != nil {
		return false
	}
	pub, err := key.PublicKey()
	if err != nil {
		return false
	}
	kr.mu.Lock()
	defer kr.mu.Unlock()
	public, err := kr.public.Clone()
	if err != nil {
		return false
	}
	if err := public.AddKey(pub); err != nil {
		return false
	}
	kr.public = public
	return true
}

// Refresh reloads the keys every interval until ctx ends, so rotations reach this replica.
func (kr *KeyRing) Refresh(ctx context.Context, interval time.Duration) {
	periodic.Run(ctx, interval, func(ctx context.Context) { _ = kr.reload(ctx) })
}

// knows reports whether kid is among the loaded keys.
func (kr *KeyRing) knows(kid string) bool {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	_, ok := kr.public.LookupKeyID(kid)
	return ok
}

// JWKS returns the public keys that verify service tokens.
func (kr *KeyRing) JWKS() jwk.Set {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	return kr.public
}

func (kr *KeyRing) current() (jwk.Key, jwk.Set) {
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	return kr.signing, kr.public
}
