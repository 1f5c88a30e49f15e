package changeworkflow_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeworkflow"
)

// TestLookupAndExisting: a ChangeWorkflow of the caller's organization that it may view is found (in any
// Space); another organization's, a random ID and one the caller may not view are all 400 Validation
// naming the field, alike.
func TestLookupAndExisting(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	workflow := func(c *apitest.Client, space string) api.ChangeWorkflow {
		var sp api.Space
		c.Post("/api/space", map[string]any{"Slug": space}).Expect(http.StatusOK).JSON(&sp)
		var w api.ChangeWorkflow
		c.Post("/api/space/"+sp.SpaceID.String()+"/change_workflow", map[string]any{"Slug": "wf",
			"Stages":              []any{map[string]any{"Name": "one", "Prerequisites": []string{"Approved", "valid"}}},
			"CustomPrerequisites": []any{map[string]any{"Name": "valid", "Expression": "cel:revision.ValidationPassed"}}}).
			Expect(http.StatusOK).JSON(&w)
		return w
	}
	mine := workflow(admin, "dev")
	other := workflow(admin, "prod")
	theirs := workflow(env.Client(env.Token("globex", "gina", auth.RoleAdmin)), "theirs")
	q := env.App.Store.Q()
	viewer := authz.RequestScope(env.Principal("acme", "vic", auth.RoleViewer))
	guest := authz.RequestScope(env.Principal("acme", "gus", auth.RoleGuest))

	w, err := changeworkflow.Lookup(ctx, viewer, q, mine.ChangeWorkflowID)
	require.NoError(t, err)
	require.Equal(t, "wf", w.Slug)
	require.Equal(t, []string{"Approved", "valid"}, w.Stages[0].Prerequisites)
	require.NoError(t, w.Spec.Validate(), "a ChangeOrder copies a valid Spec")
	p, err := changeworkflow.CompileExpression(w.CustomPrerequisites[0].Expression)
	require.NoError(t, err)
	ok, err := p.Eval(changeworkflow.Vars{Revision: map[string]any{"ValidationPassed": true}})
	require.NoError(t, err)
	require.True(t, ok)

	refused := func(err error, field string) {
		t.Helper()
		require.Error(t, err)
		ae := apierr.From(err)
		require.Equal(t, apierr.TypeValidation, ae.Type)
		require.Equal(t, field, ae.Items[0].Item)
		require.Equal(t, apierr.MessageOf(apierr.NoSuchReference(changeworkflow.EntityType, "of your organization", field)), ae.Message)
	}
	for _, tc := range []struct {
		sc authz.Scope
		id uuid.UUID
	}{{viewer, uuid.New()}, {viewer, theirs.ChangeWorkflowID}, {guest, mine.ChangeWorkflowID}} {
		_, err := changeworkflow.Lookup(ctx, tc.sc, q, tc.id)
		refused(err, "ChangeWorkflowID")
		refused(changeworkflow.Existing(ctx, tc.sc, q, "ChangeWorkflowIDs", []uuid.UUID{mine.ChangeWorkflowID, tc.id}), "ChangeWorkflowIDs")
	}
	require.NoError(t, changeworkflow.Existing(ctx, viewer, q, "ChangeWorkflowIDs", []uuid.UUID{mine.ChangeWorkflowID, other.ChangeWorkflowID, mine.ChangeWorkflowID}))
	require.NoError(t, changeworkflow.Existing(ctx, guest, q, "ChangeWorkflowIDs", nil))
}
