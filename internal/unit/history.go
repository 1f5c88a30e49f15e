package unit

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// Revision is an immutable version of a Unit's data.
type Revision struct {
	ID             uuid.UUID
	RevisionNum    int64
	UnitID         uuid.UUID
	SpaceID        uuid.UUID
	OrganizationID uuid.UUID
	Description    string
	Source         string
	UserID         uuid.UUID
	UserAgent      string
	ChangeSetID    *uuid.UUID
	DataHash       string
	DataSize       int64
	// Tags are the TagIDs on the Revision (to when they were put on).
	Tags map[string]string
	// Findings are what the Triggers found on this Revision's data.
	Findings
	// Conflicts are those the merge that made the Revision found; LinkFindings what the Link that made it found.
	Conflicts    []Conflict
	LinkFindings []LinkFinding
	HiddenReason string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func revisionFromRow(r *db.Revision) (Revision, error) {
	tags, err := store.DecodeJSON[map[string]string](r.Tags)
	if err != nil {
		return Revision{}, err
	}
	if tags == nil {
		tags = map[string]string{}
	}
	findings, err := decodeFindings(r.ValidationErrors, r.ValidationWarnings, r.ValidationPassed, r.ValidationTriggerIds, r.ValueTriggerIds)
	if err != nil {
		return Revision{}, err
	}
	conflicts, err := decodeConflicts(r.Conflicts)
	if err != nil {
		return Revision{}, err
	}
	linkFindings, err := store.DecodeJSON[[]LinkFinding](r.LinkFindings)
	if err != nil {
		return Revision{}, err
	}
	return Revision{Tags: tags, Findings: findings, Conflicts: conflicts, LinkFindings: linkFindings,
		ID: r.RevisionID, RevisionNum: r.RevisionNum, UnitID: r.UnitID, SpaceID: r.SpaceID, OrganizationID: r.OrganizationID,
		Description: r.Description, Source: r.Source, UserID: r.UserID, UserAgent: r.UserAgent, ChangeSetID: r.ChangeSetID,
		DataHash: r.DataHash, DataSize: r.DataSize, HiddenReason: r.HiddenReason, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}, nil
}

// Mutation is one source of change of a Revision.
type Mutation struct {
	ID                   uuid.UUID
	MutationNum          int64
	RevisionID           uuid.UUID
	RevisionNum          int64
	UnitID               uuid.UUID
	SpaceID              uuid.UUID
	OrganizationID       uuid.UUID
	FunctionInvocation   json.RawMessage
	InvocationParams     map[string]any
	RestoredRevisionNum  int64
	MergeBaseRevisionNum int64
	MergeEndRevisionNum  int64
	MergeSourceID        *uuid.UUID
	LinkID               *uuid.UUID
	TriggerID            *uuid.UUID
	InvocationID         *uuid.UUID
	BridgeWorkerID       *uuid.UUID
	Subgroup             string
	ReplayOutcome        string
	ReplayReason         string
	HiddenReason         string
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

func mutationFromRow(r *db.Mutation) (Mutation, error) {
	params, err := store.DecodeJSON[map[string]any](r.InvocationParams)
	if params == nil {
		params = map[string]any{}
	}
	return Mutation{
		ID: r.MutationID, MutationNum: r.MutationNum, RevisionID: r.RevisionID, RevisionNum: r.RevisionNum,
		UnitID: r.UnitID, SpaceID: r.SpaceID, OrganizationID: r.OrganizationID, FunctionInvocation: r.FunctionInvocation,
		InvocationParams: params, RestoredRevisionNum: r.RestoredRevisionNum, MergeBaseRevisionNum: r.MergeBaseRevisionNum,
		MergeEndRevisionNum: r.MergeEndRevisionNum, MergeSourceID: r.MergeSourceID, LinkID: r.LinkID, TriggerID: r.TriggerID,
		InvocationID: r.InvocationID, BridgeWorkerID: r.BridgeWorkerID, Subgroup: r.Subgroup, ReplayOutcome: r.ReplayOutcome,
		ReplayReason: r.ReplayReason, HiddenReason: r.HiddenReason, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}, err
}

// DataFilter narrows Unit lists by their head configuration.
type DataFilter struct {
	WhereData    string
	ResourceType string
}

// List returns a page of Units (of one Space when spaceID is set) the caller may view (the list's SQL
// keeps to them).
func (s *Service) List(ctx context.Context, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params, df DataFilter) (listquery.Page[Unit], error) {
	q, err := listQuery(ctx, s.Store.Q(), sc, spaceID, path, params, df)
	if err != nil {
		return listquery.Page[Unit]{}, err
	}
	page, err := listquery.Run[db.Unit](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[Unit]{}, err
	}
	out, err := listquery.MapPage(page, fromRow)
	if err != nil {
		return out, err
	}
	return out, enrichLinks(ctx, s.Store.Q(), out.Items)
}

// listQuery is the list query of Units: of one Space when spaceID is set (a Space the caller may view),
// with df's condition on the data.
func listQuery(ctx context.Context, dbq *db.Queries, sc authz.Scope, spaceID *uuid.UUID, path string, params listquery.Params, df DataFilter) (listquery.Query, error) {
	q := listquery.Query{Entity: ListEntity, Caller: sc, Path: path, Params: params}
	if spaceID != nil {
		if _, _, err := space.VisibleParent(ctx, sc, dbq, *spaceID); err != nil {
			return q, err
		}
		q.Scope = []listquery.Condition{{Column: "unit.space_id", Value: *spaceID}}
	}
	cond, err := listquery.DataCondition(ListEntity.DataColumn, df.WhereData, df.ResourceType)
	if err != nil {
		return q, err
	}
	if cond != nil {
		q.Extra = append(q.Extra, cond)
		// The data filter is part of the query a continue token resumes.
		q.Path += "?" + url.Values{"where_data": {df.WhereData}, "resource_type": {df.ResourceType}}.Encode()
	}
	return q, nil
}

// ListRevisions returns a page of one Unit's Revisions.
func (s *Service) ListRevisions(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, path string, params listquery.Params) (listquery.Page[Revision], error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return listquery.Page[Revision]{}, err
	}
	if params.OrderBy == "" {
		params.OrderBy = "RevisionNum"
	}
	page, err := listquery.Run[db.Revision](ctx, s.Store.Pool, s.Tokens, listquery.Query{
		Entity: RevisionList, Caller: sc, Path: path, Params: params,
		Scope: []listquery.Condition{{Column: "revision.unit_id", Value: unitID}},
	})
	if err != nil {
		return listquery.Page[Revision]{}, err
	}
	return listquery.MapPage(page, revisionFromRow)
}

// ListAllRevisions lists Revisions across the organization: the latest matching one of each Unit, or
// with all (distinct_on=Off, which needs limit) every one. Revisions of Units the caller may not view
// are left out.
func (s *Service) ListAllRevisions(ctx context.Context, sc authz.Scope, path string, params listquery.Params, all bool) (listquery.Page[Revision], error) {
	if all && params.Limit == nil {
		return listquery.Page[Revision]{}, apierr.UserInput("distinct_on=Off returns every Revision and needs an explicit limit",
			apierr.Item{Item: "distinct_on", Description: "Off requires limit"})
	}
	q := listquery.Query{Entity: RevisionList, Caller: sc, Path: path, Params: params}
	if !all {
		q.Distinct = &listquery.Distinct{Partition: "revision.unit_id", Latest: "revision.revision_num"}
		q.Path += "?distinct_on=Unit"
	}
	page, err := listquery.Run[db.Revision](ctx, s.Store.Pool, s.Tokens, q)
	if err != nil {
		return listquery.Page[Revision]{}, err
	}
	return listquery.MapPage(page, revisionFromRow)
}

// UnitsByID loads Units the caller may view, by ID (for include expansions).
func (s *Service) UnitsByID(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]Unit, error) {
	return s.kit.LoadByIDs(ctx, sc, ids)
}

// RevisionsByID loads Revisions the caller may view by ID (for include=HeadRevisionNum).
func (s *Service) RevisionsByID(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID]Revision, error) {
	out := map[uuid.UUID]Revision{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.Store.Q().RevisionListByIDs(ctx, db.RevisionListByIDsParams{OrganizationID: sc.OrganizationID, RevisionIDs: ids})
	if err != nil {
		return nil, err
	}
	var unitIDs []uuid.UUID
	for _, r := range rows {
		rev, _ := revisionFromRow(r)
		out[rev.ID] = rev
		unitIDs = append(unitIDs, rev.UnitID)
	}
	if sc.ByRole(authz.View) {
		return out, nil
	}
	// A Revision is visible with its Unit.
	units, err := s.UnitsByID(ctx, sc, unitIDs)
	if err != nil {
		return nil, err
	}
	for id, rev := range out {
		if _, ok := units[rev.UnitID]; !ok {
			delete(out, id)
		}
	}
	return out, nil
}

// GetRevision returns one Revision of a Unit.
func (s *Service) GetRevision(ctx context.Context, sc authz.Scope, spaceID, unitID, revisionID uuid.UUID) (Revision, error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return Revision{}, err
	}
	row, err := s.Store.Q().RevisionGet(ctx, db.RevisionGetParams{OrganizationID: sc.OrganizationID, UnitID: unitID, RevisionID: revisionID})
	if err != nil {
		return Revision{}, apierr.NotFoundAs(err, RevisionEntityType, revisionID.String())
	}
	return revisionFromRow(row)
}

// RevisionData returns a Revision's data, hash and the Unit's ToolchainType.
func (s *Service) RevisionData(ctx context.Context, sc authz.Scope, spaceID, unitID, revisionID uuid.UUID) ([]byte, string, string, error) {
	u, err := s.Get(ctx, sc, spaceID, unitID)
	if err != nil {
		return nil, "", "", err
	}
	rev, err := s.GetRevision(ctx, sc, spaceID, unitID, revisionID)
	if err != nil {
		return nil, "", "", err
	}
	data, err := s.contents.get(ctx, s.Store.Q(), rev.DataHash)
	if err != nil {
		return nil, "", "", err
	}
	return data, rev.DataHash, u.ToolchainType, nil
}

// RevisionSources returns a Revision's mutation sources.
func (s *Service) RevisionSources(ctx context.Context, sc authz.Scope, spaceID, unitID, revisionID uuid.UUID) ([]Source, error) {
	if _, err := s.GetRevision(ctx, sc, spaceID, unitID, revisionID); err != nil {
		return nil, err
	}
	row, err := s.Store.Q().RevisionGet(ctx, db.RevisionGetParams{OrganizationID: sc.OrganizationID, UnitID: unitID, RevisionID: revisionID})
	if err != nil {
		return nil, err
	}
	return store.DecodeJSON[[]Source](row.MutationSources)
}

// ListMutations returns a page of one Unit's Mutations (MutationNum order unless order_by says otherwise).
func (s *Service) ListMutations(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, path string, params listquery.Params) (listquery.Page[Mutation], error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return listquery.Page[Mutation]{}, err
	}
	if params.OrderBy == "" {
		params.OrderBy = "MutationNum"
	}
	page, err := listquery.Run[db.Mutation](ctx, s.Store.Pool, s.Tokens, listquery.Query{
		Entity: MutationList, Caller: sc, Path: path, Params: params,
		Scope: []listquery.Condition{{Column: "mutation.unit_id", Value: unitID}},
	})
	if err != nil {
		return listquery.Page[Mutation]{}, err
	}
	return listquery.MapPage(page, mutationFromRow)
}

// HeadMutations returns the latest Mutation of each of units that has one, keyed by UnitID, in one query.
// The caller read the Units, and a Mutation is visible with its Unit.
func (s *Service) HeadMutations(ctx context.Context, sc authz.Scope, units []Unit) (map[uuid.UUID]Mutation, error) {
	out := map[uuid.UUID]Mutation{}
	var params db.MutationListByUnitNumsParams
	for _, u := range units {
		if u.HeadMutationNum > 0 {
			params.UnitIds = append(params.UnitIds, u.ID)
			params.Nums = append(params.Nums, u.HeadMutationNum)
		}
	}
	if len(params.UnitIds) == 0 {
		return out, nil
	}
	params.OrganizationID = sc.OrganizationID
	rows, err := s.Store.Q().MutationListByUnitNums(ctx, params)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		m, err := mutationFromRow(row)
		if err != nil {
			return nil, err
		}
		out[m.UnitID] = m
	}
	return out, nil
}

// LastReleasedRevisions returns the Revision each of units was last released at, keyed by UnitID, in one
// query. The caller read the Units, and a Revision is visible with its Unit.
func (s *Service) LastReleasedRevisions(ctx context.Context, sc authz.Scope, units []Unit) (map[uuid.UUID]Revision, error) {
	return revisionsAt(ctx, s.Store.Q(), sc.OrganizationID, units, func(u Unit) int64 { return u.LastReleasedRevisionNum })
}

// revisionsAt reads, in one query, the Revision numbered num(u) of each Unit (0: none), by Unit.
func revisionsAt(ctx context.Context, q *db.Queries, orgID uuid.UUID, units []Unit, num func(Unit) int64) (map[uuid.UUID]Revision, error) {
	out := map[uuid.UUID]Revision{}
	params := db.RevisionListByUnitNumsParams{OrganizationID: orgID}
	for _, u := range units {
		if n := num(u); n > 0 {
			params.UnitIds = append(params.UnitIds, u.ID)
			params.Nums = append(params.Nums, n)
		}
	}
	if len(params.UnitIds) == 0 {
		return out, nil
	}
	rows, err := q.RevisionListByUnitNums(ctx, params)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		rev, err := revisionFromRow(row)
		if err != nil {
			return nil, err
		}
		out[rev.UnitID] = rev
	}
	return out, nil
}

// GetMutation returns one Mutation of a Unit.
func (s *Service) GetMutation(ctx context.Context, sc authz.Scope, spaceID, unitID, mutationID uuid.UUID) (Mutation, error) {
	if _, err := s.Get(ctx, sc, spaceID, unitID); err != nil {
		return Mutation{}, err
	}
	row, err := s.Store.Q().MutationGet(ctx, db.MutationGetParams{OrganizationID: sc.OrganizationID, UnitID: unitID, MutationID: mutationID})
	if err != nil {
		return Mutation{}, apierr.NotFoundAs(err, MutationEntityType, mutationID.String())
	}
	return mutationFromRow(row)
}
