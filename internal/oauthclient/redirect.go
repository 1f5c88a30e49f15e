package oauthclient

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// loopbackHosts may be redirected to over plain http: a browser app in development runs there, and
// traffic to it does not leave the machine. Everywhere else a code in a redirect must travel over https.
var loopbackHosts = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}

// NormalizeRedirectURI checks one redirect URI and returns it in the form it is stored and matched in:
// an absolute http(s) URL without fragment, user information or wildcards, http only for loopback hosts;
// scheme and host lowercased and a bare origin given its root path, so "https://app.example.com" and
// "https://app.example.com/" are the same URI. A path (and query) is kept exactly: matching is exact.
// The error says what is wrong, for a person to fix.
func NormalizeRedirectURI(raw string) (string, error) {
	switch {
	case strings.Contains(raw, "*"):
		return "", fmt.Errorf("wildcards (*) are not allowed: register each exact redirect URI")
	case strings.IndexFunc(raw, unicode.IsSpace) >= 0 || strings.IndexFunc(raw, unicode.IsControl) >= 0:
		return "", fmt.Errorf("it contains whitespace or control characters")
	case strings.Contains(raw, "#"):
		return "", fmt.Errorf("a fragment (#...) is not allowed in a redirect URI")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("it is not a URL: %v", unwrapURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Opaque != "" || u.Host == "" {
		return "", fmt.Errorf("it must be an absolute http or https URL, e.g. https://app.example.com/callback")
	}
	if u.User != nil {
		return "", fmt.Errorf("user information (user@) is not allowed in a redirect URI")
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", fmt.Errorf("it has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("it is not a URL: port %s is out of range", p)
		}
	}
	if u.Scheme == "http" && !loopbackHosts[host] {
		return "", fmt.Errorf("http is allowed only for localhost, 127.0.0.1 and [::1]: use https")
	}
	u.Host = strings.ToLower(u.Host)
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	u.ForceQuery = false
	return u.String(), nil
}

// unwrapURLError drops url.Error's repetition of the operation and the URL (the message names the URI).
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// RedirectURIError is a redirect URI that NormalizeRedirectURIs refused: which one, and why.
type RedirectURIError struct {
	Index  int
	URI    string
	Reason error
}

func (e *RedirectURIError) Error() string {
	return fmt.Sprintf("redirect URI %q is not allowed: %v", e.URI, e.Reason)
}

// NormalizeRedirectURIs normalizes each URI (NormalizeRedirectURI) and drops those equal to an earlier one
// once normalized, keeping the order they were given in. The first refused one is a *RedirectURIError.
func NormalizeRedirectURIs(raw []string) ([]string, error) {
	out := make([]string, 0, len(raw))
	seen := make(map[string]bool, len(raw))
	for i, r := range raw {
		n, err := NormalizeRedirectURI(r)
		if err != nil {
			return nil, &RedirectURIError{Index: i, URI: r, Reason: err}
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// Origin is the origin a browser sends (Origin header) from a page at the normalized redirect URI uri:
// scheme://host[:port], without the scheme's default port. Empty when uri is not a URL.
func Origin(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return ""
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return u.Scheme + "://" + net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	return u.Scheme + "://" + host
}
