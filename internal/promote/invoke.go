package promote

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/invocation"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// invokeRequest is what an Invoke ChangeOrder runs on each Unit it reaches: its Invocation, filled with
// its Parameters.
func (e *Engine) invokeRequest(ctx context.Context, sc authz.Scope, c store.Conn, co *changeorder.ChangeOrder, desc, userAgent string) (unit.InvokeRequest, error) {
	if co.InvocationID == nil {
		return unit.InvokeRequest{}, apierr.Validation("the ChangeOrder's UpdateType is Invoke but it names no InvocationID",
			apierr.Item{Item: "InvocationID", Description: "required"})
	}
	invs, err := invocation.Family.Visible(ctx, c, sc, []uuid.UUID{*co.InvocationID})
	if err != nil {
		return unit.InvokeRequest{}, err
	}
	inv, ok := invs[*co.InvocationID]
	if !ok {
		return unit.InvokeRequest{}, apierr.Validation(fmt.Sprintf("the ChangeOrder's Invocation %s does not exist or you may not view it", co.InvocationID),
			apierr.Item{Item: "InvocationID", Description: "no such Invocation"})
	}
	calls, err := inv.Expand(co.Parameters, "Parameters", function.NewBudget())
	if err != nil {
		return unit.InvokeRequest{}, err
	}
	id := inv.ID
	return unit.InvokeRequest{Description: &desc, UserAgent: userAgent,
		Stored: []unit.StoredCalls{{Field: "InvocationID", ToolchainType: inv.ToolchainType, Calls: calls,
			Origin: unit.Origin{InvocationID: &id, Params: co.Parameters}}}}, nil
}

// InvokeChangeOrder prepares function invoke's change_order: the ChangeOrder (UpdateType Invoke, one the
// caller may view, not Aborted or Restored), its Invocation as the request's calls, and which Units it
// covers and has not yet reached, so the invoke runs on those only and Tags them.
func (e *Engine) InvokeChangeOrder(ctx context.Context, sc authz.Scope, ref string, desc, userAgent string) (unit.ChangeOrderRun, unit.InvokeRequest, error) {
	var run unit.ChangeOrderRun
	var req unit.InvokeRequest
	err := e.Store.WithTx(ctx, store.TxOptions{DryRun: true}, func(tx *store.Tx) error {
		id, err := uuid.Parse(ref)
		if err != nil {
			return apierr.Validation(fmt.Sprintf("change_order %q is not a ChangeOrder's ID", ref), apierr.Item{Item: "change_order", Description: "not an ID"})
		}
		co, err := changeorder.LockForPromote(ctx, sc, tx, id)
		if apierr.Is(err, apierr.TypeNotFound) {
			return apierr.Validation(fmt.Sprintf("change_order: no ChangeOrder %s in your organization", ref), apierr.Item{Item: "change_order", Description: "no such ChangeOrder"})
		}
		if err != nil {
			return err
		}
		if co.UpdateType != changeorder.Invoke {
			return apierr.Validation(fmt.Sprintf("change_order: the ChangeOrder's UpdateType is %s, not Invoke", co.UpdateType),
				apierr.Item{Item: "change_order", Description: "not an Invoke ChangeOrder"})
		}
		switch co.State {
		case changeorder.Aborted, changeorder.Restored, changeorder.RestoreReleased:
			return apierr.Conflict("the ChangeOrder is %s: it cannot be promoted", co.State).WithEntity(changeorder.EntityType, co.ID.String(), co.Slug)
		}
		if desc == "" {
			desc = "Promoted ChangeOrder " + co.Slug
		}
		if req, err = e.invokeRequest(ctx, sc, tx, &co, desc, userAgent); err != nil {
			return err
		}
		sel, err := e.unitSelection(ctx, sc, &co)
		if err != nil {
			return err
		}
		wheres, filters, inScope, err := e.scopeOf(ctx, sc, &co)
		if err != nil {
			return err
		}
		run = unit.ChangeOrderRun{ChangeOrderID: co.ID, Covered: sel, StartTagID: co.StartTagID, EndTagID: co.EndTagID}
		if len(inScope) > 0 || filters != nil || wheres[0] != "" {
			spaces, err := e.spacesOf(ctx, sc, tx, wheres, filters, inScope)
			if err != nil {
				return err
			}
			run.SpaceIDs = []uuid.UUID{}
			for _, s := range spaces {
				run.SpaceIDs = append(run.SpaceIDs, s.SpaceID)
			}
		}
		return nil
	})
	return run, req, err
}

func jsonMap(raw []byte) map[string]any {
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return out
}

func uuidOrNil(id *uuid.UUID) any {
	if id == nil {
		return nil
	}
	return id.String()
}
