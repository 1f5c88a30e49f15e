package auth

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestVerifiedTokensExpireAndStayBounded(t *testing.T) {
	var v verifiedTokens
	now := time.Now()
	p := Principal{UserID: uuid.New(), OrganizationID: uuid.New(), Role: RoleMember}
	v.put("a", p, "k1", now.Add(time.Minute), now)
	if got, kid, ok := v.get("a", now); !ok || kid != "k1" || got.UserID != p.UserID || got.OrganizationID != p.OrganizationID || got.Role != p.Role {
		t.Fatalf("a verified token is not remembered: %v %v", got, ok)
	}
	if _, _, ok := v.get("a", now.Add(time.Minute)); ok {
		t.Fatal("a token is remembered at its expiry: it must be verified (and refused) again")
	}
	if _, _, ok := v.get("b", now); ok {
		t.Fatal("an unknown token is remembered")
	}
	for i := range maxVerifiedTokens * 2 {
		v.put(fmt.Sprint(i), p, "k1", now.Add(time.Hour), now)
	}
	if n := len(v.tokens); n > maxVerifiedTokens {
		t.Fatalf("%d tokens remembered, more than the bound %d", n, maxVerifiedTokens)
	}
}
