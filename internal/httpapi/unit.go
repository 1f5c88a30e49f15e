package httpapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/unit"
)

// unitAPI serves the Unit, Revision and Mutation operations, data included.
type unitAPI struct{ *base }

func (h unitAPI) ListAllUnits(ctx context.Context, r api.ListAllUnitsRequestObject) (api.ListAllUnitsResponseObject, error) {
	params, err := listParams(ctx, h.s, nil, r.Params)
	if err != nil {
		return nil, err
	}
	return h.listUnits(ctx, scopeOf(ctx), nil, params, dataFilterOf(r.Params))
}

func (h unitAPI) ListUnits(ctx context.Context, r api.ListUnitsRequestObject) (api.ListUnitsResponseObject, error) {
	params, err := listParams(ctx, h.s, &r.SpaceId, r.Params)
	if err != nil {
		return nil, err
	}
	return h.listUnits(ctx, scopeOf(ctx), &r.SpaceId, params, dataFilterOf(r.Params))
}

func (h unitAPI) listUnits(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, params listquery.Params, df unit.DataFilter) (pageResponse, error) {
	page, err := h.s.deps.Units.List(ctx, sc, spaceID, requestPath(ctx), params, df)
	return listed(ctx, sc, page, err, unit.EntityType, h.extendUnits)
}

// unitRelations are what include expands of a Unit.
var unitRelations = []relation[unit.Unit]{
	byID("SpaceID", func(u unit.Unit) []uuid.UUID { return []uuid.UUID{u.SpaceID} }, spaceEdge.load),
	byID("UpstreamSpaceID", func(u unit.Unit) []uuid.UUID { return optionalID(u.UpstreamSpaceID) }, spaceEdge.load),
	byID("UpstreamUnitID", func(u unit.Unit) []uuid.UUID { return optionalID(u.UpstreamUnitID) }, loadUnits),
	byID("TargetID", func(u unit.Unit) []uuid.UUID { return optionalID(u.TargetID) }, targetEdge.load),
	byID("ChangeSetID", func(u unit.Unit) []uuid.UUID { return optionalID(u.ChangeSetID) }, changeSetEdge.load),
	byID("HeadRevisionNum", func(u unit.Unit) []uuid.UUID { return optionalID(u.HeadRevisionID) }, loadRevisions),
	byID("FromLinkID", func(u unit.Unit) []uuid.UUID { return u.FromLinkIDs }, linkEdge.load),
	byID("UnitEventID", func(u unit.Unit) []uuid.UUID { return optionalID(u.UnitEventID) }, loadUnitEvents),
	byUnit("HeadMutationNum", func(d *Deps) readByUnits[unit.Mutation] { return d.Units.HeadMutations }, mutationToAPI),
	byUnit("LastReleasedRevisionNum", func(d *Deps) readByUnits[unit.Revision] { return d.Units.LastReleasedRevisions }, revisionToAPI),
}

// readByUnits reads one related entity of each of a page of Units, keyed by UnitID.
type readByUnits[T any] func(ctx context.Context, sc authz.Scope, units []unit.Unit) (map[uuid.UUID]T, error)

// byUnit is the relation include expands by reading one T of each Unit of the page in one query.
func byUnit[T, A any](include string, read func(*Deps) readByUnits[T], toAPI func(T) A) relation[unit.Unit] {
	return relation[unit.Unit]{include: include, load: func(ctx context.Context, h *base, sc authz.Scope, units []unit.Unit) (map[uuid.UUID]any, error) {
		found, err := read(&h.s.deps)(ctx, sc, units)
		if err != nil {
			return nil, err
		}
		out := make(map[uuid.UUID]any, len(found))
		for unitID, v := range found {
			out[unitID] = toAPI(v)
		}
		return out, nil
	}}
}

var (
	loadUnits     = loadBy(func(d *Deps) readByIDs[unit.Unit] { return d.Units.UnitsByID }, unitToAPI)
	loadRevisions = loadBy(func(d *Deps) readByIDs[unit.Revision] { return d.Units.RevisionsByID }, revisionToAPI)
	// A Unit's latest UnitEvent is visible with the Unit, which the caller was shown.
	loadUnitEvents = loadBy(func(d *Deps) readByIDs[unit.UnitEvent] { return d.Units.UnitEventsByID }, unitEventToAPI)
)

// extendUnits builds ExtendedUnits with what include asks for, loading each related family once per page.
func (h unitAPI) extendUnits(ctx context.Context, sc authz.Scope, units []unit.Unit, includes map[string]bool) ([]api.ExtendedUnit, error) {
	return extendAll(ctx, h.base, sc, units, includes, unitRelations, func(u unit.Unit, r *related) api.ExtendedUnit {
		return api.ExtendedUnit{Unit: unitToAPI(u), Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", u.SpaceID),
			UpstreamSpace:        relatedOptional[api.Space](r, "UpstreamSpaceID", u.UpstreamSpaceID),
			UpstreamUnit:         relatedOptional[api.Unit](r, "UpstreamUnitID", u.UpstreamUnitID),
			Target:               relatedOptional[api.Target](r, "TargetID", u.TargetID),
			ChangeSet:            relatedOptional[api.ChangeSet](r, "ChangeSetID", u.ChangeSetID),
			HeadMutation:         relatedOne[api.Mutation](r, "HeadMutationNum", u.ID),
			HeadRevision:         relatedOptional[api.Revision](r, "HeadRevisionNum", u.HeadRevisionID),
			LastReleasedRevision: relatedOne[api.Revision](r, "LastReleasedRevisionNum", u.ID),
			FromLink:             relatedList[api.Link](r, "FromLinkID", u.FromLinkIDs),
			LatestUnitEvent:      relatedOptional[api.UnitEvent](r, "UnitEventID", u.UnitEventID)}
	})
}

func (h unitAPI) GetUnit(ctx context.Context, r api.GetUnitRequestObject) (api.GetUnitResponseObject, error) {
	sc := scopeOf(ctx)
	return got(ctx, sc, unit.ListEntity, r.Params.Select, r.Params.Include, func() (unit.Unit, error) {
		return h.s.deps.Units.Get(ctx, sc, r.SpaceId, r.UnitId)
	}, h.extendUnits)
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
	opts, err := dataWriteOptions(ctx, r.Params.DryRun, r.Params.LastChangeDescription, r.Params.Clearance, r.Params.Protect, r.Params.Guards)
	if err != nil {
		return nil, err
	}
	res, err := h.s.deps.Units.Update(ctx, sc, r.SpaceId, r.UnitId, r.Body.Version, unitFields(r.Body), opts, upgradeOptions(r.Params.Upgrade, r.Params.MergeEnableSubtraction))
	if err != nil {
		return nil, err
	}
	if res.Data == nil && (includes["ConfigData"] || includes["MutationSources"]) {
		if res, err = h.withData(ctx, sc, res.Unit, includes); err != nil {
			return nil, err
		}
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
	opts, err := dataWriteOptions(ctx, r.Params.DryRun, r.Params.LastChangeDescription, r.Params.Clearance, r.Params.Protect, r.Params.Guards)
	if err != nil {
		return nil, err
	}
	restore, err := unit.ParseRestore(deref(r.Params.Restore))
	if err != nil {
		return nil, err
	}
	res, err := h.s.deps.Units.Patch(ctx, sc, r.SpaceId, r.UnitId, patch, restore, opts, upgradeOptions(r.Params.Upgrade, r.Params.MergeEnableSubtraction))
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
