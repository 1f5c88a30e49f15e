package password

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHashAndVerify(t *testing.T) {
	t.Parallel()
	h, err := Hash("correct horse battery staple")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$"), h)

	ok, err := Verify("correct horse battery staple", h)
	require.NoError(t, err)
	require.True(t, ok)

	ok, err = Verify("correct horse battery stapl", h)
	require.NoError(t, err)
	require.False(t, ok)

	// The same password hashes differently each time (fresh salt), and both verify.
	h2, err := Hash("correct horse battery staple")
	require.NoError(t, err)
	require.NotEqual(t, h, h2)
	ok, err = Verify("correct horse battery staple", h2)
	require.NoError(t, err)
	require.True(t, ok)
}

func TestVerifyReadsParametersFromTheHash(t *testing.T) {
	t.Parallel()
	// Verify takes the parameters from the string: the same salt and key under other parameters fail.
	h, err := Hash("pw-12345")
	require.NoError(t, err)
	lower := strings.Replace(h, "m=19456,t=2,p=1", "m=8192,t=1,p=2", 1)
	ok, err := Verify("pw-12345", lower)
	require.NoError(t, err)
	require.False(t, ok, "other parameters give another key")
}

func TestVerifyRefusesMalformedHashes(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"",
		"plain",
		"$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=16$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=0,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=4194304,t=2,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=19456,t=2,p=1$!!$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0",
	} {
		_, err := Verify("x", bad)
		require.ErrorIs(t, err, ErrMalformed, bad)
	}
}
