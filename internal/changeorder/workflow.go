package changeorder

import (
	"context"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeworkflow"
)

// workflowContent is the content of ChangeWorkflow id to copy onto a ChangeOrder: one of the caller's
// organization, in any Space, that the caller may view (else 400 naming ChangeWorkflowID, as for a random ID).
func workflowContent(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (*changeworkflow.Spec, error) {
	w, err := changeworkflow.Lookup(ctx, sc, q, id)
	if err != nil {
		return nil, err
	}
	spec := w.Spec
	return &spec, nil
}
