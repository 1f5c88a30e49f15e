package unit

import (
	"strings"

	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
)

// PathAnnotation is what a Unit records about one path of its data: the guards stamped on it (the
// reasons it holds what it holds) and whether it is a protected local override. It applies to the
// path and everything below it, and stays while the Unit's data changes.
type PathAnnotation struct {
	ResourceType string            `json:"ResourceType"`
	ResourceName string            `json:"ResourceName"`
	Path         string            `json:"Path"`
	Guards       map[string]string `json:"Guards"`
	Protected    bool              `json:"Protected"`
}

// annotations are a Unit's path annotations, looked up by resource and path.
type annotations []PathAnnotation

func within(path, ancestor string) bool {
	return ancestor == "" || path == ancestor || strings.HasPrefix(path, ancestor+".")
}

// guards are the guards in force at a path: those of the path and of the paths above it.
func (as annotations) guards(key, path string) map[string]string {
	var out map[string]string
	for _, a := range as {
		if resourceKey(a.ResourceType, a.ResourceName) != key || !within(path, a.Path) || len(a.Guards) == 0 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for k, v := range a.Guards {
			out[k] = v
		}
	}
	return out
}

// protected reports whether a path is (or is below) a protected one.
func (as annotations) protected(key, path string) bool {
	for _, a := range as {
		if a.Protected && resourceKey(a.ResourceType, a.ResourceName) == key && within(path, a.Path) {
			return true
		}
	}
	return false
}

// stamp records guards (and protection) on one path, adding to what the path has.
func (as annotations) stamp(typ, name, path string, guards map[string]string, protect bool) annotations {
	if len(guards) == 0 && !protect {
		return as
	}
	i := as.find(typ, name, path)
	if i < 0 {
		as = append(as, PathAnnotation{ResourceType: typ, ResourceName: name, Path: path, Guards: map[string]string{}})
		i = len(as) - 1
	}
	for k, v := range guards {
		as[i].Guards[k] = v
	}
	as[i].Protected = as[i].Protected || protect
	return as
}

func (as annotations) find(typ, name, path string) int {
	for i, a := range as {
		if a.ResourceType == typ && a.ResourceName == name && a.Path == path {
			return i
		}
	}
	return -1
}

// pruned drops annotations that no longer say anything.
func (as annotations) pruned() annotations {
	out := annotations{}
	for _, a := range as {
		if len(a.Guards) > 0 || a.Protected {
			out = append(out, a)
		}
	}
	return out
}

// uncleared are the guards in force at a path that clearance does not clear.
func (as annotations) uncleared(key, path string, clearance []function.Requirement) map[string]string {
	guards := as.guards(key, path)
	var out map[string]string
	for _, k := range function.Uncleared(guards, clearance) {
		if out == nil {
			out = map[string]string{}
		}
		out[k] = guards[k]
	}
	return out
}

// withholds says why a merge or a Link may not write path of the resource key: it is a protected local
// override (ProtectedPath), or its guards are not cleared by clearance (Guarded, with those guards); ""
// when it may.
func (as annotations) withholds(key, path string, clearance []function.Requirement) (string, map[string]string) {
	if as.protected(key, path) {
		return configdata.ConflictProtectedPath, nil
	}
	if guards := as.uncleared(key, path, clearance); guards != nil {
		return configdata.ConflictGuarded, guards
	}
	return "", nil
}
