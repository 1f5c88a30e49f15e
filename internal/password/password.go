// Package password hashes and verifies the passwords of local users, who sign in on the embedded
// OpenID provider's login page. Hashes are argon2id in the PHC string format
// ($argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>, unpadded standard base64), so the
// parameters travel with each hash and can be raised later without invalidating stored ones.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// The parameters of new hashes: OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane).
const (
	memoryKiB = 19 * 1024
	passes    = 2
	lanes     = 1
	saltLen   = 16
	keyLen    = 32
	// MinLength is the fewest characters a password may have.
	MinLength = 8
	// maxMemoryKiB bounds what a stored hash may ask of Verify (1 GiB), so a corrupt row cannot exhaust memory.
	maxMemoryKiB = 1 << 20
)

// ErrMalformed is returned for a stored hash that is not an argon2id PHC string this package can check.
var ErrMalformed = errors.New("password hash is not an argon2id PHC string")

// Hash returns the PHC string of password with a fresh random salt.
func Hash(password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("reading salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, passes, memoryKiB, lanes, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, memoryKiB, passes, lanes,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether password matches the PHC string encoded, comparing in constant time.
func Verify(password, encoded string) (bool, error) {
	p, err := parse(encoded)
	if err != nil {
		return false, err
	}
	key := argon2.IDKey([]byte(password), p.salt, p.passes, p.memory, p.lanes, uint32(len(p.key)))
	return subtle.ConstantTimeCompare(key, p.key) == 1, nil
}

// VerifyNone spends the time a Verify takes, for a sign-in naming no user with a password, so the
// answer's timing does not tell which usernames exist.
func VerifyNone(password string) {
	dummyOnce.Do(func() { dummy, _ = Hash("no user has this password") })
	_, _ = Verify(password, dummy)
}

var (
	dummyOnce sync.Once
	dummy     string
)

type params struct {
	memory, passes uint32
	lanes          uint8
	salt, key      []byte
}

func parse(encoded string) (params, error) {
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return params{}, ErrMalformed
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return params{}, ErrMalformed
	}
	var p params
	if n, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.passes, &p.lanes); err != nil || n != 3 ||
		p.memory == 0 || p.memory > maxMemoryKiB || p.passes == 0 || p.passes > 16 || p.lanes == 0 {
		return params{}, ErrMalformed
	}
	var err error
	if p.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(p.salt) < 8 {
		return params{}, ErrMalformed
	}
	if p.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(p.key) < 16 {
		return params{}, ErrMalformed
	}
	return p, nil
}
