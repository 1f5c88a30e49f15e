package oauthclient

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNormalizeRedirectURI(t *testing.T) {
	t.Parallel()
	ok := map[string]string{
		"https://app.example.com":        "https://app.example.com/",
		"https://app.example.com/":       "https://app.example.com/",
		"HTTPS://App.Example.COM":        "https://app.example.com/",
		"https://app.example.com/ui/":    "https://app.example.com/ui/",
		"https://app.example.com/ui":     "https://app.example.com/ui",
		"https://app.example.com/Cb?x=1": "https://app.example.com/Cb?x=1",
		"https://app.example.com:8443":   "https://app.example.com:8443/",
		"http://localhost:5173":          "http://localhost:5173/",
		"http://127.0.0.1:8080/callback": "http://127.0.0.1:8080/callback",
		"http://[::1]:3000/":             "http://[::1]:3000/",
		"https://app.example.com/a%2Fb/": "https://app.example.com/a%2Fb/",
	}
	for in, want := range ok {
		got, err := NormalizeRedirectURI(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	bad := map[string]string{
		"https://*.example.com/":          "wildcards",
		"https://app.example.com/*":       "wildcards",
		"https://app.example.com/#frag":   "fragment",
		"https://app.example.com/#":       "fragment",
		"https://user:pw@app.example.com": "user information",
		"https://user@app.example.com/":   "user information",
		"http://app.example.com/":         "http is allowed only",
		"http://10.0.0.1/":                "http is allowed only",
		"ftp://app.example.com/":          "absolute http or https",
		"app.example.com/cb":              "absolute http or https",
		"/callback":                       "absolute http or https",
		"https:///cb":                     "absolute http or https",
		"javascript:alert(1)":             "absolute http or https",
		"https://app.example.com/a b":     "whitespace",
		"https://app.example.com:99999/":  "not a URL",
		"":                                "absolute http or https",
	}
	for in, want := range bad {
		_, err := NormalizeRedirectURI(in)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), want, in)
	}
}

func TestNormalizeRedirectURIs(t *testing.T) {
	t.Parallel()
	got, err := NormalizeRedirectURIs([]string{"https://a.example.com", "https://b.example.com/x", "https://a.example.com/", "https://A.example.com"})
	require.NoError(t, err)
	require.Equal(t, []string{"https://a.example.com/", "https://b.example.com/x"}, got, "repeats collapse once normalized, in the order given")

	_, err = NormalizeRedirectURIs([]string{"https://a.example.com/", "https://*.example.com/"})
	var ue *RedirectURIError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, 1, ue.Index)
	require.Contains(t, ue.Error(), `"https://*.example.com/"`)
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://app.example.com/":        "https://app.example.com",
		"https://app.example.com/ui/x?y":  "https://app.example.com",
		"https://app.example.com:443/":    "https://app.example.com",
		"https://app.example.com:8443/ui": "https://app.example.com:8443",
		"http://localhost:80/":            "http://localhost",
		"http://localhost:5173/":          "http://localhost:5173",
		"http://[::1]:3000/":              "http://[::1]:3000",
		"not a url":                       "",
	} {
		require.Equal(t, want, Origin(in), in)
	}
}

func TestNewClientID(t *testing.T) {
	t.Parallel()
	a, b := newClientID(), newClientID()
	require.NotEqual(t, a, b)
	require.Regexp(t, `^hubd-[a-z2-7]{26}$`, a)
}
