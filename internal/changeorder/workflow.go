package changeorder

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
)

// workflowContent is the content of ChangeWorkflow id to copy onto a ChangeOrder. ChangeWorkflows are not
// served yet: no ID names one (400 naming ChangeWorkflowID).
func workflowContent(_ context.Context, _ authz.Scope, _ *db.Queries, _ uuid.UUID) (json.RawMessage, error) {
	return nil, apierr.NoSuchReference("ChangeWorkflow", "of your organization", "ChangeWorkflowID")
}
