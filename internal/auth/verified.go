package auth

import (
	"sync"
	"time"
)

// maxVerifiedTokens bounds the cache of verified tokens (about 1 KB each).
const maxVerifiedTokens = 10_000

// verifiedTokens remembers tokens whose signature and claims were verified, until they expire, so that a
// client sending the same token with every request pays for one ES256 verification per token rather than
// per request. What the token says cannot change (it is signed); what may change is checked apart: its
// key leaving the ring on every request (Verify), the user's membership and role by authentication.
type verifiedTokens struct {
	mu     sync.Mutex
	tokens map[string]verifiedToken
}

type verifiedToken struct {
	principal Principal
	keyID     string
	expires   time.Time
}

// get returns a remembered token's Principal and the ID of the key that signed it.
func (v *verifiedTokens) get(token string, now time.Time) (Principal, string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t, ok := v.tokens[token]
	if !ok || !now.Before(t.expires) {
		return Principal{}, "", false
	}
	return t.principal, t.keyID, true
}

func (v *verifiedTokens) put(token string, p Principal, keyID string, expires, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tokens == nil {
		v.tokens = map[string]verifiedToken{}
	}
	if len(v.tokens) >= maxVerifiedTokens {
		for k, t := range v.tokens {
			if !now.Before(t.expires) {
				delete(v.tokens, k)
			}
		}
		// Still full of live tokens: forget some (map order is random), they verify again when next seen.
		for k := range v.tokens {
			if len(v.tokens) < maxVerifiedTokens*9/10 {
				break
			}
			delete(v.tokens, k)
		}
	}
	v.tokens[token] = verifiedToken{principal: p, keyID: keyID, expires: expires}
}
