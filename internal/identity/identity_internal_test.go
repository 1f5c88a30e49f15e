package identity

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestModeFor(t *testing.T) {
	t.Parallel()
	require.Equal(t, ModeEmbedded, ModeFor(false, ""))
	require.Equal(t, ModeOff, ModeFor(true, ""))
	require.Equal(t, ModeOff, ModeFor(true, "  "))
	require.Equal(t, ModeExternal, ModeFor(true, "https://idp.example/"))
	require.Equal(t, ModeOff, Mode(0), "the zero Mode signs no one in")
}

func TestConfigURLs(t *testing.T) {
	t.Parallel()
	base := "https://hubd.example"
	require.Equal(t, "https://hubd.example/oidc", Config{Mode: ModeEmbedded, Issuer: "ignored"}.IssuerURL(base+"/"))
	require.Equal(t, "https://idp.example/", Config{Mode: ModeExternal, Issuer: "https://idp.example/"}.IssuerURL(base),
		"an issuer ending in a slash is kept: iss must equal it")
	require.Equal(t, "", Config{Mode: ModeOff, Issuer: "https://idp.example"}.IssuerURL(base))
	require.Equal(t, base+"/auth/token", Config{}.AudienceFor(base))
	require.Equal(t, "hubd-api", Config{Audience: "hubd-api"}.AudienceFor(base))
	require.Equal(t, "organization", Config{}.orgClaim())
	require.Equal(t, "org_id", Config{OrgClaim: "org_id"}.orgClaim())
}

func TestOrgNames(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string][]string{
		`"acme"`:                     {"acme"},
		`""`:                         nil,
		`["a","b"]`:                  {"a", "b"},
		`{"acme":{}}`:                {"acme"},
		`{"acme":{"id":"0b5e-id"}}`:  {"0b5e-id"},
		`42`:                         nil,
		`{"acme":{"id":"x"},"b":{}}`: nil, // checked below: two names, any order
		`[]`:                         {},
	} {
		got := orgNames(json.RawMessage(raw))
		if raw == `{"acme":{"id":"x"},"b":{}}` {
			require.ElementsMatch(t, []string{"x", "b"}, got)
			continue
		}
		require.Equal(t, want, got, raw)
	}
}

func TestAudienceIncludes(t *testing.T) {
	t.Parallel()
	require.True(t, audienceIncludes(json.RawMessage(`"x"`), "x"))
	require.True(t, audienceIncludes(json.RawMessage(`["a","x"]`), "x"))
	require.False(t, audienceIncludes(json.RawMessage(`["a"]`), "x"))
	require.False(t, audienceIncludes(nil, "x"))
}
