package authz

import (
	"sort"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
)

// Subjects are the users and groups a permission is granted to (sets: the value is true).
type Subjects struct {
	UserIDs  map[string]bool
	GroupIDs map[string]bool
}

// Grants is an entity's Permissions field: permission name to Subjects.
type Grants map[string]Subjects

func (g Grants) grants(perm Permission, user uuid.UUID) bool {
	return g[string(perm)].UserIDs[user.String()]
}

// Validate checks permission names and subject IDs, naming each bad one by its path under field.
func (g Grants) Validate(field string) error {
	var items []apierr.Item
	names := make([]string, 0, len(g))
	for name := range g {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !Grantable[Permission(name)] {
			items = append(items, apierr.Item{Item: field + "." + name, Description: "not a permission name (View, Edit, Manage, Delete, Claim, Use, CreateChildren, ViewChildren)"})
			continue
		}
		for kind, ids := range map[string]map[string]bool{"UserIDs": g[name].UserIDs, "GroupIDs": g[name].GroupIDs} {
			for id := range ids {
				if _, err := uuid.Parse(id); err != nil {
					items = append(items, apierr.Item{Item: field + "." + name + "." + kind + "." + id, Description: "not a UUID"})
				}
			}
		}
	}
	if len(items) > 0 {
		sort.Slice(items, func(i, j int) bool { return items[i].Item < items[j].Item })
		return apierr.Validation("invalid Permissions", items...)
	}
	return nil
}

// Normalized returns g with empty subject sets instead of nil ones and false entries dropped, so what
// is stored and returned has one form.
func (g Grants) Normalized() Grants {
	out := Grants{}
	for name, s := range g {
		out[name] = Subjects{UserIDs: trueOnly(s.UserIDs), GroupIDs: trueOnly(s.GroupIDs)}
	}
	return out
}

// trueOnly keeps the granted IDs, in canonical (lowercase, dashed) form so that grants match callers
// however the client wrote them.
func trueOnly(m map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k, v := range m {
		if !v {
			continue
		}
		if id, err := uuid.Parse(k); err == nil {
			k = id.String()
		}
		out[k] = true
	}
	return out
}

// Equal reports whether two normalized grants are the same.
func (g Grants) Equal(other Grants) bool {
	if len(g) != len(other) {
		return false
	}
	for name, s := range g {
		o, ok := other[name]
		if !ok || !sameSet(s.UserIDs, o.UserIDs) || !sameSet(s.GroupIDs, o.GroupIDs) {
			return false
		}
	}
	return true
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
