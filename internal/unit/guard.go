package unit

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/store"
)

// GuardEdit edits the guards of paths of one resource: Set adds or changes guard keys at each path,
// Remove takes keys off each path.
type GuardEdit struct {
	ResourceType string
	ResourceName string
	Set          map[string]map[string]string
	Remove       map[string][]string
}

// ProtectionEdit marks paths of one resource as protected local overrides (true) or not (false).
type ProtectionEdit struct {
	ResourceType string
	ResourceName string
	Protected    map[string]bool
}

// SetGuards applies guard edits to a Unit's paths and answers its path annotations. Adding a guard
// key needs no clearance; changing the value of a key a path holds, or removing it, needs clearance
// of that key as the path holds it (else 409 Conflict, nothing changed). A path may use the function
// path language (* and ?Key=value); it applies to every location it reaches, and must reach one.
func (s *Service) SetGuards(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, edits []GuardEdit, clearance []function.Requirement) ([]PathAnnotation, error) {
	if err := function.CheckGuards(nil, clearance, ""); err != nil {
		return nil, err
	}
	for i, e := range edits {
		for path, guards := range e.Set {
			if err := function.CheckGuards(guards, nil, fmt.Sprintf("ResourceGuards.%d.Set.%s", i, path)); err != nil {
				return nil, err
			}
		}
	}
	u, _, err := s.editAnnotations(ctx, sc, spaceID, unitID, func(tree *configdata.Tree, notes annotations) (annotations, error) {
		for i, e := range edits {
			at := fmt.Sprintf("ResourceGuards.%d", i)
			for _, path := range slices.Sorted(maps.Keys(e.Set)) {
				located, err := locate(tree, e.ResourceType, e.ResourceName, path, at+".Set")
				if err != nil {
					return nil, err
				}
				for _, p := range located {
					if err := requireClearance(p, changedKeys(notes, e, p, e.Set[path]), clearance); err != nil {
						return nil, err
					}
					notes = notes.stamp(e.ResourceType, e.ResourceName, p, e.Set[path], false)
				}
			}
			for _, path := range slices.Sorted(maps.Keys(e.Remove)) {
				located, err := locate(tree, e.ResourceType, e.ResourceName, path, at+".Remove")
				if err != nil {
					return nil, err
				}
				for _, p := range located {
					j := notes.find(e.ResourceType, e.ResourceName, p)
					if j < 0 {
						continue
					}
					held := map[string]string{}
					for _, k := range e.Remove[path] {
						if v, ok := notes[j].Guards[k]; ok {
							held[k] = v
						}
					}
					if err := requireClearance(p, held, clearance); err != nil {
						return nil, err
					}
					for k := range held {
						delete(notes[j].Guards, k)
					}
				}
			}
		}
		return notes, nil
	})
	if err != nil {
		return nil, err
	}
	if u.PathAnnotations == nil {
		return []PathAnnotation{}, nil
	}
	return u.PathAnnotations, nil
}

// SetProtection marks or unmarks paths as protected local overrides and answers the Unit's head
// MutationSources with the protection now in force. Unmarking a path leaves the protection of the
// paths above it.
func (s *Service) SetProtection(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, edits []ProtectionEdit) ([]Source, error) {
	u, head, err := s.editAnnotations(ctx, sc, spaceID, unitID, func(tree *configdata.Tree, notes annotations) (annotations, error) {
		for i, e := range edits {
			for _, path := range slices.Sorted(maps.Keys(e.Protected)) {
				located, err := locate(tree, e.ResourceType, e.ResourceName, path, fmt.Sprintf("ResourceProtection.%d.Protected", i))
				if err != nil {
					return nil, err
				}
				for _, p := range located {
					if e.Protected[path] {
						notes = notes.stamp(e.ResourceType, e.ResourceName, p, nil, true)
					} else if j := notes.find(e.ResourceType, e.ResourceName, p); j >= 0 {
						notes[j].Protected = false
					}
				}
			}
		}
		return notes, nil
	})
	if err != nil {
		return nil, err
	}
	sources, err := store.DecodeJSON[[]Source](head)
	return u.Annotate(sources), err
}

// editAnnotations locks a Unit the caller may edit, lets edit change its path annotations over its
// head data, and stores them (a new Version and a unit.updated event) when they changed. It answers
// the Unit and its head Revision's MutationSources.
func (s *Service) editAnnotations(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID,
	edit func(*configdata.Tree, annotations) (annotations, error)) (Unit, json.RawMessage, error) {
	var out Unit
	var head json.RawMessage
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		row, cur, wc, err := lockForEdit(ctx, sc, tx, spaceID, unitID)
		if err != nil {
			return err
		}
		data, err := s.contents.get(ctx, tx.Q, row.DataHash)
		if err != nil {
			return err
		}
		tree, err := configdata.Open(cur.ToolchainType, data)
		if err != nil {
			return dataError(err)
		}
		before := store.EncodeJSON(annotations(cur.PathAnnotations).pruned())
		notes, err := edit(tree, append(annotations{}, cloneAnnotations(cur.PathAnnotations)...))
		if err != nil {
			return err
		}
		notes = notes.pruned()
		if encoded := store.EncodeJSON(notes); string(encoded) != string(before) {
			updated, err := tx.Q.UnitSetPathAnnotations(ctx, db.UnitSetPathAnnotationsParams{OrganizationID: sc.OrganizationID, UnitID: cur.ID, PathAnnotations: encoded})
			if err != nil {
				return err
			}
			if cur, err = fromRow(updated); err != nil {
				return err
			}
			tx.Emit(cur.changeEvent(entity.Updated, wc.spaceSlug))
		}
		out, head = cur, wc.headSources
		return nil
	})
	return out, head, err
}

func cloneAnnotations(as []PathAnnotation) []PathAnnotation {
	out := make([]PathAnnotation, len(as))
	for i, a := range as {
		out[i] = a
		out[i].Guards = make(map[string]string, len(a.Guards))
		for k, v := range a.Guards {
			out[i].Guards[k] = v
		}
	}
	return out
}

// locate resolves a path of one resource of the data to the concrete paths it reaches (400 naming
// field.path when the resource or the path is not there).
func locate(tree *configdata.Tree, typ, name, path, field string) ([]string, error) {
	item := field + "." + path
	if path == "" {
		return nil, apierr.Validation(field+": a path is required", apierr.Item{Item: field, Description: "empty path"})
	}
	segs, err := function.ParsePath(path)
	if err != nil {
		return nil, apierr.Validation(err.Error(), apierr.Item{Item: item, Description: "not a path"})
	}
	for _, r := range tree.Resources {
		if t, n := r.Identity(tree.Toolchain); t != typ || n != name {
			continue
		}
		var out []string
		for _, l := range configdata.Find(r.Root, segs) {
			out = append(out, l.Path)
		}
		if len(out) == 0 {
			return nil, apierr.Validation(fmt.Sprintf("%s: the path %s is not in the data", field, path), apierr.Item{Item: item, Description: "no such path"})
		}
		return out, nil
	}
	what := "the data has no resource " + typ + " " + name
	switch {
	case tree.Toolchain != configdata.KubernetesYAML:
		what = "only Kubernetes/YAML data has resources; leave ResourceType and ResourceName empty"
	case typ == "":
		what = "Kubernetes/YAML data is made of resources: name one with ResourceType and ResourceName"
	}
	return nil, apierr.Validation(field+": "+what, apierr.Item{Item: field, Description: "no such resource"})
}

// changedKeys are the keys of set that the path holds with another value.
func changedKeys(notes annotations, e GuardEdit, path string, set map[string]string) map[string]string {
	held := map[string]string{}
	if j := notes.find(e.ResourceType, e.ResourceName, path); j >= 0 {
		for k, v := range notes[j].Guards {
			if nv, ok := set[k]; ok && nv != v {
				held[k] = v
			}
		}
	}
	return held
}

// requireClearance refuses to change or remove guards a path holds unless clearance clears them.
func requireClearance(path string, held map[string]string, clearance []function.Requirement) error {
	if keys := function.Uncleared(held, clearance); len(keys) > 0 {
		return apierr.Conflict("the guards %s of path %s are not cleared by the Clearance; changing or removing a guard needs its clearance",
			describeGuards(pick(held, keys)), path)
	}
	return nil
}

func pick(m map[string]string, keys []string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}
