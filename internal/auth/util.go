package auth

import (
	"errors"
	"strings"
)

func jwtErrIs(err, target error) bool { return errors.Is(err, target) }

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
