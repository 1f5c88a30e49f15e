package unit

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
)

// Link UpdateTypes: what a Link moves from its upstream (To) Unit into its downstream (From) Unit.
const (
	// LinkNeedsProvides copies the value of each UpstreamPath into its paired DownstreamPath.
	LinkNeedsProvides = "NeedsProvides"
	// LinkMergeUnits and LinkUpgradeUnit merge the whole upstream data in, three ways.
	LinkMergeUnits  = "MergeUnits"
	LinkUpgradeUnit = "UpgradeUnit"
	// LinkNone is a relation only: nothing moves.
	LinkNone = "None"
)

// SourceLink is the Revision source of data a Link wrote.
const SourceLink = "Link"

// Link finding statuses: what applying one DownstreamPath of a Link found.
const (
	FindingWritten     = "Written"     // the upstream value was written
	FindingUnchanged   = "Unchanged"   // the downstream already held the upstream value
	FindingNotProvided = "NotProvided" // the upstream has no value at the UpstreamPath
	FindingAmbiguous   = "Ambiguous"   // the UpstreamPath reaches different values
	FindingNoResource  = "NoResource"  // the downstream has no resource the DownstreamPath names
	FindingWithheld    = "Withheld"    // the path is protected or guarded: see the Unit's Conflicts
	FindingInvalid     = "Invalid"     // the value cannot be written there (a path through a scalar)
)

// LinkFinding is what applying one DownstreamPath of a Link found: which upstream value it read, where it
// wrote it, and, when it did not, why.
type LinkFinding struct {
	LinkID         uuid.UUID                 `json:"LinkID"`
	Name           string                    `json:"Name"`
	UpstreamPath   configdata.NamedPath      `json:"UpstreamPath"`
	DownstreamPath configdata.PathExpression `json:"DownstreamPath"`
	Status         string                    `json:"Status"`
	Value          *string                   `json:"Value"` // the upstream value as JSON; null when none was read
	Details        string                    `json:"Details"`
}

// ProvidedPath is a path a Link reads from a Unit.
type ProvidedPath struct {
	LinkID, FromUnitID uuid.UUID
	configdata.NamedPath
}

// Satisfied reports whether the write found the value the path needs.
func (f LinkFinding) Satisfied() bool {
	return f.Status == FindingWritten || f.Status == FindingUnchanged
}

// linkSpec is what applying a NeedsProvides Link needs of it.
type linkSpec struct {
	id        uuid.UUID
	slug      string
	up        []configdata.NamedPath
	down      []configdata.PathExpression
	clearance []function.Requirement
}

// upstreamValue reads the value a NamedPath names in the upstream document: one value, or a finding
// saying why there is none.
func upstreamValue(doc *configdata.Document, p configdata.NamedPath) (any, string, string) {
	segs, err := function.ParsePath(p.Path)
	if err != nil {
		return nil, FindingNotProvided, err.Error()
	}
	var found []any
	distinct := map[string]bool{}
	for _, r := range doc.Resources {
		if p.ResourceType != "" && r.Type != p.ResourceType {
			continue
		}
		root, err := configdata.ValueNode(r.Value)
		if err != nil {
			return nil, FindingNotProvided, err.Error()
		}
		for _, l := range configdata.Find(root, segs) {
			v, err := configdata.NodeValue(l.Node)
			if err != nil {
				return nil, FindingNotProvided, err.Error()
			}
			if enc := encode(v); !distinct[enc] {
				distinct[enc] = true
				found = append(found, v)
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, FindingNotProvided, fmt.Sprintf("the upstream has no value at %s", describeNamedPath(p))
	case 1:
		return found[0], "", ""
	}
	return nil, FindingAmbiguous, fmt.Sprintf("%s reaches %d different values in the upstream; narrow it to one", describeNamedPath(p), len(found))
}

func describeNamedPath(p configdata.NamedPath) string {
	if p.ResourceType == "" {
		return p.Path
	}
	return p.ResourceType + " " + p.Path
}

// writeLinkPaths writes the values a NeedsProvides Link reads from upstream into tree (the From Unit's data,
// whose document is before and whose path annotations are notes). A changed path that is a protected local
// override, or whose guards the Link's Clearance does not clear, is put back and reported as a conflict. It
// answers a finding per DownstreamPath, the conflicts, and the leaves it changed.
func writeLinkPaths(tree *configdata.Tree, before *configdata.Document, upstream *configdata.Document, l linkSpec, notes annotations) ([]LinkFinding, []Conflict, []changedLeaf, error) {
	pairs, err := configdata.PairLinkPaths(l.up, l.down)
	if err != nil {
		return nil, nil, nil, err
	}
	findings := make([]LinkFinding, 0, len(pairs))
	var wrote [][]writtenAt // per finding, where it wrote
	for _, pr := range pairs {
		up, down := l.up[pr.Upstream], l.down[pr.Downstream]
		f := LinkFinding{LinkID: l.id, Name: down.Name, UpstreamPath: up, DownstreamPath: down}
		v, status, details := upstreamValue(upstream, up)
		var at []writtenAt
		if status == "" {
			enc := encode(v)
			f.Value = &enc
			status, details, at = writeLinkValue(tree, down, v)
		}
		f.Status, f.Details = status, details
		findings, wrote = append(findings, f), append(wrote, at)
	}
	after, err := tree.Document()
	if err != nil {
		return nil, nil, nil, err
	}
	written := map[string]any{}
	for _, leaf := range after.Leaves() {
		written[leaf.Key()] = leaf.Value
	}
	var conflicts []Conflict
	var kept []changedLeaf
	for _, c := range changedLeaves(before, after) {
		reason, guards := notes.withholds(c.resource, c.path, l.clearance)
		if reason == "" {
			kept = append(kept, c)
			continue
		}
		if err := c.revert(tree); err != nil {
			return nil, nil, nil, err
		}
		details := fmt.Sprintf("Link %s did not write %s: it is a protected local override", l.slug, c.path)
		if reason == ConflictGuarded {
			details = fmt.Sprintf("Link %s did not write %s: its guards %s are not cleared by the Link's Clearance", l.slug, c.path, describeGuards(guards))
		}
		conflict := Conflict{ResourceType: c.typ, ResourceName: c.name, Path: c.path, Reason: reason, Details: details, Guards: guards}
		if v, ok := written[c.resource+"\x00"+c.path]; ok {
			conflict.UpstreamValue = jsonText(json.RawMessage(encode(v)))
		}
		if c.existed {
			conflict.LocalValue = jsonText(json.RawMessage(encode(c.before)))
		}
		conflicts = append(conflicts, conflict)
		for i, at := range wrote {
			for _, w := range at {
				if w.resource == c.resource && within(c.path, w.path) {
					findings[i].Status, findings[i].Details = FindingWithheld, details
				}
			}
		}
	}
	return findings, conflicts, kept, nil
}

// downstreamResource reports whether a PathExpression names the resource typ/name of the downstream.
func downstreamResource(p configdata.PathExpression, typ, name string) bool {
	return (p.ResourceType == "" || p.ResourceType == typ) && (p.ResourceName == "" || p.ResourceName == name)
}

// writtenAt is a path a Link wrote, in a resource (its key).
type writtenAt struct{ resource, path string }

// writeLinkValue writes v at a DownstreamPath of every resource of tree it names: a status, why when it
// did not write, and where it wrote.
func writeLinkValue(tree *configdata.Tree, down configdata.PathExpression, v any) (string, string, []writtenAt) {
	segs, err := function.ParsePath(down.Path)
	if err != nil {
		return FindingInvalid, err.Error(), nil
	}
	node, err := configdata.ValueNode(v)
	if err != nil {
		return FindingInvalid, err.Error(), nil
	}
	var at []writtenAt
	status := FindingNoResource
	details := "the downstream has no resource " + describeResource(down)
	for _, r := range tree.Resources {
		typ, name := r.Identity(tree.Toolchain)
		if !downstreamResource(down, typ, name) {
			continue
		}
		same := true
		for _, l := range configdata.Find(r.Root, segs) {
			cur, err := configdata.NodeValue(l.Node)
			same = same && err == nil && encode(cur) == encode(v)
		}
		if len(configdata.Find(r.Root, segs)) > 0 && same {
			if status != FindingWritten {
				status, details = FindingUnchanged, ""
			}
			continue
		}
		written, err := configdata.Set(r.Root, segs, node)
		if err != nil {
			return FindingInvalid, fmt.Sprintf("%s: %s", down.Path, err.Error()), nil
		}
		for _, p := range written {
			at = append(at, writtenAt{resource: resourceKey(typ, name), path: p})
		}
		if len(written) > 0 {
			status, details = FindingWritten, ""
		} else if status == FindingNoResource {
			status, details = FindingInvalid, fmt.Sprintf("%s reaches nothing in the downstream to write", down.Path)
		}
	}
	return status, details, at
}

func describeResource(p configdata.PathExpression) string {
	switch {
	case p.ResourceType == "" && p.ResourceName == "":
		return "(the data has none)"
	case p.ResourceName == "":
		return "of type " + p.ResourceType
	}
	return p.ResourceType + " " + p.ResourceName
}
