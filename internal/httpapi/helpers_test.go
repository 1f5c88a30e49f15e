package httpapi_test

import (
	"crypto"
	"encoding/base64"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/stretchr/testify/require"
)

const cryptoSHA256 = crypto.SHA256

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// b64urlThumb is the RFC 7638 thumbprint of a raw key, as hubd names keys.
func b64urlThumb(t *testing.T, raw any) string {
	t.Helper()
	k, err := jwk.FromRaw(raw)
	require.NoError(t, err)
	pub, err := k.PublicKey()
	require.NoError(t, err)
	tp, err := pub.Thumbprint(crypto.SHA256)
	require.NoError(t, err)
	return b64url(tp)
}
