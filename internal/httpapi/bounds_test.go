package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/function"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/trigger"
	"github.com/hubd/hubd/internal/unit"
)

// TestTemplateBounds: a stored Invocation holds at most function.MaxTemplateReferences parameter
// references, and what its templates expand to with given values is bounded (function.MaxExpandedBytes)
// for a whole request, for an invoke and for a Trigger's Params alike, refused as 400 naming the bound.
func TestTemplateBounds(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	refs := func(n int) string { return strings.Repeat("{{.a}}", n) }
	stamp := func(slug string, n int) map[string]any {
		return map[string]any{"Slug": slug, "ToolchainType": configdata.KubernetesYAML,
			"Parameters":          []any{map[string]any{"ParameterName": "a", "Required": true}},
			"FunctionInvocations": []any{invocation("set-annotation", "note", refs(n))}}
	}
	e := f.c.Post(f.invocationsPath(), stamp("many", function.MaxTemplateReferences+1)).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "FunctionInvocations.0.Arguments.1.Value", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "--max-template-references")
	inv := f.storedInvocation(t, stamp("stamp", function.MaxTemplateReferences))
	f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])

	// One value a little longer than the bound over the references: refused before it runs.
	over := strings.Repeat("x", function.MaxExpandedBytes/function.MaxTemplateReferences+10)
	named := func(n int, value string) map[string]any {
		list := make([]any, n)
		for i := range list {
			list[i] = map[string]any{"InvocationID": inv.InvocationID, "Parameters": map[string]any{"a": value}}
		}
		return map[string]any{"ParameterizedInvocations": list}
	}
	e = f.c.Post(f.invokePath(nil), named(1, over)).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ParameterizedInvocations.0.Parameters", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "--max-template-expansion")
	// The bound is the request's: two references within it alone are over it together.
	half := over[:len(over)*6/10]
	f.c.Post(f.invokePath(nil), named(1, half)).Expect(http.StatusOK)
	e = f.c.Post(f.invokePath(nil), named(2, half)).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ParameterizedInvocations.1.Parameters", e.Error.ErrorMetadata.Items[0].Item)

	// A Trigger's Params are expanded when it is written.
	e = f.c.Post("/api/space/"+f.space.SpaceID.String()+"/trigger", map[string]any{"Slug": "t", "Event": "Mutation",
		"ToolchainType": configdata.KubernetesYAML, "InvocationID": inv.InvocationID, "Params": map[string]any{"a": over}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "InvocationID", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "--max-template-expansion")
}

// TestTriggersPerSpace: a Space holds at most trigger.MaxPerSpace Triggers; the next is refused (400
// naming the bound) and another Space is not held to the first one's count.
func TestTriggersPerSpace(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	body := func(i int) map[string]any {
		return map[string]any{"Slug": fmt.Sprintf("t%d", i), "Event": "Mutation", "ToolchainType": configdata.AppConfigYAML, "FunctionName": "is-valid"}
	}
	for i := range trigger.MaxPerSpace {
		f.trigger(t, body(i))
	}
	e := f.c.Post("/api/space/"+f.space.SpaceID.String()+"/trigger", body(trigger.MaxPerSpace)).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "--max-triggers-per-space")
	other := createSpace(t, f.c, map[string]any{"Slug": "other"})
	f.c.Post("/api/space/"+other.SpaceID.String()+"/trigger", body(0)).Expect(http.StatusOK)
}

// TestTriggerWorkBound: a data write whose Triggers would run more than unit.MaxTriggerCalls function
// calls is refused (422 naming the bound) before any runs; within it the write goes through.
func TestTriggerWorkBound(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	checks := make([]any, unit.MaxInvocations)
	for i := range checks {
		checks[i] = invocation("path-exists", "metadata.name")
	}
	inv := f.storedInvocation(t, map[string]any{"Slug": "checks", "ToolchainType": configdata.KubernetesYAML, "FunctionInvocations": checks})
	u := f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	n := unit.MaxTriggerCalls / unit.MaxInvocations
	for i := range n {
		f.trigger(t, map[string]any{"Slug": fmt.Sprintf("t%d", i), "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML, "InvocationID": inv.InvocationID})
	}
	f.put(t, u, "text/plain", sampleData[configdata.KubernetesYAML]+"# at the bound\n").Expect(http.StatusOK)
	f.trigger(t, map[string]any{"Slug": "one-more", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML, "FunctionName": "is-valid"})
	e := f.put(t, u, "text/plain", sampleData[configdata.KubernetesYAML]+"# over it\n").ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Contains(t, e.Error.Message, "--max-trigger-calls")
	require.NotContains(t, f.data(t, u), "over it")
}

// TestTriggerRuleHoles: a Trigger is refused when written if its Invocation's functions cannot take
// its Params, and a Filter cannot be changed so that a Trigger (of any Space) using it could no longer
// select Units; either would fail every data write of the Trigger's Space.
func TestTriggerRuleHoles(t *testing.T) {
	t.Parallel()
	f := newFunctionFixture(t)
	scale := f.storedInvocation(t, map[string]any{"Slug": "scale", "ToolchainType": configdata.KubernetesYAML,
		"Parameters":          []any{map[string]any{"ParameterName": "n", "Required": true}},
		"FunctionInvocations": []any{invocation("set-replicas", "{{.n}}")}})
	triggers := "/api/space/" + f.space.SpaceID.String() + "/trigger"
	body := map[string]any{"Slug": "scale", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML,
		"InvocationID": scale.InvocationID, "Params": map[string]any{"n": "many"}}
	e := f.c.Post(triggers, body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "InvocationID", e.Error.ErrorMetadata.Items[0].Item)
	body["Params"] = map[string]any{"n": "3"}
	tr := f.trigger(t, body)
	f.c.Patch(triggers+"/"+tr.TriggerID.String(), map[string]any{"Params": map[string]any{"n": "three"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// A Filter of another Space that a Trigger here selects with.
	shared := createSpace(t, f.c, map[string]any{"Slug": "shared"})
	var flt api.Filter
	filterPath := "/api/space/" + shared.SpaceID.String() + "/filter"
	f.c.Post(filterPath, map[string]any{"Slug": "web", "From": "Unit", "Where": "Slug = 'web'"}).Expect(http.StatusOK).JSON(&flt)
	byFilter := f.trigger(t, map[string]any{"Slug": "by-filter", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML,
		"FunctionName": "path-exists", "Arguments": []any{arg("metadata.name")}, "UnitFilterID": flt.FilterID})
	member := f.env.Client(f.env.Token("acme", "bob", auth.RoleMember))
	for _, change := range []map[string]any{{"From": "Space", "Where": ""}, {"WhereData": "spec.replicas > 1"}} {
		e := member.Patch(filterPath+"/"+flt.FilterID.String(), change).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message, byFilter.TriggerID.String(), "%v", change)
	}
	f.c.Patch(filterPath+"/"+flt.FilterID.String(), map[string]any{"Where": "Slug = 'api'"}).Expect(http.StatusOK)
	u := f.unitWithData(t, "web", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	f.put(t, u, "text/plain", sampleData[configdata.KubernetesYAML]+"# still writable\n").Expect(http.StatusOK)
}

// TestInvokeTimeout: an invoke that runs out of time while one Unit waits for a lock answers 504
// GatewayTimeout (not 500, though the connection was closed under the Unit's savepoint), and what it did
// to the other Units is not kept.
func TestInvokeTimeout(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, apitest.Options{HTTP: httpapi.Config{RequestTimeout: time.Second}})
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	f := functionFixture{&unitFixture{env: env, c: c, space: createSpace(t, c, map[string]any{"Slug": "dev"})}}
	first := f.unitWithData(t, "a", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	held := f.unitWithData(t, "b", configdata.KubernetesYAML, sampleData[configdata.KubernetesYAML])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DBURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	_, err = tx.Exec(ctx, "SELECT 1 FROM unit WHERE unit_id = $1 FOR UPDATE", held.UnitID)
	require.NoError(t, err)
	f.c.Post(f.invokePath(nil), map[string]any{"FunctionInvocations": []any{invocation("set-label", "touched", "yes")}}).
		ExpectError(http.StatusGatewayTimeout, api.ErrorTypeGatewayTimeout)
	require.NoError(t, tx.Rollback(ctx))
	require.NotContains(t, f.data(t, first), "touched")
	require.NotContains(t, f.data(t, held), "touched")
}
