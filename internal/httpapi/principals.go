package httpapi

import (
	"sync"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/auth"
)

// maxMembers bounds the memberships a replica remembers.
const maxMembers = 10_000

// members remembers what authentication reads from the database about a token's user in its
// organization (its membership role, and for a non-admin its Groups and Space grants) until the next
// change in that organization that may alter it. Every such change commits events of a family that is
// not quiet (event.Log.QuietFamilies), and every replica hears of every numbered event
// (event.Notifier.WatchAccess), so a removed member or a lowered role stops counting as soon as the
// change's events are signalled, as when they were read on every request. While the replica does not hear
// the signals (its listener reconnecting), nothing is remembered.
type members struct {
	mu      sync.Mutex
	entries map[memberKey]memberEntry
}

type memberKey struct {
	org, user uuid.UUID
	tokenRole auth.Role // the role the token carries, the upper bound of the effective one
}

type memberEntry struct {
	changed <-chan struct{} // closed at the next change in the organization that may alter it
	member  bool
	// role is the effective role; groups and spaces are set for a role other than admin. Every request the
	// entry serves shares them (through its Principal): they are never modified.
	role   auth.Role
	groups []uuid.UUID
	spaces map[uuid.UUID]map[string]bool
}

func (e memberEntry) current() bool {
	select {
	case <-e.changed:
		return false
	default:
		return true
	}
}

func (m *members) get(k memberKey) (memberEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[k]
	if ok && !e.current() {
		delete(m.entries, k)
		return memberEntry{}, false
	}
	return e, ok
}

func (m *members) put(k memberKey, e memberEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[memberKey]memberEntry{}
	}
	if len(m.entries) >= maxMembers {
		for k, e := range m.entries {
			if !e.current() || len(m.entries) >= maxMembers*9/10 {
				delete(m.entries, k)
			}
		}
	}
	m.entries[k] = e
}
