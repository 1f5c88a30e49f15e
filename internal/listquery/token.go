package listquery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
)

// TokenCodec makes and checks continue tokens: versioned JSON in unpadded URL-safe base64, with an
// HMAC so a client cannot forge or alter one, bound to the query that made it. The key is shared by
// all replicas (store.Secret), so any replica resumes any list.
type TokenCodec struct{ key []byte }

// NewTokenCodec returns a codec signing with key.
func NewTokenCodec(key []byte) *TokenCodec { return &TokenCodec{key: key} }

const tokenVersion = 1

type tokenBody struct {
	V int             `json:"v"`
	Q string          `json:"q"` // hash of the query's signature
	K json.RawMessage `json:"k"` // keyset of the last row returned
}

func (c *TokenCodec) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(payload)
	return m.Sum(nil)
}

func querySum(signature string) string {
	s := sha256.Sum256([]byte(signature))
	return base64.RawURLEncoding.EncodeToString(s[:16])
}

func (c *TokenCodec) encode(signature string, keyset json.RawMessage) string {
	payload, _ := json.Marshal(tokenBody{V: tokenVersion, Q: querySum(signature), K: keyset})
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(c.mac(payload))
}

func badToken(why string) error {
	return apierr.UserInput("continue: "+why+"; start the list again without continue", apierr.Item{Item: "continue", Description: why})
}

func (c *TokenCodec) decode(token, signature string) ([]json.RawMessage, error) {
	p64, m64, ok := strings.Cut(token, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	mac, err2 := base64.RawURLEncoding.DecodeString(m64)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, c.mac(payload)) {
		return nil, badToken("the token is not one this service issued")
	}
	var body tokenBody
	if err := json.Unmarshal(payload, &body); err != nil || body.V != tokenVersion {
		return nil, badToken("the token's version is not supported")
	}
	if body.Q != querySum(signature) {
		return nil, badToken("the token was issued for a request with other parameters; every parameter but limit must stay the same")
	}
	var keys []json.RawMessage
	if err := json.Unmarshal(body.K, &keys); err != nil {
		return nil, badToken("the token is malformed")
	}
	return keys, nil
}

// keysetValues converts a token's keyset to typed bind values for the plan's order.
func keysetValues(p *plan, keys []json.RawMessage) ([]any, error) {
	if len(keys) != len(p.order) {
		return nil, badToken("the token does not match the order of the list")
	}
	out := make([]any, len(keys))
	for i, o := range p.order {
		var err error
		switch o.attr.Type {
		case Int:
			var v int64
			err = json.Unmarshal(keys[i], &v)
			out[i] = v
		case Bool:
			var v bool
			err = json.Unmarshal(keys[i], &v)
			out[i] = v
		case UUID:
			var s string
			if err = json.Unmarshal(keys[i], &s); err == nil {
				out[i], err = uuid.Parse(s)
			}
		case Time:
			var s string
			if err = json.Unmarshal(keys[i], &s); err == nil {
				out[i], err = time.Parse(time.RFC3339Nano, s)
			}
		default:
			var s string
			err = json.Unmarshal(keys[i], &s)
			out[i] = s
		}
		if err != nil {
			return nil, badToken("the token is malformed")
		}
	}
	return out, nil
}
