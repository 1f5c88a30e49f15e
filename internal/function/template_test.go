package function

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
)

// TestExpandBudget: expansion fills references in text and typed whole values, spends the budget on the
// text it makes, and stops at the budget, however many references remain.
func TestExpandBudget(t *testing.T) {
	t.Parallel()
	params := []Parameter{{ParameterName: "a", DataType: TypeString, Required: true}, {ParameterName: "n", DataType: TypeInt}}
	inv := Invocation{FunctionName: "set-annotation", WhereResource: "Name = '{{.a}}'",
		Arguments: args("k", "{{ .a }}-{{.n}}-{{.a}}!", "{{.n}}")}
	out, err := Expand([]Invocation{inv}, params, map[string]any{"a": "x", "n": "3"}, "Params", NewBudget())
	require.NoError(t, err)
	require.Equal(t, "Name = 'x'", out[0].WhereResource)
	require.Equal(t, []Argument{{Value: "k"}, {Value: "x-3-x!"}, {Value: int64(3)}}, out[0].Arguments)

	// 10,000 references to a value of 1 KB would make 10 MB: refused once the budget is spent.
	many := Invocation{FunctionName: "set-annotation", Arguments: args("k", strings.Repeat("{{.a}}", 10000))}
	budget := NewBudget()
	_, err = Expand([]Invocation{many}, params, map[string]any{"a": strings.Repeat("v", 1024)}, "Params", budget)
	require.True(t, apierr.Is(err, apierr.TypeValidation), "%v", err)
	require.Contains(t, err.Error(), "--max-template-expansion")
	require.Zero(t, budget.left)
	// The budget is shared: what one expansion spent, the next cannot.
	budget = NewBudget()
	quarter := map[string]any{"a": strings.Repeat("v", MaxExpandedBytes/4)}
	_, err = Expand([]Invocation{inv}, params, quarter, "Params", budget)
	require.NoError(t, err, "three references to a quarter of the budget")
	_, err = Expand([]Invocation{inv}, params, quarter, "Params", budget)
	require.True(t, apierr.Is(err, apierr.TypeValidation), "%v", err)
}
