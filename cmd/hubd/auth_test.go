package main

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/identity"
)

// TestAuthFlagsMode: --auth-issuer (else HUBD_AUTH_ISSUER) not given is the embedded provider, given
// empty is off, given a URL is external; the flag wins over the environment.
func TestAuthFlagsMode(t *testing.T) {
	for name, tc := range map[string]struct {
		env  *string
		args []string
		mode identity.Mode
		err  bool
	}{
		"not given":     {nil, nil, identity.ModeEmbedded, false},
		"flag empty":    {nil, []string{"--auth-issuer="}, identity.ModeOff, false},
		"env empty":     {ptr(""), nil, identity.ModeOff, false},
		"flag URL":      {nil, []string{"--auth-issuer=https://idp.example/realms/x"}, identity.ModeExternal, false},
		"env URL":       {ptr("https://idp.example"), nil, identity.ModeExternal, false},
		"flag over env": {ptr("https://idp.example"), []string{"--auth-issuer="}, identity.ModeOff, false},
		"not a URL":     {nil, []string{"--auth-issuer=idp.example"}, 0, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("HUBD_AUTH_ISSUER", "")
			if tc.env == nil {
				require.NoError(t, os.Unsetenv("HUBD_AUTH_ISSUER"))
			} else {
				t.Setenv("HUBD_AUTH_ISSUER", *tc.env)
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			f := registerAuthFlags(fs)
			require.NoError(t, fs.Parse(tc.args))
			cfg, err := f.config(fs)
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.mode, cfg.Mode)
			require.Equal(t, identity.DefaultOrgClaim, cfg.OrgClaim)
		})
	}
}

func ptr[T any](v T) *T { return &v }
