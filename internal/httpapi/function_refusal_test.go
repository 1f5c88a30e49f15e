package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/httpapi"
)

// TestInvokeRefusals: bad requests are refused whole, before any Unit changes.
func TestInvokeRefusals(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	u := f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	all := url.Values{"where": {"Slug = 'web'"}}
	post := func(q url.Values, body any) *apitest.Response { return f.c.Post(f.invokePath(q), body) }
	cases := []struct {
		query  url.Values
		body   any
		status int
		typ    api.ErrorType
		item   string
	}{
		{all, map[string]any{"FunctionInvocations": []any{invocation("no-such")}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.FunctionName"},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", "many")}}, 422, api.ErrorTypeUnprocessable, ""},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 1.5)}}, 422, api.ErrorTypeUnprocessable, ""},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-value", "spec.(", 1)}}, 422, api.ErrorTypeUnprocessable, ""},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-image", "main")}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments"},
		{all, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 1, 2)}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments.1"},
		{all, map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "set-replicas", "Arguments": []any{map[string]any{"ParameterName": "count", "Value": 1}}}}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Arguments.0.ParameterName"},
		{all, map[string]any{"FunctionInvocations": []any{}}, 400, api.ErrorTypeValidation, "FunctionInvocations"},
		{all, map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "set-replicas", "Arguments": []any{map[string]any{"Value": 1}}, "WhereResource": "Kind = "}}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.WhereResource"},
		{all, map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "set-replicas", "Arguments": []any{map[string]any{"Value": 1}}, "Clearance": []any{map[string]any{"Key": "k", "Operator": "In"}}}}}, 400, api.ErrorTypeValidation, "FunctionInvocations.0.Clearance.0.Values"},
		{url.Values{"where": all["where"], "subgroup": {strings.Repeat("a", 65)}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "subgroup"},
		{url.Values{"where": all["where"], "subgroup": {"a-b"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "subgroup"},
		{url.Values{"where": all["where"], "subgroup": {"HubdInternal"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "subgroup"},
		{url.Values{"where": all["where"], "clearance": {"{"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "clearance"},
		{url.Values{"where": all["where"], "guards": {`{"bad key!": "x"}`}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "guards.Guards.bad key!"},
		{url.Values{"where": all["where"], "change_order": {"co"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "change_order"},
		{url.Values{"where": all["where"], "other_data_source": {"Tomorrow"}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeValidation, "other_data_source"},
		{url.Values{"where": {"Slug = "}}, map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}, 400, api.ErrorTypeUserInput, "where"},
	}
	for i, c := range cases {
		resp := post(c.query, c.body)
		e := resp.ExpectError(c.status, c.typ)
		require.NotEmpty(t, e.Error.Message, i)
		if c.item != "" {
			require.Equal(t, c.item, e.Error.ErrorMetadata.Items[0].Item, "case %d: %s", i, e.Error.Message)
		}
	}
	// An edit the data cannot take fails the Unit (all failed in the same way: the shared 422).
	e := post(all, map[string]any{"FunctionInvocations": []any{invocation("set-value", "metadata.name.deeper", "x")}}).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Contains(t, e.Error.Message, "metadata.name is a scalar value")
	// Across the organization a selection is required.
	f.c.Post("/api/function/invoke", map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, int64(1), f.unitNow(t, u).HeadRevisionNum, "nothing changed")

	// The same User's token of another organization: the Space is 404 (for invoking and for its
	// functions), executor_space does not find it, and its Units are never selected across the organization.
	other := f.env.Client(f.env.Token("globex", "alice", auth.RoleAdmin))
	other.Get("/api/space/"+f.space.SpaceID.String()+"/function").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get("/api/function?executor_space="+f.space.SpaceID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	other.Post(f.invokePath(all), map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var none []api.FunctionInvocationsResponse
	other.Post("/api/function/invoke?where="+url.QueryEscape("Slug = 'web'"), map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)
	// A viewer granted nothing may run no function, reading ones included (invoking needs Edit:
	// TestInvokeNeedsEdit).
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Post(f.invokePath(all), map[string]any{"FunctionInvocations": []any{invocation("get-image", "*")}}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Post(f.invokePath(all), map[string]any{"FunctionInvocations": []any{invocation("set-replicas", 2)}}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}

// TestInvokeFlood: each organization has a bounded number of invoke requests running per replica; over
// it is 429 TooManyRequests with Retry-After, and every other request completes.
func TestInvokeFlood(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{MaxInvocationsPerOrganization: 1}})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	f := functionFixture{&unitFixture{env: env, c: c, space: createSpace(t, c, map[string]any{"Slug": "dev"})}}
	for i := 0; i < 40; i++ {
		f.unitWithData(t, fmt.Sprintf("u%d", i), configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	}
	const requests = 8
	statuses := make([]*apitest.Response, requests)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := 0; i < requests; i++ {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			start.Wait()
			statuses[i] = c.Post(f.invokePath(url.Values{"dry_run": {"true"}}), map[string]any{"FunctionInvocations": []any{invocation("set-image", "*", fmt.Sprintf("img:%d", i))}})
		}(i)
	}
	start.Done()
	done.Wait()
	counts := map[int]int{}
	for _, r := range statuses {
		counts[r.Status]++
		if r.Status == http.StatusTooManyRequests {
			require.NotEmpty(t, r.Header.Get("Retry-After"))
			r.ExpectError(http.StatusTooManyRequests, api.ErrorTypeTooManyRequests)
		}
	}
	require.Equal(t, requests, counts[http.StatusOK]+counts[http.StatusTooManyRequests], counts)
	require.Positive(t, counts[http.StatusTooManyRequests], counts)
	require.Positive(t, counts[http.StatusOK], counts)
}
