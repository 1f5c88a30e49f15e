package changeworkflow_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/changeworkflow"
)

func validSpec() changeworkflow.Spec {
	return changeworkflow.Spec{
		Stages: []changeworkflow.Stage{
			{Name: "dev", WhereSpace: "Labels.env = 'dev'"},
			{Name: "prod", WhereSpace: "Labels.env = 'prod'", Prerequisites: []string{changeworkflow.Promoted, "tested"}},
		},
		Final: &changeworkflow.FinalStage{Prerequisites: []string{changeworkflow.Healthy}},
		CustomPrerequisites: []changeworkflow.Prerequisite{
			{Name: "tested", Expression: "cel:revision.ValidationPassed && attestations.exists(a, a.Type == 'test' && a.Result == 'Pass')"},
		},
	}
}

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, validSpec().Validate())

	many := func(n int) []changeworkflow.Stage {
		out := make([]changeworkflow.Stage, n)
		for i := range out {
			out[i] = changeworkflow.Stage{Name: strings.Repeat("s", i+1)}
		}
		return out
	}
	manyCustom := make([]changeworkflow.Prerequisite, 51)
	for i := range manyCustom {
		manyCustom[i] = changeworkflow.Prerequisite{Name: strings.Repeat("p", i+1), Expression: "cel:true"}
	}
	cases := []struct {
		name   string
		change func(*changeworkflow.Spec)
		item   string
	}{
		{"no stages", func(s *changeworkflow.Spec) { s.Stages = nil }, "Stages"},
		{"21 stages", func(s *changeworkflow.Spec) { s.Stages = many(21) }, "Stages"},
		{"empty stage name", func(s *changeworkflow.Spec) { s.Stages[1].Name = "" }, "Stages[1].Name"},
		{"long stage name", func(s *changeworkflow.Spec) { s.Stages[0].Name = strings.Repeat("x", 65) }, "Stages[0].Name"},
		{"duplicate stage", func(s *changeworkflow.Spec) { s.Stages[1].Name = "dev" }, "Stages[1].Name"},
		{"bad WhereSpace", func(s *changeworkflow.Spec) { s.Stages[1].WhereSpace = "Labels.env = " }, "Stages[1].WhereSpace"},
		{"unknown attribute in WhereSpace", func(s *changeworkflow.Spec) { s.Stages[0].WhereSpace = "Nope = 'x'" }, "Stages[0].WhereSpace"},
		{"unknown prerequisite", func(s *changeworkflow.Spec) { s.Stages[1].Prerequisites = []string{"Promoted", "nope"} }, "Stages[1].Prerequisites[1]"},
		{"unknown final prerequisite", func(s *changeworkflow.Spec) { s.Final.Prerequisites = []string{"nope"} }, "Final.Prerequisites[0]"},
		{"custom named as built-in", func(s *changeworkflow.Spec) { s.CustomPrerequisites[0].Name = "Approved" }, "CustomPrerequisites[0].Name"},
		{"custom duplicate", func(s *changeworkflow.Spec) {
			s.CustomPrerequisites = append(s.CustomPrerequisites, s.CustomPrerequisites[0])
		}, "CustomPrerequisites[1].Name"},
		{"custom empty name", func(s *changeworkflow.Spec) { s.CustomPrerequisites[0].Name = "" }, "CustomPrerequisites[0].Name"},
		{"too many custom", func(s *changeworkflow.Spec) { s.CustomPrerequisites = manyCustom }, "CustomPrerequisites"},
		{"missing cel: prefix", func(s *changeworkflow.Spec) { s.CustomPrerequisites[0].Expression = "true" }, "CustomPrerequisites[0].Expression"},
		{"bad CEL", func(s *changeworkflow.Spec) { s.CustomPrerequisites[0].Expression = "cel:revision.(" }, "CustomPrerequisites[0].Expression"},
		{"undeclared variable", func(s *changeworkflow.Spec) { s.CustomPrerequisites[0].Expression = "cel:target.ok" }, "CustomPrerequisites[0].Expression"},
		{"not a bool", func(s *changeworkflow.Spec) { s.CustomPrerequisites[0].Expression = "cel:size(releases)" }, "CustomPrerequisites[0].Expression"},
		{"long WhereSpace", func(s *changeworkflow.Spec) { s.Stages[0].WhereSpace = "Slug = '" + strings.Repeat("x", 4100) + "'" }, "Stages[0].WhereSpace"},
		{"long Description", func(s *changeworkflow.Spec) { s.CustomPrerequisites[0].Description = strings.Repeat("d", 1025) }, "CustomPrerequisites[0].Description"},
		{"too many gates", func(s *changeworkflow.Spec) { s.Final.Prerequisites = make([]string, 71) }, "Final.Prerequisites"},
		{"too long", func(s *changeworkflow.Spec) {
			s.CustomPrerequisites[0].Expression = "cel:" + strings.Repeat("true && ", 600) + "true"
		}, "CustomPrerequisites[0].Expression"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.change(&s)
			err := s.Validate()
			require.Error(t, err)
			ae := apierr.From(err)
			require.Equal(t, apierr.TypeValidation, ae.Type, ae.Message)
			require.NotEmpty(t, ae.Items)
			require.Equal(t, tc.item, ae.Items[0].Item, ae.Message)
			require.Contains(t, ae.Message, tc.item)
		})
	}
}

func TestCompileAndEval(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	vars := changeworkflow.Vars{
		Space: map[string]any{"SpaceID": id, "Slug": "prod-eu", "Labels": map[string]string{"env": "prod"}, "Annotations": map[string]string{}, "ComponentID": nil},
		Unit:  map[string]any{"UnitID": uuid.New(), "Slug": "web", "Labels": map[string]string{}, "HeadRevisionNum": int64(7), "UpstreamUnitID": (*uuid.UUID)(nil)},
		Revision: map[string]any{"RevisionNum": 7, "ValidationPassed": true, "ValidationErrors": []string{},
			"Description": "bump", "UserID": uuid.New()},
		Attestations: []map[string]any{{"Type": "test", "Result": "Pass", "CreatedAt": time.Now()}},
		Releases:     []map[string]any{{"ReleaseNum": 3, "Published": true, "Digest": "sha256:abc"}},
		ChangeOrder:  map[string]any{"Slug": "co-1", "Labels": map[string]string{}, "Parameters": map[string]any{"risk": "low", "n": 2}},
	}
	cases := []struct {
		expr string
		want bool
	}{
		{"cel:true", true},
		{"cel:space.Labels.env == 'prod' && space.SpaceID == '" + id.String() + "'", true},
		{"cel:unit.HeadRevisionNum >= 7 && revision.RevisionNum == unit.HeadRevisionNum", true},
		{"cel:revision.ValidationPassed && size(revision.ValidationErrors) == 0", true},
		{"cel:attestations.exists(a, a.Type == 'test' && a.Result == 'Pass')", true},
		{"cel:releases.all(r, r.Published) && releases[0].ReleaseNum == 3", true},
		{"cel:changeOrder.Parameters.risk == 'low' && changeOrder.Parameters.n > 1", true},
		{"cel:space.ComponentID == null && unit.UpstreamUnitID == null", true},
		{"cel:'gate' in changeOrder.Labels", false},
		{"cel:space.Slug.startsWith('dev')", false},
	}
	for _, tc := range cases {
		p, err := changeworkflow.CompileExpression(tc.expr)
		require.NoError(t, err, tc.expr)
		require.Equal(t, tc.expr, p.Source())
		got, err := p.Eval(vars)
		require.NoError(t, err, tc.expr)
		require.Equal(t, tc.want, got, tc.expr)
	}

	// Runtime errors and non-bool results are errors.
	for _, expr := range []string{
		"cel:unit.Missing == 1",     // no such key
		"cel:space.Labels.env",      // a string, not a bool
		"cel:revision.RevisionNum",  // an int
		"cel:unit.Slug > 1",         // no such overload at runtime
		"cel:releases[5].Published", // index out of range
	} {
		p, err := changeworkflow.CompileExpression(expr)
		require.NoError(t, err, expr)
		_, err = p.Eval(vars)
		require.Error(t, err, expr)
	}

	// Empty Vars: reading a key fails, whole-variable checks work.
	p, err := changeworkflow.CompileExpression("cel:size(attestations) == 0 && !('x' in space)")
	require.NoError(t, err)
	ok, err := p.Eval(changeworkflow.Vars{})
	require.NoError(t, err)
	require.True(t, ok)

	// The cost limit stops runaway comprehensions.
	p, err = changeworkflow.CompileExpression("cel:[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))")
	require.NoError(t, err)
	_, err = p.Eval(changeworkflow.Vars{})
	require.ErrorContains(t, err, "cost")

	// An ended context interrupts evaluation.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err = changeworkflow.CompileExpression("cel:releases.all(r, r.Published)")
	require.NoError(t, err)
	many := make([]map[string]any, 1000)
	for i := range many {
		many[i] = map[string]any{"Published": true}
	}
	_, err = p.EvalContext(ctx, changeworkflow.Vars{Releases: many})
	require.ErrorIs(t, err, context.Canceled)
	ok, err = p.EvalContext(context.Background(), changeworkflow.Vars{Releases: many})
	require.NoError(t, err)
	require.True(t, ok)

	_, err = changeworkflow.Program{}.Eval(changeworkflow.Vars{})
	require.ErrorIs(t, err, changeworkflow.ErrNotCompiled)

	_, err = changeworkflow.CompileExpression("revision.ValidationPassed")
	require.Equal(t, "Expression", apierr.From(err).Items[0].Item)
}
