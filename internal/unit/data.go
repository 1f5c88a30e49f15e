package unit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeset"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/store"
)

// Revision sources: what made a Revision.
const (
	SourceDataPut  = "DataPut"
	SourceRestore  = "Restore"
	SourceClone    = "Clone"
	SourceFunction = "Function"
)

// Source says which Mutation last set the value at a path of a resource.
type Source struct {
	ResourceType string `json:"t"`
	ResourceName string `json:"n"`
	Path         string `json:"p"`
	MutationNum  int64  `json:"m"`
	RevisionNum  int64  `json:"r"`
	// Guards and Protected are the path's annotations as the Unit holds them now (Annotate): never
	// stored with a Revision.
	Guards    map[string]string `json:"-"`
	Protected bool              `json:"-"`
}

// ETagMatches reports whether an If-None-Match header value names hash: a comma-separated list of
// quoted or bare ETags, or *. It is RFC 9110's weak comparison: a W/ tag matches its opaque value.
func ETagMatches(header, hash string) bool {
	return etagMatches(header, hash, false)
}

// ETagMatchesStrong is ETagMatches for If-Match, which RFC 9110 compares strongly: a weak (W/) tag
// never matches, since the data it named may differ from the stored bytes.
func ETagMatchesStrong(header, hash string) bool {
	return etagMatches(header, hash, true)
}

func etagMatches(header, hash string, strong bool) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" {
			return true
		}
		if weak := strings.HasPrefix(tag, "W/"); weak {
			if strong {
				continue
			}
			tag = strings.TrimPrefix(tag, "W/")
		}
		if strings.Trim(tag, `"`) == hash {
			return true
		}
	}
	return false
}

// Data returns a Unit's data, its hash and ToolchainType. When ifNoneMatch (an If-None-Match header)
// names the hash, the data is not read: the caller answers 304. The returned data must not be modified.
func (s *Service) Data(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, ifNoneMatch string) ([]byte, string, string, error) {
	u, err := s.Get(ctx, sc, spaceID, unitID)
	if err != nil || (ifNoneMatch != "" && ETagMatches(ifNoneMatch, u.DataHash)) {
		return nil, u.DataHash, u.ToolchainType, err
	}
	data, err := s.contents.get(ctx, s.Store.Q(), u.DataHash)
	if err != nil {
		return nil, "", "", err
	}
	return data, u.DataHash, u.ToolchainType, nil
}

// Upload is the body of a data upload and its media type (lower case, without parameters).
type Upload struct {
	Body      []byte
	MediaType string
}

// Data is the configuration an upload to a Unit of the ToolchainType carries: its body, whatever the media
// type, except that clients which encode every body as JSON send text as a JSON string: with media type
// application/json, a body that is one JSON string carries the string's text, for every ToolchainType but
// AppConfig/JSON (whose data is the JSON document itself).
func (u Upload) Data(toolchain string) ([]byte, error) {
	if u.MediaType != "application/json" || toolchain == configdata.AppConfigJSON {
		return u.Body, nil
	}
	if trimmed := bytes.TrimLeft(u.Body, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '"' {
		return u.Body, nil
	}
	var text string
	if err := json.Unmarshal(u.Body, &text); err != nil {
		return nil, apierr.Data("an application/json body that begins with a quote must be one JSON string, the data's text: "+err.Error(),
			apierr.Item{Item: "data", Description: "not one JSON string"})
	}
	return []byte(text), nil
}

// PutData makes the upload's data the Unit's head: it must parse for the ToolchainType; ifMatch (when
// given) must name the current DataHash. The same data again makes no Revision.
func (s *Service) PutData(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, upload Upload, ifMatch string, opts WriteOptions) (WriteResult, error) {
	var out WriteResult
	err := s.Store.WithTx(ctx, store.TxOptions{DryRun: opts.DryRun}, func(tx *store.Tx) error {
		row, cur, wc, err := lockForEdit(ctx, sc, tx, spaceID, unitID)
		if err != nil {
			return err
		}
		if ifMatch != "" && !ETagMatchesStrong(ifMatch, cur.DataHash) {
			return apierr.Conflict("the Unit's data changed since it was read: If-Match does not name its DataHash %q; read it again and reapply the change", cur.DataHash).
				WithEntity(EntityType, unitID.String(), cur.Slug)
		}
		if err := checkRevisionChangeSet(ctx, tx.Q, sc, cur, opts.ChangeSetID); err != nil {
			return err
		}
		data, err := upload.Data(cur.ToolchainType)
		if err != nil {
			return err
		}
		doc, err := configdata.Parse(cur.ToolchainType, data)
		if err != nil {
			return dataError(err)
		}
		out, err = s.commitData(ctx, sc, tx, row, wc, data, doc, dataChange{source: SourceDataPut, opts: opts})
		return err
	})
	return out, err
}

// lockForData reads and locks a Unit the caller may view for a data write, with what the write needs
// besides the row (writeContext), in one round trip. It answers the row and the Unit read from it.
func lockForData(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID) (*db.Unit, Unit, writeContext, error) {
	r, err := tx.Q.UnitGetForDataWrite(ctx, db.UnitGetForDataWriteParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, UnitID: unitID})
	if apierr.Is(err, apierr.TypeNotFound) {
		// The kit's read says which is missing, the Space or the Unit.
		_, err = loadRow(ctx, sc, tx, spaceID, unitID, true)
	}
	if err != nil {
		return nil, Unit{}, writeContext{}, err
	}
	u, err := fromRow(&r.Unit)
	if err != nil {
		return nil, Unit{}, writeContext{}, err
	}
	if err := authz.Viewable(sc, u.Target(), unitID.String()); err != nil {
		return nil, Unit{}, writeContext{}, err
	}
	return &r.Unit, u, writeContext{spaceSlug: r.SpaceSlug, headSources: r.HeadSources, triggers: r.Triggers}, nil
}

// lockForEdit is lockForData for a write the caller must be able to Edit the Unit for.
func lockForEdit(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID) (*db.Unit, Unit, writeContext, error) {
	row, cur, wc, err := lockForData(ctx, sc, tx, spaceID, unitID)
	if err == nil {
		err = authz.Check(sc, authz.Edit, cur.Target())
	}
	return row, cur, wc, err
}

// writeContext is what a data write reads besides the locked Unit: its Space's Slug (for the event) and
// the head Revision's MutationSources (unchanged paths keep their sources).
type writeContext struct {
	spaceSlug   string
	headSources json.RawMessage
	triggers    json.RawMessage // the Triggers in force for the Unit (triggerInForce)
}

// readWriteContext reads the writeContext of a Unit locked by another read.
func readWriteContext(ctx context.Context, q *db.Queries, row *db.Unit) (writeContext, error) {
	wc, err := q.UnitDataWriteContext(ctx, db.UnitDataWriteContextParams{OrganizationID: row.OrganizationID, SpaceID: row.SpaceID,
		HeadRevisionID: row.HeadRevisionID, ToolchainType: row.ToolchainType})
	return writeContext{spaceSlug: wc.SpaceSlug, headSources: wc.HeadSources, triggers: wc.Triggers}, err
}

// checkRevisionChangeSet checks the change_set_id parameter of a write that records a Revision: the
// Unit's own ChangeSet when the Unit has one, and an Open ChangeSet of the organization.
func checkRevisionChangeSet(ctx context.Context, q *db.Queries, sc authz.Scope, cur Unit, id *uuid.UUID) error {
	if id != nil && cur.ChangeSetID != nil && *id != *cur.ChangeSetID {
		return apierr.Validation("change_set_id must be the Unit's ChangeSetID", apierr.Item{Item: "change_set_id", Description: "not the Unit's ChangeSet"})
	}
	cs, err := joinable(ctx, q, sc, cur.SpaceID, "change_set_id", id)
	if err != nil || id == nil || cur.ChangeSetID != nil || cur.HeadRevisionID == nil {
		return err
	}
	// A Unit not in the ChangeSet recording its first Revision with it: the start Tag marks the Revision
	// before (a Unit in it got the Tag when it joined).
	_, err = q.RevisionNewestInChangeSet(ctx, db.RevisionNewestInChangeSetParams{OrganizationID: sc.OrganizationID, UnitID: cur.ID, ChangeSetID: id})
	if !apierr.Is(err, apierr.TypeNotFound) {
		return err
	}
	return changeset.PutStartTag(ctx, q, sc, cs, cur.HeadRevisionID)
}

// dataError reports data that does not parse as 400 Data naming the line.
func dataError(err error) error {
	pe, ok := err.(*configdata.ParseError)
	if !ok {
		return err
	}
	item := apierr.Item{Item: "data", Description: pe.Msg}
	if pe.Line > 0 {
		item.Item = fmt.Sprintf("line %d", pe.Line)
	}
	return apierr.Data(pe.Error(), item)
}

type dataChange struct {
	source   string
	restored int64
	opts     WriteOptions
	// always records a Revision even when the data is the head's (a restore of the head's own data).
	always bool
	// fieldsWritten: the same write has changed the Unit's fields in this transaction, bumping its
	// Version and leaving its event to this data change (PATCH with restore).
	fieldsWritten bool
	// steps are the function invocations that made the data, in order, each its own Mutation of the
	// Revision (none for other sources: one Mutation).
	steps    []functionStep
	subgroup string
	// annotations replace the Unit's path annotations (nil keeps them).
	annotations []PathAnnotation
	// link is the Link that wrote the data (its Mutation's LinkID); merge is what a merge (an upgrade, a
	// Link's write) records (nil for other changes).
	link  *uuid.UUID
	merge *mergeRecord
}

// functionStep is one invocation that changed the data: what it was, what it came from, and the data it left.
type functionStep struct {
	invocation json.RawMessage
	origin     Origin
	doc        *configdata.Document
}

// Origin is what a function invocation came from besides the request's own list: a Trigger, a stored
// Invocation and the values of its Parameters. Its Mutation records them.
type Origin struct {
	TriggerID    *uuid.UUID
	InvocationID *uuid.UUID
	Params       map[string]any
}

// params are the parameter values as a Mutation stores them (an object, empty when none).
func (o Origin) params() json.RawMessage {
	if len(o.Params) == 0 {
		return json.RawMessage(`{}`)
	}
	return store.EncodeJSON(o.Params)
}

// commitData records data as a new Revision and Mutation of the locked Unit row and makes it the head.
// Unchanged data records nothing. It costs one statement (UnitRecordRevision).
func (s *Service) commitData(ctx context.Context, sc authz.Scope, tx *store.Tx, row *db.Unit, wc writeContext, data []byte, doc *configdata.Document, change dataChange) (WriteResult, error) {
	hash := configdata.Hash(data)
	prevSources, err := store.DecodeJSON[[]Source](wc.headSources)
	if err != nil {
		return WriteResult{}, err
	}
	if !change.always && hash == row.DataHash && row.HeadRevisionNum > 0 {
		u, err := fromRow(row)
		return WriteResult{Unit: u, Data: data, Sources: prevSources}, err
	}
	if change.source != SourceFunction { // an invocation withholds what it may not change (settle)
		if err := checkGuarded(row, doc, change.opts.Clearance); err != nil {
			return WriteResult{}, err
		}
	}
	if change.source != SourceFunction && (change.opts.Protect || len(change.opts.Guards) > 0) {
		if change.annotations, err = stampChanged(row, doc, change); err != nil {
			return WriteResult{}, err
		}
	}
	ran, err := s.runTriggers(ctx, tx, row, wc, data, doc, change)
	if err != nil {
		return WriteResult{}, err
	}
	data, doc, change.steps, change.annotations = ran.data, ran.doc, ran.steps, ran.notes
	hash = configdata.Hash(data)
	revNum, mutNum := row.HeadRevisionNum+1, row.HeadMutationNum+1
	prevDoc, err := projectionDocument(row.ToolchainType, row.HeadDoc)
	if err != nil {
		return WriteResult{}, err
	}
	var sources []Source
	lastMutNum := mutNum
	if len(change.steps) == 0 {
		sources = attributeSources(prevDoc, prevSources, doc, mutNum, revNum)
	} else {
		// Each invocation is the source of what it changed; later ones win.
		sources = prevSources
		for i, st := range change.steps {
			sources = attributeSources(prevDoc, sources, st.doc, mutNum+int64(i), revNum)
			prevDoc = st.doc
		}
		sources = attributeSources(prevDoc, sources, doc, lastMutNum+int64(len(change.steps)-1), revNum)
		lastMutNum += int64(len(change.steps) - 1)
	}
	var first functionStep
	if len(change.steps) > 0 {
		first = change.steps[0]
	}
	var annotations json.RawMessage
	if change.annotations != nil {
		annotations = store.EncodeJSON(change.annotations)
	}
	description := row.LastChangeDescription
	if change.opts.Description != nil {
		description = *change.opts.Description
	}
	changeSet := row.ChangeSetID
	if change.opts.ChangeSetID != nil {
		changeSet = change.opts.ChangeSetID
	}
	projection, err := doc.Projection()
	if err != nil {
		return WriteResult{}, err
	}
	validationErrors, validationWarnings, validationPassed, validationIDs, valueIDs := ran.findings.params()
	revisionConflicts, merge := json.RawMessage(`[]`), change.merge
	var unitConflicts json.RawMessage
	if merge == nil {
		merge = &mergeRecord{}
	} else {
		revisionConflicts, unitConflicts = store.EncodeJSON(nonNil(merge.revisionConflicts)), store.EncodeJSON(nonNil(merge.unitConflicts))
	}
	// The revision records who acted; a system principal is no User and records uuid.Nil.
	revisionID := uuid.New()
	head, err := tx.Q.UnitRecordRevision(ctx, db.UnitRecordRevisionParams{
		DataHash: hash, Data: data, DataSize: int64(len(data)), HeadDoc: projection,
		RevisionID: &revisionID, RevisionNum: revNum, MutationNum: mutNum, MutationID: uuid.New(), HeadMutationNum: lastMutNum,
		FunctionInvocation: first.invocation, TriggerID: first.origin.TriggerID, InvocationID: first.origin.InvocationID,
		InvocationParams: first.origin.params(), Subgroup: change.subgroup, PathAnnotations: annotations,
		ValidationErrors: validationErrors, ValidationWarnings: validationWarnings, ValidationPassed: validationPassed,
		ValidationTriggerIds: validationIDs, ValueTriggerIds: valueIDs,
		OrganizationID: row.OrganizationID, SpaceID: row.SpaceID, UnitID: row.UnitID,
		Description: description, Source: change.source, UserID: sc.UserID, UserAgent: change.opts.UserAgent,
		ChangeSetID: changeSet, MutationSources: store.EncodeJSON(sources), RestoredRevisionNum: change.restored,
		BumpVersion:       !change.fieldsWritten,
		RevisionConflicts: revisionConflicts, UnitConflicts: unitConflicts, UpstreamRevisionNum: merge.upstreamNum,
		MergeSourceID: merge.sourceID, MergeBaseRevisionNum: merge.baseNum, MergeEndRevisionNum: merge.endNum, LinkID: change.link,
	})
	if err != nil {
		return WriteResult{}, err
	}
	for i := 1; i < len(change.steps); i++ {
		if err := tx.Q.MutationInsert(ctx, db.MutationInsertParams{MutationID: uuid.New(), OrganizationID: row.OrganizationID,
			SpaceID: row.SpaceID, UnitID: row.UnitID, RevisionID: revisionID, RevisionNum: revNum, MutationNum: mutNum + int64(i),
			FunctionInvocation: change.steps[i].invocation, Subgroup: change.subgroup, TriggerID: change.steps[i].origin.TriggerID,
			InvocationID: change.steps[i].origin.InvocationID, InvocationParams: change.steps[i].origin.params()}); err != nil {
			return WriteResult{}, err
		}
	}
	s.contents.put(hash, data) // the next write of the Unit (a Link's, say) reads it without a round trip
	u, err := fromRow(head)
	if err != nil {
		return WriteResult{}, err
	}
	tx.Emit(u.dataEvent(wc.spaceSlug))
	if err := s.propagate(ctx, sc, tx, head, doc); err != nil {
		return WriteResult{}, err
	}
	return WriteResult{Unit: u, Data: data, Sources: sources}, nil
}

// checkGuarded refuses a write of doc over the locked Unit row when it changes a path whose guards
// clearance does not clear (409 Conflict naming the paths): guards hold against every write of the data,
// not only function invocations.
func checkGuarded(row *db.Unit, doc *configdata.Document, clearance []function.Requirement) error {
	notes, err := store.DecodeJSON[annotations](row.PathAnnotations)
	if err != nil {
		return err
	}
	guarded := false
	for _, a := range notes {
		guarded = guarded || len(a.Guards) > 0
	}
	if !guarded {
		return nil
	}
	prev, err := projectionDocument(row.ToolchainType, row.HeadDoc)
	if err != nil {
		return err
	}
	var refused []string
	for _, l := range changedLeaves(prev, doc) {
		if guards := notes.uncleared(l.resource, l.path, clearance); guards != nil {
			refused = append(refused, fmt.Sprintf("%s (guards %s)", l.path, describeGuards(guards)))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return apierr.Conflict("the write changes guarded paths its clearance does not clear: %s; send a clearance that clears them, or remove the guards",
		strings.Join(refused, ", ")).WithEntity(EntityType, row.UnitID.String(), row.Slug)
}

// restoreRevision makes the data of the Revision rp names the head again, as a new Revision. A restore by
// ChangeOrder then records itself on the ChangeOrder (its RestoreTagID on the new head, the Space in its
// RestoredSpaceIDs, State Restored), in tx.
func (s *Service) restoreRevision(ctx context.Context, sc authz.Scope, tx *store.Tx, spaceID, unitID uuid.UUID, rp restorePoint, opts WriteOptions, fieldsWritten bool) (WriteResult, error) {
	row, cur, wc, err := lockForEdit(ctx, sc, tx, spaceID, unitID)
	if err != nil {
		return WriteResult{}, err
	}
	num := rp.Num
	if rp.byChangeOrder() {
		r, err := tx.Q.RevisionNewestWithTag(ctx, db.RevisionNewestWithTagParams{OrganizationID: sc.OrganizationID, UnitID: unitID, TagID: rp.startTagID.String()})
		if apierr.Is(err, apierr.TypeNotFound) {
			return WriteResult{}, apierr.Validation(fmt.Sprintf("ChangeOrder %s never reached Unit %s: none of its Revisions carries the ChangeOrder's start Tag, so there is nothing to restore", rp.ChangeOrderID, cur.Slug),
				apierr.Item{Item: "restore", Description: "the ChangeOrder never reached the Unit"})
		}
		if err != nil {
			return WriteResult{}, err
		}
		num = r.RevisionNum
	}
	rev, err := tx.Q.RevisionGetByNum(ctx, db.RevisionGetByNumParams{OrganizationID: sc.OrganizationID, UnitID: unitID, RevisionNum: num})
	if apierr.Is(err, apierr.TypeNotFound) {
		return WriteResult{}, apierr.Validation(fmt.Sprintf("the Unit has no Revision %d to restore", num), apierr.Item{Item: "restore", Description: "no such RevisionNum"})
	}
	if err != nil {
		return WriteResult{}, err
	}
	data, err := tx.Q.ConfigDataGet(ctx, rev.DataHash)
	if err != nil {
		return WriteResult{}, err
	}
	doc, err := configdata.Parse(row.ToolchainType, data)
	if err != nil {
		return WriteResult{}, dataError(err)
	}
	out, err := s.commitData(ctx, sc, tx, row, wc, data, doc, dataChange{source: SourceRestore, restored: num, opts: opts, always: true, fieldsWritten: fieldsWritten})
	if err != nil || !rp.byChangeOrder() {
		return out, err
	}
	if out.Unit.HeadRevisionID == nil {
		return out, fmt.Errorf("restoring Unit %s: no head Revision after the restore", unitID)
	}
	return out, s.ChangeOrderRestores.Restored(ctx, sc, tx, rp.ChangeOrderID, out.Unit.SpaceID, *out.Unit.HeadRevisionID)
}

// projectionDocument rebuilds the path model from a stored projection.
func projectionDocument(toolchain string, projection []byte) (*configdata.Document, error) {
	var resources []configdata.Resource
	if len(projection) > 0 {
		if err := json.Unmarshal(projection, &resources); err != nil {
			return nil, fmt.Errorf("decoding head projection: %w", err)
		}
	}
	return &configdata.Document{Toolchain: toolchain, Resources: resources}, nil
}

// headSources reads the mutation sources of the head Revision.
func headSources(ctx context.Context, q *db.Queries, row *db.Unit) ([]Source, error) {
	if row.HeadRevisionID == nil {
		return []Source{}, nil
	}
	rev, err := q.RevisionGet(ctx, db.RevisionGetParams{OrganizationID: row.OrganizationID, UnitID: row.UnitID, RevisionID: *row.HeadRevisionID})
	if err != nil {
		return nil, err
	}
	return store.DecodeJSON[[]Source](rev.MutationSources)
}

// attributeSources keeps the previous source of every leaf whose value is unchanged and names the new
// Mutation for every leaf that is new or changed.
func attributeSources(prev *configdata.Document, prevSources []Source, next *configdata.Document, mutNum, revNum int64) []Source {
	prevValues := map[string]string{}
	for _, l := range prev.Leaves() {
		prevValues[l.Key()] = encode(l.Value)
	}
	prevBy := map[string]Source{}
	for _, s := range prevSources {
		prevBy[resourceKey(s.ResourceType, s.ResourceName)+"\x00"+s.Path] = s
	}
	types := map[string][2]string{}
	for _, r := range next.Resources {
		types[r.Key()] = [2]string{r.Type, r.Name}
	}
	out := []Source{}
	for _, l := range next.Leaves() {
		tn := types[l.Resource]
		src := Source{ResourceType: tn[0], ResourceName: tn[1], Path: l.Path, MutationNum: mutNum, RevisionNum: revNum}
		if old, ok := prevValues[l.Key()]; ok && old == encode(l.Value) {
			if s, ok := prevBy[l.Key()]; ok {
				src.MutationNum, src.RevisionNum = s.MutationNum, s.RevisionNum
			}
		}
		out = append(out, src)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.ResourceType+a.ResourceName != b.ResourceType+b.ResourceName {
			return a.ResourceType+a.ResourceName < b.ResourceType+b.ResourceName
		}
		return false
	})
	return out
}

func resourceKey(typ, name string) string {
	if typ == "" {
		return ""
	}
	return typ + "/" + name
}

func encode(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// MutationSources returns, for each path of the head data, the Mutation that last set it, with the
// path's guards and protection.
func (s *Service) MutationSources(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID) ([]Source, error) {
	u, err := s.Get(ctx, sc, spaceID, unitID)
	if err != nil {
		return nil, err
	}
	row, err := loadRow(ctx, sc, s.Store.Conn(), spaceID, unitID, false)
	if err != nil {
		return nil, err
	}
	sources, err := headSources(ctx, s.Store.Q(), row)
	return u.Annotate(sources), err
}

// Annotate gives each of the Unit's head sources the guards and protection in force at its path.
func (u Unit) Annotate(sources []Source) []Source {
	notes := annotations(u.PathAnnotations)
	for i, src := range sources {
		key := resourceKey(src.ResourceType, src.ResourceName)
		sources[i].Guards = notes.guards(key, src.Path)
		sources[i].Protected = notes.protected(key, src.Path)
	}
	return sources
}

func nonNil(cs []Conflict) []Conflict {
	if cs == nil {
		return []Conflict{}
	}
	return cs
}

// stampChanged records the write's protect and guards (WriteOptions) on the paths doc changes against
// the locked Unit's head: the path annotations the write stores.
func stampChanged(row *db.Unit, doc *configdata.Document, change dataChange) ([]PathAnnotation, error) {
	notes := annotations(change.annotations)
	if notes == nil {
		var err error
		if notes, err = store.DecodeJSON[annotations](row.PathAnnotations); err != nil {
			return nil, err
		}
	}
	notes = append(annotations{}, cloneAnnotations(notes)...)
	prev, err := projectionDocument(row.ToolchainType, row.HeadDoc)
	if err != nil {
		return nil, err
	}
	for _, l := range changedLeaves(prev, doc) {
		if l.existed && !present(doc, l) {
			continue // a deleted path has nothing left to protect or guard
		}
		notes = notes.stamp(l.typ, l.name, l.path, change.opts.Guards, change.opts.Protect)
	}
	return notes.pruned(), nil
}

// present reports whether doc holds the changed leaf l.
func present(doc *configdata.Document, l changedLeaf) bool {
	for _, x := range doc.Leaves() {
		if x.Resource == l.resource && x.Path == l.path {
			return true
		}
	}
	return false
}
