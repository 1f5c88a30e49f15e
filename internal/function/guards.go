package function

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/hubd/hubd/internal/apierr"
)

// Guards are the reasons a path holds what it holds: key to value, stamped on the paths a write
// changes. A Clearance lets a write change guarded paths: a path is cleared when every one of its guard
// keys is cleared by the requirements on that key, all of which it satisfies (Exists: any value; In:
// the value is listed; NotIn: it is not; DoesNotExist never clears the key). Unguarded paths are always
// cleared; an empty Clearance clears no guarded path.

var guardKey = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?$`)

// CheckGuards checks guard stamps and a Clearance as a request names them (field: where they are).
func CheckGuards(guards map[string]string, clearance []Requirement, field string) error {
	for k, v := range guards {
		if !guardKey.MatchString(k) {
			return apierr.Validation(fmt.Sprintf("%s: guard key %q must be 1 to 128 letters, digits, ., _, / and -, starting and ending with a letter or digit", join(field, "Guards"), k),
				apierr.Item{Item: join(field, "Guards."+k), Description: "not a guard key"})
		}
		if len(v) > 256 {
			return apierr.Validation(fmt.Sprintf("%s: the value of guard %q is longer than 256 characters", join(field, "Guards"), k), apierr.Item{Item: join(field, "Guards."+k), Description: "too long"})
		}
	}
	for i, r := range clearance {
		at := join(field, fmt.Sprintf("Clearance.%d", i))
		if r.Key == "" {
			return apierr.Validation(at+": Key is required", apierr.Item{Item: at + ".Key", Description: "missing"})
		}
		switch r.Operator {
		case OpIn, OpNotIn:
			if len(r.Values) == 0 {
				return apierr.Validation(fmt.Sprintf("%s: %s needs Values", at, r.Operator), apierr.Item{Item: at + ".Values", Description: "missing"})
			}
		case OpExists, OpDoesNotExist:
			if len(r.Values) > 0 {
				return apierr.Validation(fmt.Sprintf("%s: %s takes no Values", at, r.Operator), apierr.Item{Item: at + ".Values", Description: "must be empty"})
			}
		default:
			return apierr.Validation(fmt.Sprintf("%s: Operator %q is not one of Exists, In, NotIn, DoesNotExist", at, r.Operator),
				apierr.Item{Item: at + ".Operator", Description: "unknown operator"})
		}
	}
	return nil
}

// Uncleared returns the guard keys of guards that clearance does not clear, in order.
func Uncleared(guards map[string]string, clearance []Requirement) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(guards)) {
		if !cleared(k, guards[k], clearance) {
			out = append(out, k)
		}
	}
	return out
}

func cleared(key, value string, clearance []Requirement) bool {
	any := false
	for _, r := range clearance {
		if r.Key != key {
			continue
		}
		any = true
		listed := false
		for _, v := range r.Values {
			listed = listed || v == value
		}
		switch r.Operator {
		case OpExists:
		case OpIn:
			if !listed {
				return false
			}
		case OpNotIn:
			if listed {
				return false
			}
		default:
			return false
		}
	}
	return any
}
