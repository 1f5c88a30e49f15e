package unit

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
)

// MaxInvocations bounds the invocations of one request.
const MaxInvocations = 100

// InvokeRequest is a request to run functions over the Units a selection picks.
type InvokeRequest struct {
	// Invocations are the request's own; Stored run after them, in order.
	Invocations   []function.Invocation
	Stored        []StoredCalls
	ToolchainType string
	Description   *string
	DryRun        bool
	Protect       bool
	Clearance     []function.Requirement
	Guards        map[string]string
	ChangeSetID   *uuid.UUID
	Subgroup      string
	UserAgent     string
	// ChangeOrder, for function invoke's change_order, limits the run to the Units the ChangeOrder
	// covers that have not taken it, and Tags each Unit reached.
	ChangeOrder *ChangeOrderRun
}

// ChangeOrderRun is an Invoke ChangeOrder promoted through function invoke: Covered (list parameters of
// Units) and SpaceIDs (nil: any Space) are what it covers; a Unit carrying EndTagID took it already.
// Each Unit reached gets StartTagID on its head before and EndTagID on its head after.
type ChangeOrderRun struct {
	ChangeOrderID        uuid.UUID
	Covered              listquery.Params
	SpaceIDs             []uuid.UUID
	StartTagID, EndTagID *uuid.UUID
}

// StoredCalls are function invocations a request runs by reference: a stored Invocation's (filled with
// the values of its Parameters) or a Trigger's. They run on Units of their ToolchainType only.
type StoredCalls struct {
	// Field names the reference in errors (Invocations.0, ParameterizedInvocations.1, Triggers.0).
	Field         string
	ToolchainType string
	Calls         []function.Invocation
	Origin        Origin
}

// Conflict is a change that was withheld, and why. A merge's conflicts (merge.go) also name their source
// (MergeSourceID, LinkID, MergeEndRevisionNum) and the values at the path as JSON text (nil: absent); a Unit
// keeps those outstanding, stored as JSON with these names.
type Conflict struct {
	UnitID              uuid.UUID         `json:"UnitID"`
	ResourceType        string            `json:"ResourceType"`
	ResourceName        string            `json:"ResourceName"`
	Path                string            `json:"Path"`
	Reason              string            `json:"Reason"`
	Details             string            `json:"Details"`
	Guards              map[string]string `json:"Guards"`
	MergeSourceID       *uuid.UUID        `json:"MergeSourceID"`
	LinkID              *uuid.UUID        `json:"LinkID"`
	MergeEndRevisionNum int64             `json:"MergeEndRevisionNum"`
	BaseValue           *string           `json:"BaseValue"`
	UpstreamValue       *string           `json:"UpstreamValue"`
	LocalValue          *string           `json:"LocalValue"`
}

// ConflictGuarded is a change withheld because the path's guards were not cleared.
const ConflictGuarded = configdata.ConflictGuarded

// InvokeResult is what the invocations did to one Unit.
type InvokeResult struct {
	Unit      Unit
	SpaceSlug string
	Changed   bool
	Mutators  []int
	Outputs   map[string][]byte
	Passed    bool
	Conflicts []Conflict
	// Mutations are the sources of the paths the invocations changed.
	Mutations []Source
	Data      []byte
}

var subgroupPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,64}$`)

// CheckSubgroup checks a Mutation subgroup: letters and digits, at most 64, not starting with the
// service's name (any case), which its own Mutations use.
func CheckSubgroup(s string) error {
	if s == "" {
		return nil
	}
	if !subgroupPattern.MatchString(s) {
		return apierr.Validation(fmt.Sprintf("subgroup %q must be 1 to 64 letters and digits", s), apierr.Item{Item: "subgroup", Description: "not alphanumeric, or too long"})
	}
	if strings.HasPrefix(strings.ToLower(s), "hubd") {
		return apierr.Validation(fmt.Sprintf("subgroup %q starts with hubd, which is reserved for the service's own Mutations", s), apierr.Item{Item: "subgroup", Description: "reserved prefix"})
	}
	return nil
}

// binding is a request's invocations checked for each ToolchainType: the calls, or why a Unit of that
// type cannot run them.
type binding struct {
	calls  map[string][]boundCall
	errors map[string]error
}

// boundCall is one call of a request and what it came from.
type boundCall struct {
	*function.Call
	origin Origin
}

// bind checks every invocation for each ToolchainType the request may reach. With a ToolchainType every
// error fails the request; without one, an invocation whose function no ToolchainType has fails it, and
// a function missing for some types fails only the Units of those types. Values that do not convert
// fail the request (422).
func bind(req InvokeRequest) (binding, error) {
	total := len(req.Invocations)
	for _, st := range req.Stored {
		total += len(st.Calls)
	}
	if total == 0 {
		return binding{}, apierr.Validation("FunctionInvocations, Invocations, ParameterizedInvocations and Triggers name no invocation; give at least one",
			apierr.Item{Item: "FunctionInvocations", Description: "empty"})
	}
	if total > MaxInvocations {
		return binding{}, apierr.Validation(fmt.Sprintf("the request runs more than %d invocations (its own and those it names)", MaxInvocations),
			apierr.Item{Item: "FunctionInvocations", Description: "too many"})
	}
	toolchains := configdata.ToolchainTypes
	if req.ToolchainType != "" {
		if err := configdata.CheckToolchain(req.ToolchainType, "unknown"); err != nil {
			return binding{}, err
		}
		toolchains = []string{req.ToolchainType}
	}
	b := binding{calls: map[string][]boundCall{}, errors: map[string]error{}}
	for i, inv := range req.Invocations {
		field := "FunctionInvocations." + strconv.Itoa(i)
		var unknown error
		found := false
		for _, t := range toolchains {
			if b.errors[t] != nil {
				continue
			}
			c, err := function.Bind(t, inv, field)
			switch {
			case err == nil:
				found = true
				b.calls[t] = append(b.calls[t], boundCall{Call: c})
			case len(toolchains) > 1 && isUnknownFunction(t, inv):
				unknown = err
				b.errors[t] = err
			default:
				return binding{}, err
			}
		}
		if !found {
			return binding{}, unknown
		}
	}
	for _, st := range req.Stored {
		if req.ToolchainType != "" && st.ToolchainType != req.ToolchainType {
			return binding{}, apierr.Validation(fmt.Sprintf("%s is for %s, not the request's ToolchainType %s", st.Field, st.ToolchainType, req.ToolchainType),
				apierr.Item{Item: st.Field, Description: "other ToolchainType"})
		}
		for _, t := range toolchains {
			if t != st.ToolchainType && b.errors[t] == nil {
				b.errors[t] = apierr.Validation(fmt.Sprintf("%s is for Units of %s, not %s", st.Field, st.ToolchainType, t),
					apierr.Item{Item: st.Field, Description: "other ToolchainType"})
			}
		}
		if b.errors[st.ToolchainType] != nil {
			continue
		}
		for _, inv := range st.Calls {
			c, err := function.Bind(st.ToolchainType, inv, st.Field)
			if err != nil {
				return binding{}, err
			}
			b.calls[st.ToolchainType] = append(b.calls[st.ToolchainType], boundCall{Call: c, origin: st.Origin})
		}
	}
	return b, nil
}

func isUnknownFunction(toolchain string, inv function.Invocation) bool {
	_, ok := function.Lookup(toolchain, inv.FunctionName)
	return !ok
}

// CheckInvoker refuses a caller who may edit nothing the request could reach. Invoking needs Edit (the
// operation's permission): by role, or by a grant on the Space (spaceID; any Space on the organization's
// path) or on one of its Units. It is asked before the request takes one of its organization's invoke
// slots, so a caller who may only read does not use them up. Each Unit is then checked on its own: View
// to be selected, Edit when a mutating function runs on it.
func (s *Service) CheckInvoker(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID) error {
	if sc.ByRole(authz.Edit) {
		return nil
	}
	if spaceID != nil && sc.SpacePermissions[*spaceID][string(authz.Edit)] || spaceID == nil && len(sc.SpacesReached(authz.Edit)) > 0 {
		return nil
	}
	var granted bool
	err := s.Store.Conn().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM unit WHERE organization_id = $1
		AND ($2::uuid IS NULL OR space_id = $2) AND permissions @> ANY($3::jsonb[]))`,
		sc.OrganizationID, spaceID, authz.Containing(sc.Principal, authz.Edit)).Scan(&granted)
	if err != nil {
		return store.Translate(err)
	}
	if granted {
		return nil
	}
	return apierr.Forbidden("invoking functions needs Edit: your role %q does not hold it, and no Permissions grant it to you on a Space or Unit the request could reach", sc.Role)
}

// Invoke runs the request's invocations over every Unit the selection picks, each Unit in its own
// savepoint: a Unit whose invocation fails is left as it was and reported.
func (s *Service) Invoke(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, sel listquery.Params, df DataFilter, req InvokeRequest) ([]entity.BulkItem[InvokeResult], error) {
	b, err := bind(req)
	if err != nil {
		return nil, err
	}
	if err := CheckSubgroup(req.Subgroup); err != nil {
		return nil, err
	}
	if err := function.CheckGuards(req.Guards, req.Clearance, "guards"); err != nil {
		return nil, err
	}
	if req.ToolchainType != "" {
		cond := fmt.Sprintf("ToolchainType = '%s'", req.ToolchainType)
		if strings.TrimSpace(sel.Where) != "" {
			cond = sel.Where + " AND " + cond
		}
		sel.Where = cond
	}
	selectRefs := s.selectorIn(sc, spaceID, path, sel, df)
	if req.ChangeOrder != nil {
		selectRefs = s.changeOrderSelector(sc, selectRefs, *req.ChangeOrder)
	}
	return entity.RunBulk(ctx, s.Store, EntityType, req.DryRun, selectRefs, func(ctx context.Context, tx *store.Tx, ref entity.Ref) (InvokeResult, error) {
		if req.ChangeOrder == nil {
			return s.invokeOne(ctx, sc, tx, ref, b, req)
		}
		return s.invokeForChangeOrder(ctx, sc, tx, ref, b, req)
	})
}

// changeOrderSelector narrows a selection to the Units the ChangeOrder covers and has not reached.
func (s *Service) changeOrderSelector(sc authz.Scope, selectRefs entity.Selector, run ChangeOrderRun) entity.Selector {
	return func(ctx context.Context, tx *store.Tx) ([]entity.Ref, error) {
		refs, err := selectRefs(ctx, tx)
		if err != nil || len(refs) == 0 {
			return refs, err
		}
		covered := run.Covered
		if run.SpaceIDs != nil {
			if len(run.SpaceIDs) == 0 {
				return nil, nil
			}
			ids := make([]string, len(run.SpaceIDs))
			for i, id := range run.SpaceIDs {
				ids[i] = "'" + id.String() + "'"
			}
			cond := "SpaceID IN (" + strings.Join(ids, ", ") + ")"
			if strings.TrimSpace(covered.Where) != "" {
				cond = covered.Where + " AND " + cond
			}
			covered.Where = cond
		}
		in, err := s.selectorIn(sc, nil, "change_order", covered, DataFilter{})(ctx, tx)
		if err != nil {
			return nil, err
		}
		keep := map[uuid.UUID]bool{}
		for _, r := range in {
			keep[r.ID] = true
		}
		refs = slices.DeleteFunc(refs, func(r entity.Ref) bool { return !keep[r.ID] })
		if run.EndTagID == nil || len(refs) == 0 {
			return refs, nil
		}
		ids := make([]uuid.UUID, len(refs))
		for i, r := range refs {
			ids[i] = r.ID
		}
		taken, err := CarryingTag(ctx, tx.Q, sc.OrganizationID, *run.EndTagID, ids)
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(refs, func(r entity.Ref) bool { return taken[r.ID] }), nil
	}
}

// invokeForChangeOrder is invokeOne for an Invoke ChangeOrder: the Unit's head before gets the start Tag,
// its head after (a new Revision, or the same one when nothing changed) the end Tag.
func (s *Service) invokeForChangeOrder(ctx context.Context, sc authz.Scope, tx *store.Tx, ref entity.Ref, b binding, req InvokeRequest) (InvokeResult, error) {
	row, err := loadRow(ctx, sc, tx, ref.SpaceID, ref.ID, true)
	if err != nil {
		return InvokeResult{}, err
	}
	before := row.HeadRevisionID
	res, err := s.invokeOne(ctx, sc, tx, ref, b, req)
	if err != nil {
		return res, err
	}
	if err := authz.Check(sc, authz.Edit, res.Unit.Target()); err != nil {
		return res, err
	}
	run := req.ChangeOrder
	if run.StartTagID != nil && before != nil {
		if _, err := tag.PutOnRevisions(ctx, tx.Q, sc, *run.StartTagID, []uuid.UUID{*before}); err != nil {
			return res, err
		}
	}
	if run.EndTagID != nil && res.Unit.HeadRevisionID != nil {
		if _, err := tag.PutOnRevisions(ctx, tx.Q, sc, *run.EndTagID, []uuid.UUID{*res.Unit.HeadRevisionID}); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (s *Service) invokeOne(ctx context.Context, sc authz.Scope, tx *store.Tx, ref entity.Ref, b binding, req InvokeRequest) (InvokeResult, error) {
	row, cur, wc, err := lockForData(ctx, sc, tx, ref.SpaceID, ref.ID)
	if err != nil {
		return InvokeResult{}, err
	}
	res := InvokeResult{Unit: cur, SpaceSlug: wc.spaceSlug, Passed: true, Outputs: map[string][]byte{}, Mutators: []int{}, Conflicts: []Conflict{}, Mutations: []Source{}}
	if err := b.errors[cur.ToolchainType]; err != nil {
		return res, err
	}
	calls := b.calls[cur.ToolchainType]
	for _, c := range calls {
		if c.Function.Mutating {
			if err := authz.Check(sc, authz.Edit, cur.Target()); err != nil {
				return res, err
			}
			break
		}
	}
	data, err := s.contents.get(ctx, tx.Q, row.DataHash)
	if err != nil {
		return res, err
	}
	tree, err := configdata.Open(cur.ToolchainType, data)
	if err != nil {
		return res, dataError(err)
	}
	notes, err := store.DecodeJSON[annotations](row.PathAnnotations)
	if err != nil {
		return res, err
	}
	notesChanged := false
	doc, err := tree.Document()
	if err != nil {
		return res, err
	}
	var steps []functionStep
	for i, c := range calls {
		out, err := c.Run(tree)
		if err != nil {
			return res, err
		}
		if !c.Function.Mutating {
			if v, ok := out.(function.Validation); ok && !v.Passed {
				res.Passed = false
			}
			res.Outputs[strconv.Itoa(i)] = store.EncodeJSON(out)
			continue
		}
		clearance := c.Clearance
		if len(clearance) == 0 {
			clearance = req.Clearance
		}
		w, err := settle(tree, c.Call, doc, notes, clearance, mergeGuards(c.Guards, req.Guards), req.Protect)
		if err != nil {
			return res, err
		}
		res.Conflicts = append(res.Conflicts, w.conflicts...)
		notes, notesChanged = w.notes, notesChanged || w.notesChanged
		after := w.after
		if !w.wrote {
			continue
		}
		res.Mutators = append(res.Mutators, i)
		steps = append(steps, functionStep{invocation: store.EncodeJSON(c.Invocation), origin: c.origin, doc: after})
		doc = after
	}
	res.Data = data
	if len(steps) == 0 {
		return res, nil
	}
	out, err := tree.Render()
	if err != nil {
		if ee, ok := err.(*configdata.EditError); ok {
			return res, apierr.Unprocessable("the functions' result cannot be written as %s: %s", cur.ToolchainType, ee.Msg)
		}
		return res, err
	}
	final, err := configdata.Parse(cur.ToolchainType, out)
	if err != nil {
		return res, apierr.Unprocessable("the functions' result is not valid %s: %s", cur.ToolchainType, err.Error())
	}
	if configdata.Hash(out) == row.DataHash {
		return res, nil
	}
	if err := checkRevisionChangeSet(ctx, tx.Q, sc, cur, req.ChangeSetID); err != nil {
		return res, err
	}
	change := dataChange{source: SourceFunction, steps: steps, subgroup: req.Subgroup,
		opts: WriteOptions{Description: req.Description, ChangeSetID: req.ChangeSetID, UserAgent: req.UserAgent, DryRun: req.DryRun}}
	if notesChanged {
		change.annotations = notes.pruned()
	}
	written, err := s.commitData(ctx, sc, tx, row, wc, out, final, change)
	if err != nil {
		return res, err
	}
	res.Unit, res.Data, res.Changed = written.Unit, written.Data, true
	for _, src := range res.Unit.Annotate(written.Sources) {
		if src.RevisionNum == written.Unit.HeadRevisionNum {
			res.Mutations = append(res.Mutations, src)
		}
	}
	return res, nil
}

func mergeGuards(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range b {
		out[k] = v
	}
	for k, v := range a {
		out[k] = v
	}
	return out
}

func describeGuards(g map[string]string) string {
	keys := slices.Sorted(maps.Keys(g))
	parts := make([]string, 0, len(g))
	for _, k := range keys {
		parts = append(parts, k+"="+g[k])
	}
	return strings.Join(parts, ", ")
}

// written is what a mutating call left once its guarded changes were withheld.
type written struct {
	after        *configdata.Document
	wrote        bool // it changed a leaf the guards let it
	conflicts    []Conflict
	notes        annotations
	notesChanged bool
}

// settle follows a mutating call that has run on tree (doc: the tree's document before it): each
// changed leaf whose guards clearance does not clear is put back and reported as a Guarded conflict,
// and the leaves it did change get stamps (and protection when protect).
func settle(tree *configdata.Tree, c *function.Call, doc *configdata.Document, notes annotations, clearance []function.Requirement,
	stamps map[string]string, protect bool) (written, error) {
	w := written{notes: notes}
	after, err := tree.Document()
	if err != nil {
		return w, err
	}
	var kept []changedLeaf
	withheld := false
	for _, l := range changedLeaves(doc, after) {
		if guards := notes.uncleared(l.resource, l.path, clearance); guards != nil {
			if err := l.revert(tree); err != nil {
				return w, err
			}
			withheld = true
			w.conflicts = append(w.conflicts, Conflict{ResourceType: l.typ, ResourceName: l.name, Path: l.path, Reason: ConflictGuarded, Guards: guards,
				Details: fmt.Sprintf("%s did not write %s: its guards %s are not cleared", c.FunctionName, l.path, describeGuards(guards))})
			continue
		}
		kept = append(kept, l)
	}
	if withheld {
		if after, err = tree.Document(); err != nil {
			return w, err
		}
	}
	w.after, w.wrote = after, len(kept) > 0
	if len(stamps) > 0 || protect {
		for _, l := range kept {
			w.notes = w.notes.stamp(l.typ, l.name, l.path, stamps, protect)
			w.notesChanged = true
		}
	}
	return w, nil
}

// changedLeaf is a leaf an invocation added, changed or removed.
type changedLeaf struct {
	resource, typ, name, path string
	existed                   bool
	before                    any
}

// changedLeaves lists the leaves that differ between two documents, in order.
func changedLeaves(before, after *configdata.Document) []changedLeaf {
	prev := map[string]configdata.Leaf{}
	for _, l := range before.Leaves() {
		prev[l.Key()] = l
	}
	names := map[string][2]string{}
	for _, d := range []*configdata.Document{before, after} {
		for _, r := range d.Resources {
			names[r.Key()] = [2]string{r.Type, r.Name}
		}
	}
	var out []changedLeaf
	seen := map[string]bool{}
	for _, l := range after.Leaves() {
		seen[l.Key()] = true
		old, ok := prev[l.Key()]
		if ok && encode(old.Value) == encode(l.Value) {
			continue
		}
		n := names[l.Resource]
		out = append(out, changedLeaf{resource: l.Resource, typ: n[0], name: n[1], path: l.Path, existed: ok, before: old.Value})
	}
	for _, l := range before.Leaves() {
		if !seen[l.Key()] {
			n := names[l.Resource]
			out = append(out, changedLeaf{resource: l.Resource, typ: n[0], name: n[1], path: l.Path, existed: true, before: l.Value})
		}
	}
	return out
}

// revert puts the leaf back as it was in tree.
func (l changedLeaf) revert(tree *configdata.Tree) error {
	var segs []configdata.PathSegment
	if l.path != "" {
		for _, k := range strings.Split(l.path, ".") {
			segs = append(segs, configdata.PathSegment{Key: k})
		}
	}
	for _, r := range tree.Resources {
		typ, name := r.Identity(tree.Toolchain)
		if resourceKey(typ, name) != l.resource {
			continue
		}
		if !l.existed {
			configdata.Delete(r.Root, segs)
			return nil
		}
		n, err := configdata.ValueNode(l.before)
		if err != nil {
			return err
		}
		_, err = configdata.Set(r.Root, segs, n)
		return err
	}
	return nil
}
