package httpapi

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/unit"
)

func unitToAPI(u unit.Unit) api.Unit {
	return api.Unit{
		UnitID: u.ID, SpaceID: u.SpaceID, OrganizationID: u.OrganizationID, Slug: u.Slug, DisplayName: u.DisplayName,
		Labels: u.Labels, Annotations: u.Annotations, DeleteGates: u.DeleteGates, DestroyGates: u.DestroyGates,
		Permissions: permissionsToAPI(u.Permissions), ToolchainType: api.ToolchainType(u.ToolchainType), ProviderType: u.ProviderType,
		TargetID: u.TargetID, ChangeSetID: u.ChangeSetID, LastChangeDescription: u.LastChangeDescription,
		DataHash: u.DataHash, DataSize: u.DataSize, HeadRevisionID: u.HeadRevisionID, HeadRevisionNum: u.HeadRevisionNum,
		HeadMutationNum: u.HeadMutationNum, HeadUnitActionNum: u.HeadUnitActionNum, HeadUnitEventNum: u.HeadUnitEventNum,
		LastReleasedRevisionNum: u.LastReleasedRevisionNum, UnitEventID: u.UnitEventID, UpstreamUnitID: u.UpstreamUnitID,
		UpstreamSpaceID: u.UpstreamSpaceID, UpstreamRevisionNum: u.UpstreamRevisionNum,
		ApplyGates: u.ApplyGates, ApplyWarnings: u.ApplyWarnings, ValidationErrors: u.ValidationErrors,
		ValidationWarnings: u.ValidationWarnings, ValidationTriggerIDs: u.ValidationTriggerIDs, ValueTriggerIDs: u.ValueTriggerIDs,
		FromLinkID: fromLinkIDs(u), Values: map[string]string{}, Conflicts: conflictsToAPI(u.ID, u.Conflicts),
		PathAnnotations: pathAnnotationsToAPI(u.PathAnnotations), LinkFindings: linkFindingsToAPI(u.LinkFindings), NeededPaths: neededPathsToAPI(u.LinkFindings), ProvidedPaths: providedPathsToAPI(u.ProvidedPaths),
		HiddenReason: u.HiddenReason, EntityType: unit.EntityType,
		CreatedAt: u.CreatedAt.UTC(), UpdatedAt: u.UpdatedAt.UTC(), Version: u.Version,
	}
}

func unitFields(b *api.Unit) unit.Fields {
	return unit.Fields{
		Common: entity.Common{Slug: b.Slug, DisplayName: b.DisplayName, Permissions: permissionsFromAPI(b.Permissions),
			Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		ToolchainType: string(b.ToolchainType), ProviderType: b.ProviderType, TargetID: b.TargetID, ChangeSetID: b.ChangeSetID,
		LastChangeDescription: b.LastChangeDescription, DestroyGates: b.DestroyGates,
	}
}

func revisionToAPI(r unit.Revision) api.Revision {
	return api.Revision{
		RevisionID: r.ID, RevisionNum: r.RevisionNum, UnitID: r.UnitID, SpaceID: r.SpaceID, OrganizationID: r.OrganizationID,
		Description: r.Description, Source: r.Source, UserID: r.UserID, UserAgent: r.UserAgent, ChangeSetID: r.ChangeSetID,
		DataHash: r.DataHash, DataSize: r.DataSize, Tags: r.Tags, Attestations: []map[string]interface{}{},
		ChangeOrders: map[string]string{}, Releases: map[string]string{}, ApplyGates: r.ValidationErrors,
		ApplyWarnings: r.ValidationWarnings, ValidationErrors: r.ValidationErrors, ValidationWarnings: r.ValidationWarnings,
		ValidationPassed: r.ValidationPassed, ValidationTriggerIDs: r.ValidationTriggerIDs, ValueTriggerIDs: r.ValueTriggerIDs,
		Values: map[string]string{}, Conflicts: conflictsToAPI(r.UnitID, r.Conflicts), LinkFindings: linkFindingsToAPI(r.LinkFindings),
		NeededPaths: neededPathsToAPI(r.LinkFindings), ProvidedPaths: []api.ProvidedPath{},
		HiddenReason: r.HiddenReason, EntityType: unit.RevisionEntityType, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
}

// conflictsToAPI are a Unit's (or Revision's) conflicts as served: UnitID names the Unit (those stored
// before it was recorded lack it), Guards is an object.
func conflictsToAPI(unitID uuid.UUID, cs []unit.Conflict) []api.MutationConflict {
	out := make([]api.MutationConflict, len(cs))
	for i, c := range cs {
		out[i] = conflictToAPI(unitID, c)
	}
	return out
}

func conflictToAPI(unitID uuid.UUID, c unit.Conflict) api.MutationConflict {
	guards := c.Guards
	if guards == nil {
		guards = map[string]string{}
	}
	return api.MutationConflict{UnitID: unitID, ResourceType: c.ResourceType, ResourceName: c.ResourceName, Path: c.Path,
		Reason: api.MutationConflictReason(c.Reason), Details: c.Details, Guards: guards, MergeSourceID: c.MergeSourceID, LinkID: c.LinkID,
		MergeEndRevisionNum: c.MergeEndRevisionNum, BaseValue: c.BaseValue, UpstreamValue: c.UpstreamValue, LocalValue: c.LocalValue}
}

func mutationToAPI(m unit.Mutation) api.Mutation {
	var fi *api.FunctionInvocation
	if len(m.FunctionInvocation) > 0 && string(m.FunctionInvocation) != "null" {
		// Lists and maps the stored invocation lacks are present and empty, as every field is.
		var v api.FunctionInvocation
		_ = json.Unmarshal([]byte(`{"Arguments":[],"Clearance":[],"Guards":{}}`), &v)
		if json.Unmarshal(m.FunctionInvocation, &v) == nil {
			fi = &v
		}
	}
	return api.Mutation{
		MutationID: m.ID, MutationNum: m.MutationNum, RevisionID: m.RevisionID, RevisionNum: m.RevisionNum, UnitID: m.UnitID,
		SpaceID: m.SpaceID, OrganizationID: m.OrganizationID, FunctionInvocation: fi, InvocationParams: m.InvocationParams,
		RestoredRevisionNum: m.RestoredRevisionNum, MergeBaseRevisionNum: m.MergeBaseRevisionNum,
		MergeEndRevisionNum: m.MergeEndRevisionNum, MergeSourceID: m.MergeSourceID, LinkID: m.LinkID, TriggerID: m.TriggerID,
		InvocationID: m.InvocationID, BridgeWorkerID: m.BridgeWorkerID, Subgroup: m.Subgroup, ReplayOutcome: m.ReplayOutcome,
		ReplayReason: m.ReplayReason, HiddenReason: m.HiddenReason, EntityType: unit.MutationEntityType,
		CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC(),
	}
}

func sourcesToAPI(sources []unit.Source) api.MutationSourcesResponse {
	out := make([]api.MutationSource, len(sources))
	for i, s := range sources {
		guards := s.Guards
		if guards == nil {
			guards = map[string]string{}
		}
		out[i] = api.MutationSource{ResourceType: s.ResourceType, ResourceName: s.ResourceName, Path: s.Path,
			MutationNum: s.MutationNum, RevisionNum: s.RevisionNum, Guards: guards, Protected: s.Protected}
	}
	return api.MutationSourcesResponse{Sources: out}
}

// fromLinkIDs is the Unit's FromLinkID: [] where it was read without its Links.
func fromLinkIDs(u unit.Unit) []uuid.UUID {
	if u.FromLinkIDs == nil {
		return []uuid.UUID{}
	}
	return u.FromLinkIDs
}

func linkFindingsToAPI(fs []unit.LinkFinding) []api.LinkFinding {
	out := make([]api.LinkFinding, len(fs))
	for i, f := range fs {
		out[i] = api.LinkFinding{LinkID: f.LinkID, Name: f.Name, UpstreamPath: namedPathToAPI(f.UpstreamPath),
			DownstreamPath: pathExpressionToAPI(f.DownstreamPath), Status: api.LinkFindingStatus(f.Status), Value: f.Value, Details: f.Details}
	}
	return out
}

// neededPathsToAPI: the paths Links write into a Unit are the DownstreamPaths their last writes found.
func neededPathsToAPI(fs []unit.LinkFinding) []api.NeededPath {
	out := make([]api.NeededPath, len(fs))
	for i, f := range fs {
		p := f.DownstreamPath
		out[i] = api.NeededPath{LinkID: f.LinkID, Name: p.Name, ResourceType: p.ResourceType, ResourceName: p.ResourceName,
			Path: p.Path, Required: p.Required, Satisfied: f.Satisfied()}
	}
	return out
}

func providedPathsToAPI(ps []unit.ProvidedPath) []api.ProvidedPath {
	out := make([]api.ProvidedPath, len(ps))
	for i, p := range ps {
		out[i] = api.ProvidedPath{LinkID: p.LinkID, FromUnitID: p.FromUnitID, Name: p.Name, ResourceType: p.ResourceType, Path: p.Path}
	}
	return out
}
