package bot

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// GenerateKey makes a new ES256 key pair for a bot's ServiceAccount, writes the private key as a JWK to
// path (readable by its owner only; an existing file is never overwritten) and returns the body that
// registers the public half: POST /api/service_account/{id}/key with {"PublicJWK": ...}.
func GenerateKey(path string) ([]byte, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	key, err := jwk.FromRaw(priv)
	if err != nil {
		return nil, err
	}
	if err := key.Set(jwk.AlgorithmKey, jwa.ES256); err != nil {
		return nil, err
	}
	private, err := json.MarshalIndent(key, "", "  ")
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("writing the private key: %w", err)
	}
	if _, err := f.Write(append(private, '\n')); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	public, err := key.PublicKey()
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(map[string]any{"PublicJWK": public}, "", "  ")
}
