package authz

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
)

// Subjects are the users and groups a permission is granted to (sets: the value is true).
type Subjects struct {
	UserIDs  map[string]bool
	GroupIDs map[string]bool
}

// Grants is an entity's Permissions field: permission name to Subjects.
type Grants map[string]Subjects

// grants reports whether g grants perm to p's User or to one of its Groups.
func (g Grants) grants(perm Permission, p auth.Principal) bool {
	s, ok := g[string(perm)]
	if !ok {
		return false
	}
	if s.UserIDs[p.UserID.String()] {
		return true
	}
	for _, id := range p.GroupIDs {
		if s.GroupIDs[id.String()] {
			return true
		}
	}
	return false
}

// Validate checks permission names and subject IDs, naming each bad one by its path under field.
func (g Grants) Validate(field string) error {
	var items []apierr.Item
	names := slices.Sorted(maps.Keys(g))
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

// Containing returns, for each of perms, the Permissions documents granting it to p's User or to one of
// its Groups: a Permissions column grants one of perms to p exactly when it contains (@>) one of them,
// which its GIN (jsonb_path_ops) index answers.
func Containing(p auth.Principal, perms ...Permission) []json.RawMessage {
	var docs []json.RawMessage
	for _, perm := range perms {
		add := func(kind, id string) {
			doc, _ := json.Marshal(map[string]map[string]map[string]bool{string(perm): {kind: {id: true}}})
			docs = append(docs, doc)
		}
		add("UserIDs", p.UserID.String())
		for _, g := range p.GroupIDs {
			add("GroupIDs", g.String())
		}
	}
	return docs
}

// Holds returns the names of the permissions g grants to p's User or one of its Groups.
func (g Grants) Holds(p auth.Principal) map[string]bool {
	out := map[string]bool{}
	for name := range g {
		if g.grants(Permission(name), p) {
			out[name] = true
		}
	}
	return out
}

// WithViewer returns a copy of g that also grants View to the User userID: what a bot User backs (its
// ServiceAccount, its BridgeWorker) is visible to it whatever its role.
func (g Grants) WithViewer(userID uuid.UUID) Grants {
	out := make(Grants, len(g)+1)
	for perm, subjects := range g {
		out[perm] = subjects
	}
	view := out[string(View)]
	users := map[string]bool{userID.String(): true}
	for id, ok := range view.UserIDs {
		users[id] = ok
	}
	out[string(View)] = Subjects{UserIDs: users, GroupIDs: view.GroupIDs}
	return out
}
