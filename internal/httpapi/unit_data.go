package httpapi

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/unit"
)

// dataResponse writes configuration data with its ETag, or 304 when If-None-Match names it.
type dataResponse struct {
	data        []byte
	hash        string
	toolchain   string
	notModified bool
}

func newDataResponse(data []byte, hash, toolchain string, ifNoneMatch *string) dataResponse {
	return dataResponse{data: data, hash: hash, toolchain: toolchain,
		notModified: ifNoneMatch != nil && unit.ETagMatches(*ifNoneMatch, hash)}
}

func (r dataResponse) write(w http.ResponseWriter) error {
	w.Header().Set("ETag", `"`+r.hash+`"`)
	if r.notModified {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", configdata.MediaType(r.toolchain))
	w.Header().Set("Content-Length", strconv.Itoa(len(r.data))) // known: sent in one piece, not chunked
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(r.data)
	return err
}

func (r dataResponse) VisitDownloadUnitDataResponse(w http.ResponseWriter) error { return r.write(w) }
func (r dataResponse) VisitDownloadRevisionDataResponse(w http.ResponseWriter) error {
	return r.write(w)
}

func (h unitAPI) DownloadUnitData(ctx context.Context, r api.DownloadUnitDataRequestObject) (api.DownloadUnitDataResponseObject, error) {
	sc := scopeOf(ctx)
	data, hash, toolchain, err := h.s.deps.Units.Data(ctx, sc, r.SpaceId, r.UnitId, deref(r.Params.IfNoneMatch))
	if err != nil {
		return nil, err
	}
	return newDataResponse(data, hash, toolchain, r.Params.IfNoneMatch), nil
}

func (h unitAPI) UploadUnitData(ctx context.Context, r api.UploadUnitDataRequestObject) (api.UploadUnitDataResponseObject, error) {
	sc := scopeOf(ctx)
	includes, err := writeIncludes(r.Params.Include)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, apierr.UserInput("the request body could not be read")
	}
	opts, err := dataWriteOptions(ctx, r.Params.DryRun, r.Params.LastChangeDescription, r.Params.Clearance, r.Params.Protect, r.Params.Guards)
	if err != nil {
		return nil, err
	}
	opts.ChangeSetID = r.Params.ChangeSetId
	res, err := h.s.deps.Units.PutData(ctx, sc, r.SpaceId, r.UnitId, unit.Upload{Body: data, MediaType: mediaType(ctx)}, deref(r.Params.IfMatch), opts)
	if err != nil {
		return nil, err
	}
	if res.Unit, err = h.s.deps.Units.WithLinks(ctx, res.Unit); err != nil {
		return nil, err
	}
	etag := `"` + res.Unit.DataHash + `"`
	return api.UploadUnitData200JSONResponse{Body: writeResponse(res, includes), Headers: api.UploadUnitData200ResponseHeaders{ETag: &etag}}, nil
}

func (h unitAPI) GetUnitMutationSources(ctx context.Context, r api.GetUnitMutationSourcesRequestObject) (api.GetUnitMutationSourcesResponseObject, error) {
	sc := scopeOf(ctx)
	sources, err := h.s.deps.Units.MutationSources(ctx, sc, r.SpaceId, r.UnitId)
	if err != nil {
		return nil, err
	}
	return api.GetUnitMutationSources200JSONResponse{Body: sourcesToAPI(sources)}, nil
}

func (h unitAPI) SetUnitGuard(ctx context.Context, r api.SetUnitGuardRequestObject) (api.SetUnitGuardResponseObject, error) {
	sc := scopeOf(ctx)
	var edits []unit.GuardEdit
	for _, g := range deref(r.Body.ResourceGuards) {
		typ, name := resourceOf(g.Resource)
		edits = append(edits, unit.GuardEdit{ResourceType: typ, ResourceName: name, Set: deref(g.Set), Remove: deref(g.Remove)})
	}
	clearance := make([]function.Requirement, len(r.Body.Clearance))
	for i, c := range r.Body.Clearance {
		clearance[i] = function.Requirement{Key: c.Key, Operator: string(c.Operator), Values: c.Values}
	}
	notes, err := h.s.deps.Units.SetGuards(ctx, sc, r.SpaceId, r.UnitId, edits, clearance)
	if err != nil {
		return nil, err
	}
	return api.SetUnitGuard200JSONResponse{Body: api.UnitGuardResponse{PathAnnotations: pathAnnotationsToAPI(notes)}}, nil
}

func pathAnnotationsToAPI(notes []unit.PathAnnotation) []api.PathAnnotation {
	out := make([]api.PathAnnotation, len(notes))
	for i, n := range notes {
		out[i] = api.PathAnnotation{ResourceType: n.ResourceType, ResourceName: n.ResourceName, Path: n.Path, Guards: n.Guards, Protected: n.Protected}
		if out[i].Guards == nil {
			out[i].Guards = map[string]string{}
		}
	}
	return out
}

func (h unitAPI) SetUnitProtection(ctx context.Context, r api.SetUnitProtectionRequestObject) (api.SetUnitProtectionResponseObject, error) {
	sc := scopeOf(ctx)
	var edits []unit.ProtectionEdit
	for _, p := range deref(r.Body.ResourceProtection) {
		typ, name := resourceOf(p.Resource)
		edits = append(edits, unit.ProtectionEdit{ResourceType: typ, ResourceName: name, Protected: deref(p.Protected)})
	}
	sources, err := h.s.deps.Units.SetProtection(ctx, sc, r.SpaceId, r.UnitId, edits)
	if err != nil {
		return nil, err
	}
	return api.SetUnitProtection200JSONResponse{Body: api.UnitProtectionResponse{MutationSources: sourcesToAPI(sources).Sources}}, nil
}

// resourceOf reads a ResourceInfo (absent: the data's only resource of formats other than Kubernetes/YAML).
func resourceOf(r *api.ResourceInfo) (string, string) {
	if r == nil {
		return "", ""
	}
	return r.ResourceType, r.ResourceName
}

// dataClearance reads the clearance parameter of a data write.
// dataWriteOptions are the options of a write of a Unit's data: dry_run, last_change_description,
// clearance, protect and guards (checked as invoke checks them).
func dataWriteOptions(ctx context.Context, dryRun *bool, description, clearance *string, protect *bool, guards *string) (unit.WriteOptions, error) {
	opts := unit.WriteOptions{DryRun: flag(dryRun), Description: description, UserAgent: userAgent(ctx), Protect: flag(protect)}
	var err error
	if opts.Clearance, err = dataClearance(clearance); err != nil {
		return opts, err
	}
	if opts.Guards, err = jsonParam[map[string]string]("guards", deref(guards)); err != nil {
		return opts, err
	}
	return opts, function.CheckGuards(opts.Guards, opts.Clearance, "guards")
}

// upgradeOptions are an upgrade's (nil: the write is no upgrade).
func upgradeOptions(upgrade, subtract *bool) *unit.UpgradeOptions {
	if !flag(upgrade) {
		return nil
	}
	return &unit.UpgradeOptions{Subtract: flag(subtract)}
}

// ResolveUnitConflicts applies or dismisses a Unit's outstanding merge conflicts.
func (h unitAPI) ResolveUnitConflicts(ctx context.Context, r api.ResolveUnitConflictsRequestObject) (api.ResolveUnitConflictsResponseObject, error) {
	sc := scopeOf(ctx)
	opts, err := dataWriteOptions(ctx, &r.Body.DryRun, r.Params.LastChangeDescription, r.Params.Clearance, nil, nil)
	if err != nil {
		return nil, err
	}
	sels := make([]unit.ConflictSelector, len(r.Body.Select))
	for i, s := range r.Body.Select {
		sels[i] = unit.ConflictSelector{Path: nonEmpty(s.Path), Reason: nonEmpty(s.Reason), ResourceName: nonEmpty(s.ResourceName)}
	}
	res, err := h.s.deps.Units.ResolveConflicts(ctx, sc, r.SpaceId, r.UnitId, string(r.Body.Action), sels, opts)
	if err != nil {
		return nil, err
	}
	return api.ResolveUnitConflicts200JSONResponse{Body: api.UnitConflictsResponse{Applied: len(res.Applied),
		Dismissed: len(res.Dismissed), Conflicts: conflictsToAPI(r.UnitId, res.Conflicts), Unit: unitToAPI(res.Unit)}}, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func dataClearance(raw *string) ([]function.Requirement, error) {
	clearance, err := jsonParam[[]function.Requirement]("clearance", deref(raw))
	if err != nil {
		return nil, err
	}
	return clearance, function.CheckGuards(nil, clearance, "")
}
