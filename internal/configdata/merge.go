package configdata

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The reasons a three-way merge leaves a path as the downstream (ours) holds it.
const (
	// ConflictUnresolvedPath: upstream and downstream both changed the path, to different values (or, at a
	// first merge, both hold different values).
	ConflictUnresolvedPath = "UnresolvedPath"
	// ConflictDeleteShadowed: upstream changed a path the downstream deleted; it stays deleted.
	ConflictDeleteShadowed = "DeleteShadowed"
	// ConflictSubtracted: upstream deleted a path the downstream holds unchanged, and subtraction is off.
	ConflictSubtracted = "Subtracted"
	// ConflictProtectedPath: the path is a protected local override, never overwritten by a merge.
	ConflictProtectedPath = "ProtectedPath"
	// ConflictGuarded: the path's guards are not cleared by the write's clearance.
	ConflictGuarded = "Guarded"
)

// MergeConflict is a path a merge left as ours holds it, and why. The values are JSON; nil when the path
// is absent there. Theirs is what applying the conflict writes (a nil Theirs deletes the path).
type MergeConflict struct {
	ResourceType string
	ResourceName string
	Path         string
	Reason       string
	Details      string
	Guards       map[string]string
	Base         json.RawMessage
	Theirs       json.RawMessage
	Ours         json.RawMessage
}

// Withhold is asked before a merge writes (or deletes) a path of a resource: a non-empty reason
// (ConflictProtectedPath, ConflictGuarded) refuses it, the change becomes a conflict with that reason
// and guards, and ours keeps its value.
type Withhold func(resourceType, resourceName, path string) (reason string, guards map[string]string)

// MergeOptions tune Merge.
type MergeOptions struct {
	// Subtract deletes what upstream deleted where ours holds it unchanged; else such paths stay, as
	// ConflictSubtracted conflicts.
	Subtract bool
	Withhold Withhold
}

// MergeResult is what Merge did to ours' Tree.
type MergeResult struct {
	Changed   bool
	Conflicts []MergeConflict
}

// Merge merges into ours (the downstream's data, opened for editing) the changes theirs (the upstream's
// head) made since base (the upstream data last merged; nil for a first merge, where every path only
// theirs has is added and every path both hold with different values is a conflict). It works on the
// path model, path by path of each resource (resources are matched by ResourceType and ResourceName):
//
//   - changed only upstream: theirs' value is written (or the path deleted) into ours' Tree, so ours'
//     comments and key order survive;
//   - changed only downstream, or on both sides to the same value: ours stays;
//   - changed on both sides to different values: ConflictUnresolvedPath, ours stays;
//   - changed upstream, deleted downstream: ConflictDeleteShadowed, it stays deleted;
//   - deleted upstream, unchanged downstream: deleted with opts.Subtract, else ConflictSubtracted.
//
// Whole resources follow the same rules at their root path (""). Maps are merged key by key; lists are
// merged by index, as the path model addresses them (an element inserted upstream shifts the indexes
// after it, which then read as changed). Where a value changes kind (map, list, scalar) the change is
// taken or refused whole, at the shallowest path that changed. opts.Withhold may refuse any write.
func Merge(base, theirs *Document, ours *Tree, opts MergeOptions) (MergeResult, error) {
	oursDoc, err := ours.Document()
	if err != nil {
		return MergeResult{}, err
	}
	m := &merger{opts: opts, names: map[string][2]string{}}
	baseBy := resourcesByKey(base, m.names)
	theirsBy := resourcesByKey(theirs, m.names)
	oursBy := resourcesByKey(oursDoc, m.names)
	var keys []string
	seen := map[string]bool{}
	for _, d := range []*Document{oursDoc, theirs, base} {
		if d == nil {
			continue
		}
		for _, r := range d.Resources {
			if k := r.Key(); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	for _, k := range keys {
		m.resource = k
		m.merge(nil, "", baseBy[k], theirsBy[k], oursBy[k])
	}
	res := MergeResult{Conflicts: m.conflicts}
	if res.Conflicts == nil {
		res.Conflicts = []MergeConflict{}
	}
	if len(m.ops) == 0 {
		return res, nil
	}
	// Writes go first, in document order; deletions last, in reverse order, so a list loses its highest
	// indexes first and the indexes of the others hold.
	for _, op := range m.ops {
		if op.del {
			continue
		}
		if err := m.apply(ours, op); err != nil {
			return res, err
		}
	}
	for i := len(m.ops) - 1; i >= 0; i-- {
		if m.ops[i].del {
			if err := m.apply(ours, m.ops[i]); err != nil {
				return res, err
			}
		}
	}
	res.Changed = true
	res.Conflicts = m.conflicts
	return res, nil
}

// state is a value at a path, or its absence.
type state struct {
	present bool
	value   any
}

func resourcesByKey(d *Document, names map[string][2]string) map[string]state {
	out := map[string]state{}
	if d == nil {
		return out
	}
	for _, r := range d.Resources {
		k := r.Key()
		if _, dup := out[k]; dup {
			continue
		}
		out[k] = state{true, r.Value}
		names[k] = [2]string{r.Type, r.Name}
	}
	return out
}

type mergeOp struct {
	resource string
	segs     []string
	path     string
	del      bool
	value    any
}

type merger struct {
	opts      MergeOptions
	names     map[string][2]string
	resource  string
	ops       []mergeOp
	conflicts []MergeConflict
}

func same(a, b state) bool {
	if a.present != b.present {
		return false
	}
	return !a.present || encodeValue(a.value) == encodeValue(b.value)
}

func encodeValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s state) json() json.RawMessage {
	if !s.present {
		return nil
	}
	return json.RawMessage(encodeValue(s.value))
}

func (m *merger) merge(segs []string, path string, b, t, o state) {
	if same(t, b) || same(o, t) {
		return // no change upstream, or the same change on both sides
	}
	if t.present && o.present {
		tm, tok := t.value.(map[string]any)
		om, ook := o.value.(map[string]any)
		if tok && ook {
			bm, _ := b.value.(map[string]any)
			for _, k := range unionKeys(bm, tm, om) {
				m.merge(appendSeg(segs, k), join(path, k), lookup(bm, k), lookup(tm, k), lookup(om, k))
			}
			return
		}
		tl, tok := t.value.([]any)
		ol, ook := o.value.([]any)
		if tok && ook {
			bl, _ := b.value.([]any)
			n := max(len(bl), len(tl), len(ol))
			for i := 0; i < n; i++ {
				k := strconv.Itoa(i)
				m.merge(appendSeg(segs, k), join(path, k), index(bl, i), index(tl, i), index(ol, i))
			}
			return
		}
	}
	switch {
	case same(o, b) && !t.present && !m.opts.Subtract:
		m.conflict(path, ConflictSubtracted, "upstream deleted it; subtraction is not enabled", nil, b, t, o)
	case same(o, b):
		if reason, guards := m.withheld(path, t, o); reason != "" {
			m.conflict(path, reason, withheldDetails(reason, guards), guards, b, t, o)
			return
		}
		m.ops = append(m.ops, mergeOp{resource: m.resource, segs: segs, path: path, del: !t.present, value: t.value})
	case !o.present:
		m.conflict(path, ConflictDeleteShadowed, "upstream changed it; it is deleted here", nil, b, t, o)
	default:
		// A protected local override says why ours stays better than that both sides changed it.
		if reason, _ := m.withheld(path, t, o); reason == ConflictProtectedPath {
			m.conflict(path, reason, "it is a protected local override (upstream changed it too)", nil, b, t, o)
			return
		}
		m.conflict(path, ConflictUnresolvedPath, "upstream and this Unit both changed it, to different values", nil, b, t, o)
	}
}

func withheldDetails(reason string, guards map[string]string) string {
	if reason == ConflictProtectedPath {
		return "it is a protected local override"
	}
	keys := make([]string, 0, len(guards))
	for k := range guards {
		keys = append(keys, k+"="+guards[k])
	}
	sort.Strings(keys)
	return "its guards " + strings.Join(keys, ", ") + " are not cleared"
}

// withheld asks opts.Withhold about a write at path: the path itself and every leaf below it in theirs'
// and ours' values (a guard or protection below a container the write replaces holds too).
func (m *merger) withheld(path string, t, o state) (string, map[string]string) {
	if m.opts.Withhold == nil {
		return "", nil
	}
	n := m.names[m.resource]
	if reason, guards := m.opts.Withhold(n[0], n[1], path); reason != "" {
		return reason, guards
	}
	for _, s := range []state{o, t} {
		if !s.present {
			continue
		}
		var leaves []Leaf
		walk("", path, s.value, &leaves)
		for _, l := range leaves {
			if l.Path == path {
				continue
			}
			if reason, guards := m.opts.Withhold(n[0], n[1], l.Path); reason != "" {
				return reason, guards
			}
		}
	}
	return "", nil
}

func (m *merger) conflict(path, reason, details string, guards map[string]string, b, t, o state) {
	n := m.names[m.resource]
	m.conflicts = append(m.conflicts, MergeConflict{ResourceType: n[0], ResourceName: n[1], Path: path, Reason: reason,
		Details: details, Guards: guards, Base: b.json(), Theirs: t.json(), Ours: o.json()})
}

// apply makes one write or deletion in ours' Tree. A write the Tree cannot take (an index beyond the end
// of a list ours shortened) becomes a conflict instead.
func (m *merger) apply(tree *Tree, op mergeOp) error {
	segs := make([]PathSegment, len(op.segs))
	for i, s := range op.segs {
		segs[i] = PathSegment{Key: s}
	}
	idx := -1
	for i, r := range tree.Resources {
		typ, name := r.Identity(tree.Toolchain)
		if resourceKey(typ, name) == op.resource {
			idx = i
			break
		}
	}
	switch {
	case idx < 0 && op.del:
		return nil
	case idx < 0:
		n, err := ValueNode(op.value)
		if err != nil {
			return err
		}
		if len(segs) > 0 {
			return &EditError{Msg: fmt.Sprintf("the data has no resource %s to write %s in", op.resource, op.path)}
		}
		tree.Resources = append(tree.Resources, &TreeResource{Root: n})
		return nil
	case op.del && len(segs) == 0:
		tree.Resources = append(tree.Resources[:idx], tree.Resources[idx+1:]...)
		return nil
	case op.del:
		Delete(tree.Resources[idx].Root, segs)
		return nil
	}
	n, err := ValueNode(op.value)
	if err != nil {
		return err
	}
	if _, err := Set(tree.Resources[idx].Root, segs, n); err != nil {
		if ee, ok := err.(*EditError); ok {
			nm := m.names[op.resource]
			m.conflicts = append(m.conflicts, MergeConflict{ResourceType: nm[0], ResourceName: nm[1], Path: op.path,
				Reason: ConflictUnresolvedPath, Details: "upstream's value cannot be written here: " + ee.Msg,
				Theirs: json.RawMessage(encodeValue(op.value))})
			return nil
		}
		return err
	}
	return nil
}

func resourceKey(typ, name string) string {
	return Resource{Type: typ, Name: name}.Key()
}

func appendSeg(segs []string, k string) []string {
	out := make([]string, len(segs)+1)
	copy(out, segs)
	out[len(segs)] = k
	return out
}

func unionKeys(ms ...map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func lookup(m map[string]any, k string) state {
	v, ok := m[k]
	return state{ok, v}
}

func index(l []any, i int) state {
	if i < len(l) {
		return state{true, l[i]}
	}
	return state{}
}

// PutValue writes value (JSON) at path (dot-separated keys and indexes; "" is the whole resource) of the
// resource typ/name of tree, or deletes the path when value is nil: what applying a MergeConflict does. A
// resource tree lacks is added when the whole resource is written.
func PutValue(tree *Tree, typ, name, path string, value json.RawMessage) error {
	var segs []string
	if path != "" {
		segs = strings.Split(path, ".")
	}
	op := mergeOp{resource: resourceKey(typ, name), segs: segs, path: path, del: value == nil}
	if value != nil {
		var v any
		dec := json.NewDecoder(strings.NewReader(string(value)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("decoding the value at %s: %w", path, err)
		}
		op.value = normalize(v)
	}
	m := &merger{names: map[string][2]string{op.resource: {typ, name}}}
	if err := m.apply(tree, op); err != nil {
		return err
	}
	if len(m.conflicts) > 0 {
		return &EditError{Msg: m.conflicts[0].Details}
	}
	return nil
}
