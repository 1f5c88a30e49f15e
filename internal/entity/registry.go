package entity

import (
	"slices"
	"sync"
)

// The registry holds every declared family and event family, so that what is said of them once, in
// their declaration, serves the whole instance (which event families are quiet).
var registry struct {
	sync.Mutex
	events map[string]bool // event family -> quiet
}

// Declare registers a family with the kit, as its package declares it (var Family = entity.Declare(...)).
// Its event family is quiet when the family says so (Family.Quiet).
func Declare[R any, E Entity, F Fields](f *Family[R, E, F]) *Family[R, E, F] {
	f.hooks() // a family its types cannot serve fails here, as the program starts
	DeclareEvents(f.Event, f.Quiet)
	return f
}

// DeclareEvents registers a family of events that no entity family of the kit emits (command_run,
// organization_member). quiet says that its events never change memberships, roles, Groups or grants on
// Spaces (see Family.Quiet); a family declared twice must say the same both times.
func DeclareEvents(name string, quiet bool) {
	registry.Lock()
	defer registry.Unlock()
	if registry.events == nil {
		registry.events = map[string]bool{}
	}
	if was, ok := registry.events[name]; ok && was != quiet {
		panic("entity: event family " + name + " is declared both quiet and not")
	}
	registry.events[name] = quiet
}

// QuietEvents lists, sorted, the declared event families whose events never change what replicas
// remember of members (event.Log.QuietFamilies).
func QuietEvents() []string {
	registry.Lock()
	defer registry.Unlock()
	var out []string
	for name, quiet := range registry.events {
		if quiet {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
