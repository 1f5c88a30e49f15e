package httpapi

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// signInGuard slows down guessing at the sign-in endpoints (POST /auth/token, POST /auth/worker): failed
// attempts are counted per credential (a key's kid, a worker's ID) from one client address, and per
// client address, and once either runs out, every attempt for it is refused with 429 and Retry-After
// until it refills, right or wrong, so the endpoint stops being an oracle. A credential is never counted
// alone: whoever knows a worker's ID could otherwise keep the worker out by failing from anywhere. Successful sign-ins cost nothing. The counts live in this
// replica's memory: a protection, not a quota (N replicas allow N times the rate).
type signInGuard struct {
	mu         sync.Mutex
	credential limiterSet // keyed by credentialAtAddress
	address    limiterSet
}

// Failed sign-ins allowed: a burst, then one more per interval.
const (
	credentialFailureBurst    = 10
	credentialFailureInterval = 6 * time.Second
	addressFailureBurst       = 30
	addressFailureInterval    = 2 * time.Second
	// maxGuardEntries bounds the memory of each set; past it, refilled entries are forgotten first.
	maxGuardEntries = 100_000
)

func newSignInGuard() *signInGuard {
	return &signInGuard{
		credential: limiterSet{limit: rate.Every(credentialFailureInterval), burst: credentialFailureBurst, m: map[string]*rate.Limiter{}},
		address:    limiterSet{limit: rate.Every(addressFailureInterval), burst: addressFailureBurst, m: map[string]*rate.Limiter{}},
	}
}

type limiterSet struct {
	limit rate.Limit
	burst int
	m     map[string]*rate.Limiter
}

// wait returns how long key must wait before its next attempt (0: it may try now).
func (s *limiterSet) wait(key string, now time.Time) time.Duration {
	lim, ok := s.m[key]
	if !ok {
		return 0
	}
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(s.limit) * float64(time.Second))
}

func (s *limiterSet) fail(key string, now time.Time) {
	lim, ok := s.m[key]
	if !ok {
		if len(s.m) >= maxGuardEntries {
			s.prune(now)
		}
		lim = rate.NewLimiter(s.limit, s.burst)
		s.m[key] = lim
	}
	lim.AllowN(now, 1)
}

// prune forgets entries that have refilled (they hold no information), then, if that is not enough, any.
func (s *limiterSet) prune(now time.Time) {
	for k, lim := range s.m {
		if lim.TokensAt(now) >= float64(s.burst) {
			delete(s.m, k)
		}
	}
	for k := range s.m {
		if len(s.m) < maxGuardEntries/2 {
			break
		}
		delete(s.m, k)
	}
}

// check returns the wait before r may try to sign in with credential.
func (g *signInGuard) check(r *http.Request, credential string) time.Duration {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	addr := clientAddress(r)
	return max(g.credential.wait(credentialAtAddress(credential, addr), now), g.address.wait(addr, now))
}

// failed records a failed sign-in of r with credential.
func (g *signInGuard) failed(r *http.Request, credential string) {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	addr := clientAddress(r)
	if credential != "" {
		g.credential.fail(credentialAtAddress(credential, addr), now)
	}
	g.address.fail(addr, now)
}

// SignInGuard is the guard, for the embedded OpenID provider's login page, whose failures count with
// those of the token endpoints (a password's username is its credential).
type SignInGuard = signInGuard

// NewSignInGuard returns a guard to share between the server (Deps.SignIns) and the login page.
func NewSignInGuard() *SignInGuard { return newSignInGuard() }

// Check returns the wait before r may try to sign in with credential (0: now).
func (g *signInGuard) Check(r *http.Request, credential string) time.Duration {
	return g.check(r, credential)
}

// Failed records a failed sign-in of r with credential.
func (g *signInGuard) Failed(r *http.Request, credential string) { g.failed(r, credential) }

// credentialAtAddress keys a credential's failures with the address they came from.
func credentialAtAddress(credential, addr string) string { return credential + " " + addr }

// clientAddress is the peer's IP address. Forwarding headers are not trusted: any client can send them.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// retryAfterSeconds renders a wait as Retry-After (whole seconds, at least 1).
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(int(math.Max(1, math.Ceil(d.Seconds()))))
}
