package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/unit"
)

type functionAPI struct{ *base }

func (h functionAPI) ListOrgFunctions(ctx context.Context, r api.ListOrgFunctionsRequestObject) (api.ListOrgFunctionsResponseObject, error) {
	if err := h.checkExecutorSpace(ctx, r.Params.ExecutorSpace); err != nil {
		return nil, err
	}
	sigs, err := signatures(r.Params.Where)
	return api.ListOrgFunctions200JSONResponse{Body: sigs}, err
}

func (h functionAPI) ListFunctions(ctx context.Context, r api.ListFunctionsRequestObject) (api.ListFunctionsResponseObject, error) {
	sc := scopeOf(ctx)
	if _, err := spaceEdge.of(h.base).Get(ctx, sc, uuid.Nil, r.SpaceId.String()); err != nil {
		return nil, err
	}
	sigs, err := signatures(r.Params.Where)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Params.Entity == nil && r.Params.Id != nil:
		return nil, apierr.Validation("id names a worker only with entity=worker", apierr.Item{Item: "entity", Description: "required with id"})
	case r.Params.Entity != nil && r.Params.Id == nil:
		return nil, apierr.Validation("entity=worker needs id, the BridgeWorker's ID", apierr.Item{Item: "id", Description: "required with entity"})
	case r.Params.Entity != nil:
		if _, err := h.s.deps.BridgeWorkers.Get(ctx, sc, r.SpaceId, r.Params.Id.String()); err != nil {
			return nil, err
		}
		// BridgeWorkers report no functions yet: every ToolchainType maps to none.
		for t := range sigs {
			sigs[t] = map[string]api.FunctionSignature{}
		}
	}
	return api.ListFunctions200JSONResponse{Body: sigs}, nil
}

// checkExecutorSpace checks executor_space: a Space (ID or Slug) the caller may view. Every Space's
// executor is the builtin one, so the Space changes nothing else.
func (h functionAPI) checkExecutorSpace(ctx context.Context, ref *string) error {
	if ref == nil || *ref == "" {
		return nil
	}
	_, err := spaceEdge.of(h.base).Get(ctx, scopeOf(ctx), uuid.Nil, *ref)
	if apierr.Is(err, apierr.TypeNotFound) {
		return apierr.Validation(fmt.Sprintf("executor_space: no Space %q in your organization", *ref), apierr.Item{Item: "executor_space", Description: "no such Space"})
	}
	return err
}

func signatures(where *string) (api.FunctionSignatureMap, error) {
	w := ""
	if where != nil {
		w = *where
	}
	sigs, err := function.Signatures(w)
	if err != nil {
		return nil, err
	}
	out := api.FunctionSignatureMap{}
	for t, byName := range sigs {
		out[t] = map[string]api.FunctionSignature{}
		for name, s := range byName {
			out[t][name] = signatureToAPI(s)
		}
	}
	return out, nil
}

func signatureToAPI(s function.Signature) api.FunctionSignature {
	params := parametersToAPI(s.Parameters)
	other := s.OtherDataExpected
	if other == nil {
		other = []string{}
	}
	return api.FunctionSignature{
		FunctionName: s.FunctionName, Description: s.Description, FunctionType: s.FunctionType, ToolchainType: s.ToolchainType,
		AttributeName: s.AttributeName, Parameters: params, RequiredParameters: s.RequiredParameters, VarArgs: s.VarArgs,
		OutputInfo: api.FunctionOutput{ResultName: s.OutputInfo.ResultName, Description: s.OutputInfo.Description,
			OutputType: api.FunctionOutputOutputType(s.OutputInfo.OutputType)},
		Mutating: s.Mutating, Validating: s.Validating, Hermetic: s.Hermetic, Idempotent: s.Idempotent, Replayable: s.Replayable,
		OtherDataExpected: other,
	}
}

func (h functionAPI) InvokeFunctionsOnOrg(ctx context.Context, r api.InvokeFunctionsOnOrgRequestObject) (api.InvokeFunctionsOnOrgResponseObject, error) {
	sel, err := selectionParams(ctx, h.s, r.Params)
	if err != nil {
		return nil, err
	}
	return h.invoke(ctx, nil, sel, r.Params, r.Body)
}

func (h functionAPI) InvokeFunctions(ctx context.Context, r api.InvokeFunctionsRequestObject) (api.InvokeFunctionsResponseObject, error) {
	spaceID := uuid.UUID(r.SpaceId)
	p := api.InvokeFunctionsOnOrgParams(r.Params)
	sel, err := listParams(ctx, h.s, &spaceID, p)
	if err != nil {
		return nil, err
	}
	return h.invoke(ctx, &spaceID, sel, p, r.Body)
}

// invoke runs a request's invocations on the Units sel selects, within the organization's bound of
// running invoke requests.
func (h functionAPI) invoke(ctx context.Context, spaceID *uuid.UUID, sel listquery.Params, p api.InvokeFunctionsOnOrgParams, body *api.FunctionInvocationsRequest) (bulkResponse, error) {
	sc := scopeOf(ctx)
	if err := h.s.deps.Units.CheckInvoker(ctx, sc, spaceID); err != nil {
		return bulkResponse{}, err
	}
	release, ok := h.s.invocations.acquire(sc.OrganizationID.String())
	if !ok {
		return bulkResponse{}, apierr.TooManyRequests("your organization has %d function invoke requests running on this replica, its bound; retry shortly",
			h.s.cfg.MaxInvocationsPerOrganization)
	}
	defer release()
	if err := h.checkExecutorSpace(ctx, p.ExecutorSpace); err != nil {
		return bulkResponse{}, err
	}
	req, err := invokeRequest(ctx, p, body)
	if err != nil {
		return bulkResponse{}, err
	}
	if ref := deref(p.ChangeOrder); ref != "" {
		run, stored, err := h.s.promoter.InvokeChangeOrder(ctx, sc, ref, body.ChangeDescription, req.UserAgent)
		if err != nil {
			return bulkResponse{}, err
		}
		req.ChangeOrder, req.Stored, req.Description = &run, stored.Stored, stored.Description
	} else if req.Stored, err = h.storedCalls(ctx, sc, body); err != nil {
		return bulkResponse{}, err
	}
	items, err := h.s.deps.Units.Invoke(ctx, sc, spaceID, requestPath(ctx), sel, dataFilterOf(p), req)
	if err != nil {
		return bulkResponse{}, err
	}
	return answeredInBulk(bulkItems(items, func(it entity.BulkItem[unit.InvokeResult], e *api.ResponseError) api.FunctionInvocationsResponse {
		return invokeResultToAPI(sc, it, e, req.DryRun)
	}))
}

// invokeRequest reads an invoke request's parameters and body into the domain's terms.
func invokeRequest(ctx context.Context, p api.InvokeFunctionsOnOrgParams, body *api.FunctionInvocationsRequest) (unit.InvokeRequest, error) {
	if body == nil {
		return unit.InvokeRequest{}, apierr.UserInput("a FunctionInvocationsRequest body is required")
	}
	if p.ChangeOrder != nil && *p.ChangeOrder != "" && (len(body.FunctionInvocations) > 0 || len(body.Invocations) > 0 ||
		len(body.ParameterizedInvocations) > 0 || len(body.Triggers) > 0) {
		return unit.InvokeRequest{}, apierr.Validation("with change_order what runs is the ChangeOrder's Invocation: the body may not carry FunctionInvocations, Invocations, ParameterizedInvocations or Triggers",
			apierr.Item{Item: "change_order", Description: "the body names functions"})
	}
	if p.OtherDataSource != nil {
		for _, src := range *p.OtherDataSource {
			switch strings.TrimPrefix(src, "Before:") {
			case "HeadRevisionNum", "LastReleasedRevisionNum":
			default:
				return unit.InvokeRequest{}, apierr.Validation(fmt.Sprintf("other_data_source %q is not HeadRevisionNum or LastReleasedRevisionNum (optionally prefixed Before:)", src),
					apierr.Item{Item: "other_data_source", Description: "unknown source"})
			}
		}
	}
	req := unit.InvokeRequest{ToolchainType: body.ToolchainType, DryRun: deref(p.DryRun) == "true", Protect: flag(p.Protect),
		ChangeSetID: p.ChangeSetId, Subgroup: deref(p.Subgroup), UserAgent: userAgent(ctx)}
	if body.ChangeDescription != "" {
		req.Description = &body.ChangeDescription
	}
	var err error
	if req.Clearance, err = jsonParam[[]function.Requirement]("clearance", deref(p.Clearance)); err != nil {
		return req, err
	}
	if req.Guards, err = jsonParam[map[string]string]("guards", deref(p.Guards)); err != nil {
		return req, err
	}
	req.Invocations = functionInvocationsFromAPI(body.FunctionInvocations)
	return req, nil
}

func parametersToAPI(ps []function.Parameter) []api.FunctionParameter {
	out := make([]api.FunctionParameter, len(ps))
	for i, p := range ps {
		enum := p.EnumValues
		if enum == nil {
			enum = []string{}
		}
		out[i] = api.FunctionParameter{ParameterName: p.ParameterName, Description: p.Description, DataType: api.FunctionParameterDataType(p.DataType),
			Required: p.Required, Example: p.Example, EnumValues: enum, Regexp: p.Regexp, Min: p.Min, Max: p.Max}
	}
	return out
}

func parametersFromAPI(ps []api.FunctionParameter) []function.Parameter {
	out := make([]function.Parameter, len(ps))
	for i, p := range ps {
		out[i] = function.Parameter{ParameterName: p.ParameterName, Description: p.Description, DataType: string(p.DataType),
			Required: p.Required, Example: p.Example, EnumValues: p.EnumValues, Regexp: p.Regexp, Min: p.Min, Max: p.Max}
	}
	return out
}

func argumentsToAPI(as []function.Argument) []api.FunctionArgument {
	out := make([]api.FunctionArgument, len(as))
	for i, a := range as {
		out[i] = api.FunctionArgument{ParameterName: a.ParameterName, Value: a.Value}
	}
	return out
}

func argumentsFromAPI(as []api.FunctionArgument) []function.Argument {
	out := make([]function.Argument, len(as))
	for i, a := range as {
		out[i] = function.Argument{ParameterName: a.ParameterName, Value: a.Value}
	}
	return out
}

func functionInvocationsToAPI(invs []function.Invocation) []api.FunctionInvocation {
	out := make([]api.FunctionInvocation, len(invs))
	for i, inv := range invs {
		guards := inv.Guards
		if guards == nil {
			guards = map[string]string{}
		}
		out[i] = api.FunctionInvocation{FunctionName: inv.FunctionName, Arguments: argumentsToAPI(inv.Arguments),
			WhereResource: inv.WhereResource, Guards: guards, Clearance: clearanceToAPI(inv.Clearance)}
	}
	return out
}

func functionInvocationsFromAPI(invs []api.FunctionInvocation) []function.Invocation {
	out := make([]function.Invocation, len(invs))
	for i, inv := range invs {
		out[i] = function.Invocation{FunctionName: inv.FunctionName, Arguments: argumentsFromAPI(inv.Arguments),
			WhereResource: inv.WhereResource, Guards: inv.Guards, Clearance: clearanceFromAPI(inv.Clearance)}
	}
	return out
}

// storedCalls resolves what an invoke body names by reference: its Invocations (without parameter
// values), ParameterizedInvocations and Triggers, each of the caller's organization and visible to it
// (else 400 naming it), in that order.
func (h functionAPI) storedCalls(ctx context.Context, sc authz.Scope, body *api.FunctionInvocationsRequest) ([]unit.StoredCalls, error) {
	type ref struct {
		field  string
		id     uuid.UUID
		params map[string]any
	}
	// Each reference runs at least one invocation: more than the request may run is refused before any is read.
	if len(body.Invocations)+len(body.ParameterizedInvocations)+len(body.Triggers) > unit.MaxInvocations {
		return nil, apierr.Validation(fmt.Sprintf("the request runs more than %d invocations (its own and those it names)", unit.MaxInvocations),
			apierr.Item{Item: "FunctionInvocations", Description: "too many"})
	}
	var invRefs []ref
	for i, id := range body.Invocations {
		invRefs = append(invRefs, ref{field: fmt.Sprintf("Invocations.%d", i), id: id})
	}
	for i, p := range body.ParameterizedInvocations {
		invRefs = append(invRefs, ref{field: fmt.Sprintf("ParameterizedInvocations.%d", i), id: p.InvocationID, params: p.Parameters})
	}
	triggerIDs := make([]uuid.UUID, len(body.Triggers))
	copy(triggerIDs, body.Triggers)
	triggers, err := triggerEdge.of(h.base).LoadByIDs(ctx, sc, triggerIDs)
	if err != nil {
		return nil, err
	}
	invIDs := make([]uuid.UUID, 0, len(invRefs)+len(triggers))
	for _, r := range invRefs {
		invIDs = append(invIDs, r.id)
	}
	for _, t := range triggers {
		if t.InvocationID != nil {
			invIDs = append(invIDs, *t.InvocationID)
		}
	}
	invocations, err := invocationEdge.of(h.base).LoadByIDs(ctx, sc, invIDs)
	if err != nil {
		return nil, err
	}
	// The expansions of one request share the bound on what templates may expand to.
	budget := function.NewBudget()
	var out []unit.StoredCalls
	for _, r := range invRefs {
		inv, ok := invocations[r.id]
		if !ok {
			return nil, apierr.Validation(fmt.Sprintf("%s: no Invocation %s in your organization", r.field, r.id), apierr.Item{Item: r.field, Description: "no such Invocation"})
		}
		calls, err := inv.Expand(r.params, r.field+".Parameters", budget)
		if err != nil {
			return nil, err
		}
		id := inv.ID
		out = append(out, unit.StoredCalls{Field: r.field, ToolchainType: inv.ToolchainType, Calls: calls,
			Origin: unit.Origin{InvocationID: &id, Params: r.params}})
	}
	for i, id := range body.Triggers {
		field := fmt.Sprintf("Triggers.%d", i)
		t, ok := triggers[id]
		if !ok {
			return nil, apierr.Validation(fmt.Sprintf("%s: no Trigger %s in your organization", field, id), apierr.Item{Item: field, Description: "no such Trigger"})
		}
		run := unit.TriggerRun{TriggerID: t.ID, Call: function.Invocation{FunctionName: t.FunctionName, Arguments: t.Arguments, WhereResource: t.WhereResource},
			Params: t.Params, Guards: t.Guards, Clearance: t.Clearance}
		if t.InvocationID != nil {
			inv, ok := invocations[*t.InvocationID]
			if !ok {
				return nil, apierr.Validation(fmt.Sprintf("%s: you may not view the Invocation %s the Trigger runs", field, *t.InvocationID),
					apierr.Item{Item: field, Description: "Invocation not visible"})
			}
			run.Invocation = &unit.StoredInvocation{ID: inv.ID, FunctionInvocations: inv.FunctionInvocations, Parameters: inv.Parameters}
		}
		calls, origin, err := run.Invocations(field+".Params", budget)
		if err != nil {
			return nil, err
		}
		out = append(out, unit.StoredCalls{Field: field, ToolchainType: t.ToolchainType, Calls: calls, Origin: origin})
	}
	return out, nil
}

// jsonParam decodes a query parameter whose value is JSON (clearance, guards), naming it when it is not
// JSON of the shape.
func jsonParam[T any](name, raw string) (T, error) {
	var v T
	if strings.TrimSpace(raw) == "" {
		return v, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, apierr.Validation(fmt.Sprintf("%s is not JSON of its shape: %s", name, err.Error()), apierr.Item{Item: name, Description: "not valid JSON of its shape"})
	}
	return v, nil
}

func invokeResultToAPI(sc authz.Scope, it entity.BulkItem[unit.InvokeResult], e *api.ResponseError, dryRun bool) api.FunctionInvocationsResponse {
	res := it.Value
	out := api.FunctionInvocationsResponse{UnitID: it.Ref.ID, UnitSlug: it.Ref.Slug, SpaceID: it.Ref.SpaceID, OrganizationID: sc.OrganizationID,
		SpaceSlug: res.SpaceSlug, Mutators: []int{}, Outputs: map[string][]byte{}, Conflicts: []api.MutationConflict{}, Mutations: []api.MutationSource{}, Error: e}
	if e != nil {
		return out
	}
	u := res.Unit
	out.TargetID, out.RevisionID, out.DataHash = u.TargetID, u.HeadRevisionID, u.DataHash
	out.Success, out.HasNewMutations, out.Mutators, out.Outputs = res.Passed, res.Changed, res.Mutators, res.Outputs
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, conflictToAPI(u.ID, c))
	}
	out.Mutations = sourcesToAPI(res.Mutations).Sources
	if dryRun {
		data := string(res.Data)
		out.ConfigData = &data
	}
	return out
}
