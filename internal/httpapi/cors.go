package httpapi

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseOrigins reads a comma-separated list of CORS origins: each is * or scheme://host[:port] (http or
// https, no path, query or user), as a browser sends it in Origin.
func ParseOrigins(list string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o == "*" {
			out = append(out, o)
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("%q is not an origin: write scheme://host[:port], e.g. https://app.example.com", o)
		}
		out = append(out, u.Scheme+"://"+u.Host)
	}
	return out, nil
}

// allowsOrigin is the CORS rule: an origin --cors-origins names (or any, with *), or the origin of a
// registered OAuth client's redirect URI.
func (s *Server) allowsOrigin(origin string) (bool, error) {
	for _, o := range s.cfg.CORSOrigins {
		if o == "*" || o == origin {
			return true, nil
		}
	}
	return s.deps.OAuthClients != nil && s.deps.OAuthClients.AllowsOrigin(origin), nil
}
