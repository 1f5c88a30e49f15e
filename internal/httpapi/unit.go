package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/tag"
	"github.com/hubd/hubd/internal/unit"
)

// unitAPI serves the Unit, Revision and Mutation operations, data included.
type unitAPI struct{ *base }

func (h unitAPI) ListAllUnits(ctx context.Context, r api.ListAllUnitsRequestObject) (api.ListAllUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listUnits(ctx, sc, nil, listParams(ctx, r.Params), dataFilterOf(r.Params))
}

func (h unitAPI) ListUnits(ctx context.Context, r api.ListUnitsRequestObject) (api.ListUnitsResponseObject, error) {
	sc := scopeOf(ctx)
	return h.listUnits(ctx, sc, &r.SpaceId, listParams(ctx, r.Params), dataFilterOf(r.Params))
}

func (h unitAPI) listUnits(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params, df unit.DataFilter) (pageResponse, error) {
	page, err := h.s.deps.Units.List(ctx, sc, spaceID, requestPath(ctx), params, df)
	if err != nil {
		return pageResponse{}, err
	}
	out, err := h.extendUnits(ctx, sc, page.Items, page.Includes)
	if err != nil {
		return pageResponse{}, err
	}
	return newPage(out, unit.EntityType, page.PageInfo), nil
}

// extendUnits builds ExtendedUnits with what include asks for, loading each related family once per page.
func (h unitAPI) extendUnits(ctx context.Context, sc authz.Scope, units []unit.Unit, includes map[string]bool) ([]api.ExtendedUnit, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	var ids []uuid.UUID
	for _, u := range units {
		ids = append(ids, u.SpaceID)
		if u.UpstreamSpaceID != nil {
			ids = append(ids, *u.UpstreamSpaceID)
		}
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"] || includes["UpstreamSpaceID"], ids)
	if err != nil {
		return nil, err
	}
	upstream := map[uuid.UUID]unit.Unit{}
	if includes["UpstreamUnitID"] {
		var ids []uuid.UUID
		for _, u := range units {
			if u.UpstreamUnitID != nil {
				ids = append(ids, *u.UpstreamUnitID)
			}
		}
		if upstream, err = h.s.deps.Units.UnitsByID(ctx, sc, ids); err != nil {
			return nil, err
		}
	}
	targets := map[uuid.UUID]api.Target{}
	if includes["TargetID"] {
		var ids []uuid.UUID
		for _, u := range units {
			if u.TargetID != nil {
				ids = append(ids, *u.TargetID)
			}
		}
		found, err := h.s.deps.Targets.LoadByIDs(ctx, sc, ids)
		if err != nil {
			return nil, err
		}
		for id, t := range found {
			targets[id] = targetToAPI(t)
		}
	}
	headMutations := map[uuid.UUID]unit.Mutation{}
	if includes["HeadMutationNum"] {
		if headMutations, err = h.s.deps.Units.HeadMutations(ctx, sc, units); err != nil {
			return nil, err
		}
	}
	heads := map[uuid.UUID]unit.Revision{}
	if includes["HeadRevisionNum"] {
		var ids []uuid.UUID
		for _, u := range units {
			if u.HeadRevisionID != nil {
				ids = append(ids, *u.HeadRevisionID)
			}
		}
		if heads, err = h.s.deps.Units.RevisionsByID(ctx, sc, ids); err != nil {
			return nil, err
		}
	}
	out := make([]api.ExtendedUnit, len(units))
	for i, u := range units {
		e := api.ExtendedUnit{Unit: unitToAPI(u), Organization: org}
		if sp, ok := spaces[u.SpaceID]; ok && includes["SpaceID"] {
			e.Space = &sp
		}
		if u.UpstreamSpaceID != nil && includes["UpstreamSpaceID"] {
			if sp, ok := spaces[*u.UpstreamSpaceID]; ok {
				e.UpstreamSpace = &sp
			}
		}
		if u.UpstreamUnitID != nil {
			if up, ok := upstream[*u.UpstreamUnitID]; ok {
				a := unitToAPI(up)
				e.UpstreamUnit = &a
			}
		}
		if u.TargetID != nil {
			if t, ok := targets[*u.TargetID]; ok {
				e.Target = &t
			}
		}
		if m, ok := headMutations[u.ID]; ok {
			a := mutationToAPI(m)
			e.HeadMutation = &a
		}
		if u.HeadRevisionID != nil {
			if rev, ok := heads[*u.HeadRevisionID]; ok {
				a := revisionToAPI(rev)
				e.HeadRevision = &a
			}
		}
		e.FromLink = unservedList[map[string]any](includes, "FromLinkID")
		out[i] = e
	}
	return out, nil
}

func (h unitAPI) GetUnit(ctx context.Context, r api.GetUnitRequestObject) (api.GetUnitResponseObject, error) {
	sc := scopeOf(ctx)
	fields, includes, err := listquery.Projection(unit.ListEntity, deref(r.Params.Select), deref(r.Params.Include))
	if err != nil {
		return nil, err
	}
	u, err := h.s.deps.Units.Get(ctx, sc, r.SpaceId, r.UnitId)
	if err != nil {
		return nil, err
	}
	ext, err := h.extendUnits(ctx, sc, []unit.Unit{u}, includes)
	if err != nil {
		return nil, err
	}
	return itemResponse{item: ext[0], entityField: unit.EntityType, fields: fields}, nil
}

// writeIncludes validates the include of a Unit write: ConfigData and MutationSources, what the write
// produced. Anything else is 400 (a write expands no related entities).
func writeIncludes(p *api.UnitWriteInclude) (map[string]bool, error) {
	out := map[string]bool{}
	for _, n := range strings.Split(deref(p), ",") {
		switch n = strings.TrimSpace(n); n {
		case "":
		case "ConfigData", "MutationSources":
			out[n] = true
		default:
			return nil, apierr.UserInput(fmt.Sprintf("include: a Unit write returns ConfigData and MutationSources; %q cannot be included (read the Unit to expand its related entities)", n),
				apierr.Item{Item: "include", Description: "unknown name " + n})
		}
	}
	return out, nil
}

func writeResponse(res unit.WriteResult, includes map[string]bool) api.UnitWriteResponse {
	out := api.UnitWriteResponse{Unit: unitToAPI(res.Unit)}
	if includes["ConfigData"] {
		s := string(res.Data)
		out.ConfigData = &s
	}
	if includes["MutationSources"] {
		src := sourcesToAPI(res.Sources)
		out.MutationSources = &src
	}
	return out
}

func (h unitAPI) CreateUnit(ctx context.Context, r api.CreateUnitRequestObject) (api.CreateUnitResponseObject, error) {
	sc := scopeOf(ctx)
	includes, err := writeIncludes(r.Params.Include)
	if err != nil {
		return nil, err
	}
	u, err := h.s.deps.Units.Create(ctx, sc, r.SpaceId, unitFields(r.Body),
		unit.WriteOptions{DryRun: flag(r.Params.DryRun), AllowExists: isTrue(r.Params.AllowExists)})
	if err != nil {
		return nil, err
	}
	return api.CreateUnit200JSONResponse{Body: writeResponse(unit.WriteResult{Unit: u, Sources: []unit.Source{}}, includes)}, nil
}

func (h unitAPI) UpdateUnit(ctx context.Context, r api.UpdateUnitRequestObject) (api.UpdateUnitResponseObject, error) {
	sc := scopeOf(ctx)
	includes, err := writeIncludes(r.Params.Include)
	if err != nil {
		return nil, err
	}
	u, err := h.s.deps.Units.Update(ctx, sc, r.SpaceId, r.UnitId, r.Body.Version, unitFields(r.Body), unit.WriteOptions{DryRun: flag(r.Params.DryRun)})
	if err != nil {
		return nil, err
	}
	res, err := h.withData(ctx, sc, u, includes)
	if err != nil {
		return nil, err
	}
	return api.UpdateUnit200JSONResponse{Body: writeResponse(res, includes)}, nil
}

// withData fills what include asks for after a write that did not touch the data.
func (h unitAPI) withData(ctx context.Context, sc authz.Scope, u unit.Unit, includes map[string]bool) (unit.WriteResult, error) {
	res := unit.WriteResult{Unit: u, Sources: []unit.Source{}}
	var err error
	if includes["ConfigData"] {
		if res.Data, _, _, err = h.s.deps.Units.Data(ctx, sc, u.SpaceID, u.ID, ""); err != nil {
			return res, err
		}
	}
	if includes["MutationSources"] {
		if res.Sources, err = h.s.deps.Units.MutationSources(ctx, sc, u.SpaceID, u.ID); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (h unitAPI) PatchUnit(ctx context.Context, r api.PatchUnitRequestObject) (api.PatchUnitResponseObject, error) {
	sc := scopeOf(ctx)
	includes, err := writeIncludes(r.Params.Include)
	if err != nil {
		return nil, err
	}
	patch, err := patchBody(r.JSONBody, r.ApplicationMergePatchPlusJSONBody)
	if err != nil {
		return nil, err
	}
	opts := unit.WriteOptions{DryRun: flag(r.Params.DryRun), Description: r.Params.LastChangeDescription, UserAgent: userAgent(ctx)}
	res, err := h.s.deps.Units.Patch(ctx, sc, r.SpaceId, r.UnitId, patch, deref(r.Params.Restore), opts)
	if err != nil {
		return nil, err
	}
	if res.Data == nil && (includes["ConfigData"] || includes["MutationSources"]) {
		if res, err = h.withData(ctx, sc, res.Unit, includes); err != nil {
			return nil, err
		}
	}
	return api.PatchUnit200JSONResponse{Body: writeResponse(res, includes)}, nil
}

func (h unitAPI) DeleteUnit(ctx context.Context, r api.DeleteUnitRequestObject) (api.DeleteUnitResponseObject, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Units.Delete(ctx, sc, r.SpaceId, r.UnitId, flag(r.Params.DryRun)); err != nil {
		return nil, err
	}
	return api.DeleteUnit200JSONResponse{Body: deleted(unit.EntityType)}, nil
}

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
	opts := unit.WriteOptions{DryRun: flag(r.Params.DryRun), Description: r.Params.LastChangeDescription,
		ChangeSetID: r.Params.ChangeSetId, UserAgent: userAgent(ctx)}
	res, err := h.s.deps.Units.PutData(ctx, sc, r.SpaceId, r.UnitId, unit.Upload{Body: data, MediaType: mediaType(ctx)}, deref(r.Params.IfMatch), opts)
	if err != nil {
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
	out := make([]api.PathAnnotation, len(notes))
	for i, n := range notes {
		out[i] = api.PathAnnotation{ResourceType: n.ResourceType, ResourceName: n.ResourceName, Path: n.Path, Guards: n.Guards, Protected: n.Protected}
		if out[i].Guards == nil {
			out[i].Guards = map[string]string{}
		}
	}
	return api.SetUnitGuard200JSONResponse{Body: api.UnitGuardResponse{PathAnnotations: out}}, nil
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

func (h unitAPI) ListAllRevisions(ctx context.Context, r api.ListAllRevisionsRequestObject) (api.ListAllRevisionsResponseObject, error) {
	sc := scopeOf(ctx)
	all := r.Params.DistinctOn != nil && *r.Params.DistinctOn == api.ListAllRevisionsParamsDistinctOnOff
	page, err := h.s.deps.Units.ListAllRevisions(ctx, sc, requestPath(ctx), listParams(ctx, r.Params), all)
	if err != nil {
		return nil, err
	}
	return h.revisionPage(ctx, sc, page)
}

func (h unitAPI) ListExtendedRevisions(ctx context.Context, r api.ListExtendedRevisionsRequestObject) (api.ListExtendedRevisionsResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.Units.ListRevisions(ctx, sc, r.SpaceId, r.UnitId, requestPath(ctx), listParams(ctx, r.Params))
	if err != nil {
		return nil, err
	}
	return h.revisionPage(ctx, sc, page)
}

func (h unitAPI) revisionPage(ctx context.Context, sc authz.Scope, page listquery.Page[unit.Revision]) (pageResponse, error) {
	out, err := h.extendRevisions(ctx, sc, page.Items, page.Includes)
	if err != nil {
		return pageResponse{}, err
	}
	return newPage(out, unit.RevisionEntityType, page.PageInfo), nil
}

func (h unitAPI) extendRevisions(ctx context.Context, sc authz.Scope, revs []unit.Revision, includes map[string]bool) ([]api.ExtendedRevision, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	units := map[uuid.UUID]unit.Unit{}
	if includes["UnitID"] {
		var ids []uuid.UUID
		for _, r := range revs {
			ids = append(ids, r.UnitID)
		}
		if units, err = h.s.deps.Units.UnitsByID(ctx, sc, ids); err != nil {
			return nil, err
		}
	}
	var ids []uuid.UUID
	for _, r := range revs {
		ids = append(ids, r.SpaceID)
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], ids)
	if err != nil {
		return nil, err
	}
	userIDs := make([]uuid.UUID, len(revs))
	for i, r := range revs {
		userIDs[i] = r.UserID
	}
	users, err := h.includedUsers(ctx, sc, includes, userIDs)
	if err != nil {
		return nil, err
	}
	tags := map[uuid.UUID]tag.Tag{}
	if includes["Tags"] {
		var ids []uuid.UUID
		for _, r := range revs {
			for id := range r.Tags {
				if tagID, err := uuid.Parse(id); err == nil {
					ids = append(ids, tagID)
				}
			}
		}
		if tags, err = h.s.deps.Tags.LoadByIDs(ctx, sc, ids); err != nil {
			return nil, err
		}
	}
	out := make([]api.ExtendedRevision, len(revs))
	for i, r := range revs {
		e := api.ExtendedRevision{Revision: revisionToAPI(r), Organization: org}
		if u, ok := units[r.UnitID]; ok {
			a := unitToAPI(u)
			e.Unit = &a
		}
		if sp, ok := spaces[r.SpaceID]; ok {
			e.Space = &sp
		}
		if u, ok := users[r.UserID]; ok {
			e.User = &u
		}
		if includes["Tags"] {
			e.Tags = revisionTags(r, tags)
		}
		e.Attestations = unservedList[map[string]any](includes, "Attestations")
		e.ChangeOrders = unservedList[map[string]any](includes, "ChangeOrders")
		e.Releases = unservedList[map[string]any](includes, "Releases")
		out[i] = e
	}
	return out, nil
}

// revisionTags are the Tags on a Revision among those loaded (the ones the caller may view), by Slug.
func revisionTags(r unit.Revision, loaded map[uuid.UUID]tag.Tag) *[]api.Tag {
	out := []api.Tag{}
	for id := range r.Tags {
		if tagID, err := uuid.Parse(id); err == nil {
			if t, ok := loaded[tagID]; ok {
				out = append(out, tagToAPI(t))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return &out
}

func (h unitAPI) GetExtendedRevision(ctx context.Context, r api.GetExtendedRevisionRequestObject) (api.GetExtendedRevisionResponseObject, error) {
	sc := scopeOf(ctx)
	fields, includes, err := listquery.Projection(unit.RevisionList, deref(r.Params.Select), deref(r.Params.Include))
	if err != nil {
		return nil, err
	}
	rev, err := h.s.deps.Units.GetRevision(ctx, sc, r.SpaceId, r.UnitId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	ext, err := h.extendRevisions(ctx, sc, []unit.Revision{rev}, includes)
	if err != nil {
		return nil, err
	}
	return itemResponse{item: ext[0], entityField: unit.RevisionEntityType, fields: fields}, nil
}

func (h unitAPI) DownloadRevisionData(ctx context.Context, r api.DownloadRevisionDataRequestObject) (api.DownloadRevisionDataResponseObject, error) {
	sc := scopeOf(ctx)
	data, hash, toolchain, err := h.s.deps.Units.RevisionData(ctx, sc, r.SpaceId, r.UnitId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	return newDataResponse(data, hash, toolchain, r.Params.IfNoneMatch), nil
}

func (h unitAPI) GetRevisionMutationSources(ctx context.Context, r api.GetRevisionMutationSourcesRequestObject) (api.GetRevisionMutationSourcesResponseObject, error) {
	sc := scopeOf(ctx)
	sources, err := h.s.deps.Units.RevisionSources(ctx, sc, r.SpaceId, r.UnitId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	return api.GetRevisionMutationSources200JSONResponse{Body: sourcesToAPI(sources)}, nil
}

func (h unitAPI) ListExtendedMutations(ctx context.Context, r api.ListExtendedMutationsRequestObject) (api.ListExtendedMutationsResponseObject, error) {
	sc := scopeOf(ctx)
	page, err := h.s.deps.Units.ListMutations(ctx, sc, r.SpaceId, r.UnitId, requestPath(ctx), listParams(ctx, r.Params))
	if err != nil {
		return nil, err
	}
	out, err := h.extendMutations(ctx, sc, page.Items, page.Includes)
	if err != nil {
		return nil, err
	}
	return newPage(out, unit.MutationEntityType, page.PageInfo), nil
}

// extendMutations fills what include asks for, one query per family. Upstream merges and Links are not
// served yet: MergeSource and Link stay null.
func (h unitAPI) extendMutations(ctx context.Context, sc authz.Scope, ms []unit.Mutation, includes map[string]bool) ([]api.ExtendedMutation, error) {
	org, err := h.includedOrganization(ctx, sc, includes)
	if err != nil {
		return nil, err
	}
	var unitIDs, revIDs, spaceIDs, triggerIDs, invocationIDs []uuid.UUID
	for _, m := range ms {
		unitIDs, revIDs, spaceIDs = append(unitIDs, m.UnitID), append(revIDs, m.RevisionID), append(spaceIDs, m.SpaceID)
		if m.TriggerID != nil && includes["TriggerID"] {
			triggerIDs = append(triggerIDs, *m.TriggerID)
		}
		if m.InvocationID != nil && includes["InvocationID"] {
			invocationIDs = append(invocationIDs, *m.InvocationID)
		}
	}
	triggers, err := h.s.deps.Triggers.LoadByIDs(ctx, sc, triggerIDs)
	if err != nil {
		return nil, err
	}
	invocations, err := h.s.deps.Invocations.LoadByIDs(ctx, sc, invocationIDs)
	if err != nil {
		return nil, err
	}
	units := map[uuid.UUID]unit.Unit{}
	if includes["UnitID"] {
		if units, err = h.s.deps.Units.UnitsByID(ctx, sc, unitIDs); err != nil {
			return nil, err
		}
	}
	revs := map[uuid.UUID]unit.Revision{}
	if includes["RevisionID"] {
		if revs, err = h.s.deps.Units.RevisionsByID(ctx, sc, revIDs); err != nil {
			return nil, err
		}
	}
	spaces, err := h.includedSpaces(ctx, sc, includes["SpaceID"], spaceIDs)
	if err != nil {
		return nil, err
	}
	out := make([]api.ExtendedMutation, len(ms))
	for i, m := range ms {
		e := api.ExtendedMutation{Mutation: mutationToAPI(m), Organization: org}
		if u, ok := units[m.UnitID]; ok {
			a := unitToAPI(u)
			e.Unit = &a
		}
		if rv, ok := revs[m.RevisionID]; ok {
			a := revisionToAPI(rv)
			e.Revision = &a
		}
		if sp, ok := spaces[m.SpaceID]; ok {
			e.Space = &sp
		}
		if m.TriggerID != nil {
			if t, ok := triggers[*m.TriggerID]; ok {
				a := triggerToAPI(t)
				e.Trigger = &a
			}
		}
		if m.InvocationID != nil {
			if inv, ok := invocations[*m.InvocationID]; ok {
				a := invocationToAPI(inv)
				e.Invocation = &a
			}
		}
		out[i] = e
	}
	return out, nil
}

func (h unitAPI) GetExtendedMutation(ctx context.Context, r api.GetExtendedMutationRequestObject) (api.GetExtendedMutationResponseObject, error) {
	sc := scopeOf(ctx)
	fields, includes, err := listquery.Projection(unit.MutationList, deref(r.Params.Select), deref(r.Params.Include))
	if err != nil {
		return nil, err
	}
	m, err := h.s.deps.Units.GetMutation(ctx, sc, r.SpaceId, r.UnitId, r.MutationId)
	if err != nil {
		return nil, err
	}
	ext, err := h.extendMutations(ctx, sc, []unit.Mutation{m}, includes)
	if err != nil {
		return nil, err
	}
	return itemResponse{item: ext[0], entityField: unit.MutationEntityType, fields: fields}, nil
}
