package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/httpapi"
	"github.com/hubd/hubd/internal/listquery"
)

// everyFamily is one organization with data in every listed family, so that each list has rows to
// order and page and each include has something to expand.
type everyFamily struct {
	c *apitest.Client
	// path holds a value for every path parameter of the operations with list parameters.
	path map[string]string
	// writes are the bodies (and extra query) of the selection writes whose body the test cannot guess.
	writes map[string]selectionWrite
	// filters are empty Filters by their From, made as the test needs them (filterOf); views the same
	// for Views by their Of (viewOf).
	filters map[string]string
	views   map[string]string
}

type selectionWrite struct {
	body  any
	query url.Values
}

func newEveryFamily(t *testing.T) *everyFamily {
	t.Helper()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	bob := env.Principal("acme", "bob", auth.RoleMember)
	var me api.OrganizationMember
	c.Get("/api/me").Expect(http.StatusOK).JSON(&me)

	dev := createSpace(t, c, map[string]any{"Slug": "dev", "DisplayName": "Development", "Labels": map[string]string{"env": "dev"}})
	staging := createSpace(t, c, map[string]any{"Slug": "staging", "Labels": map[string]string{"env": "staging"}})
	sp := "/api/space/" + dev.SpaceID.String()

	// Targets, and Units on them with two Revisions each (so Mutations too).
	var cluster api.Target
	c.Post(sp+"/target", map[string]any{"Slug": "cluster", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "FluxOCI"}).
		Expect(http.StatusOK).JSON(&cluster)
	c.Post(sp+"/target", map[string]any{"Slug": "envs", "ToolchainType": configdata.AppConfigEnv, "ProviderType": "ArgoCDOCI"}).Expect(http.StatusOK)
	unit := func(slug, toolchain string, fields map[string]any, data ...string) api.Unit {
		body := map[string]any{"Slug": slug, "ToolchainType": toolchain}
		for k, v := range fields {
			body[k] = v
		}
		var res api.UnitCreateOrUpdateResponse
		c.Post(sp+"/unit", body).Expect(http.StatusOK).JSON(&res)
		for _, d := range data {
			c.Do(http.MethodPut, sp+"/unit/"+res.Unit.UnitID.String()+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte(d)}).
				Expect(http.StatusOK).JSON(&res)
		}
		return *res.Unit
	}
	web := unit("web", configdata.KubernetesYAML, map[string]any{"TargetID": cluster.TargetID, "DisplayName": "Web"},
		deployment, stringsReplace(deployment, "replicas: 3", "replicas: 4"))
	unit("env", configdata.AppConfigEnv, map[string]any{"Labels": map[string]string{"tier": "x"}}, "A=1\n", "A=2\n")
	unit("empty", configdata.AppConfigEnv, nil)
	// A clone in staging: its Upstream fields are set.
	c.Post("/api/unit?"+url.Values{"where": {"Slug = 'web'"}, "where_space": {"Slug = 'staging'"}}.Encode(), map[string]any{}).Expect(http.StatusOK)
	webPath := sp + "/unit/" + web.UnitID.String()
	// A Mutation made by a function, so contains on Mutations has a FunctionName to find.
	_, err := env.App.Store.Pool.Exec(context.Background(),
		`UPDATE mutation SET function_invocation = '{"FunctionName": "set-replicas"}' WHERE unit_id = $1 AND mutation_num = 2`, web.UnitID)
	require.NoError(t, err)
	var revs []api.ExtendedRevision
	c.Get(webPath + "/revision").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 2)
	var muts []api.ExtendedMutation
	c.Get(webPath + "/mutation").Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 2)

	// Tags, one on web's head Revision.
	var release api.Tag
	c.Post(sp+"/tag", map[string]any{"Slug": "release-1"}).Expect(http.StatusOK).JSON(&release)
	c.Post(sp+"/tag", map[string]any{"Slug": "release-2"}).Expect(http.StatusOK)
	c.Post("/api/unit/tag?"+where("Slug = 'web'").Encode(), map[string]any{"TagID": release.TagID}).Expect(http.StatusOK)

	// Channels, and two CommandRuns of one of them.
	var ch api.Channel
	c.Post(sp+"/channel", map[string]any{"Slug": "deployer", "Commands": map[string]any{"status": map[string]any{"Description": "Report status"}}}).
		Expect(http.StatusOK).JSON(&ch)
	c.Post(sp+"/channel", map[string]any{"Slug": "notifier", "Commands": map[string]any{"notify": map[string]any{"Description": "Notify"}}}).Expect(http.StatusOK)
	var run api.CommandRun
	c.Post("/api/command_run", map[string]any{"Command": "status"}).Expect(http.StatusOK).JSON(&run)
	c.Post("/api/command_run", map[string]any{"Command": "status"}).Expect(http.StatusOK)

	// BridgeWorkers and ServiceAccounts (each with its User).
	var bw api.BridgeWorker
	c.Post(sp+"/bridge_worker", map[string]any{"Slug": "k8s"}).Expect(http.StatusOK).JSON(&bw)
	c.Post(sp+"/bridge_worker", map[string]any{"Slug": "vm"}).Expect(http.StatusOK)
	c.Patch(sp+"/target/"+cluster.TargetID.String(), map[string]any{"BridgeWorkerID": bw.BridgeWorkerID}).Expect(http.StatusOK)
	var sa api.ServiceAccount
	c.Post("/api/service_account", map[string]any{"Slug": "deployer"}).Expect(http.StatusOK).JSON(&sa)
	c.Post("/api/service_account", map[string]any{"Slug": "reader", "OrgRole": "viewer"}).Expect(http.StatusOK)

	// Filters: one of Units (with where_data), one of Spaces reading another Space.
	var webFilter api.Filter
	c.Post(sp+"/filter", map[string]any{"Slug": "web-units", "From": "Unit", "Where": "Slug = 'web'", "WhereData": "spec.replicas > 0",
		"ResourceType": "apps/v1/Deployment"}).Expect(http.StatusOK).JSON(&webFilter)
	c.Post(sp+"/filter", map[string]any{"Slug": "staging-spaces", "From": "Space", "FromSpaceID": staging.SpaceID, "IncludeHidden": "*"}).Expect(http.StatusOK)
	// Views: one of Units with the Filter of web Units, one of Spaces.
	var webView api.View
	c.Post(sp+"/view", map[string]any{"Slug": "web-units", "Of": "Unit", "FilterID": webFilter.FilterID, "OrderBy": "Slug",
		"Columns": []map[string]any{{"Name": "Slug", "ColumnSource": map[string]any{"MetadataAttribute": "Slug"}}}}).Expect(http.StatusOK).JSON(&webView)
	c.Post(sp+"/view", map[string]any{"Slug": "spaces", "Of": "Space", "GroupBy": "Slug"}).Expect(http.StatusOK)

	// Triggers: one validating Kubernetes data, one (disabled) mutating Env data.
	var byLabel api.Filter
	c.Post(sp+"/filter", map[string]any{"Slug": "labelled-units", "From": "Unit", "Where": "Labels.tier = 'x'"}).Expect(http.StatusOK).JSON(&byLabel)
	var check api.Trigger
	c.Post(sp+"/trigger", map[string]any{"Slug": "replicas-set", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML,
		"FunctionName": "path-exists", "Arguments": []any{map[string]any{"Value": "spec.replicas"}}, "WhereUnit": "Slug = 'web'",
		"UnitFilterID": byLabel.FilterID, "Labels": map[string]string{"kind": "check"}}).Expect(http.StatusOK).JSON(&check)
	c.Post(sp+"/trigger", map[string]any{"Slug": "stamp", "Event": "PostClone", "ToolchainType": configdata.AppConfigEnv, "Disabled": true,
		"FunctionName": "set-value", "Arguments": []any{map[string]any{"Value": "B"}, map[string]any{"Value": "1"}}}).Expect(http.StatusOK)

	// Invocations: a Kubernetes template with a Parameter, an Env check a (disabled) Trigger runs.
	var roll, envCheck api.Invocation
	c.Post(sp+"/invocation", map[string]any{"Slug": "roll", "ToolchainType": configdata.KubernetesYAML, "Labels": map[string]string{"kind": "rollout"},
		"Parameters":          []any{map[string]any{"ParameterName": "image", "Required": true}},
		"FunctionInvocations": []any{map[string]any{"FunctionName": "set-image", "Arguments": []any{map[string]any{"Value": "main"}, map[string]any{"Value": "{{.image}}"}}}}}).
		Expect(http.StatusOK).JSON(&roll)
	c.Post(sp+"/invocation", map[string]any{"Slug": "env-check", "ToolchainType": configdata.AppConfigEnv,
		"FunctionInvocations": []any{map[string]any{"FunctionName": "is-valid"}}}).Expect(http.StatusOK).JSON(&envCheck)
	c.Post(sp+"/trigger", map[string]any{"Slug": "env-checks", "Event": "Mutation", "ToolchainType": configdata.AppConfigEnv, "Disabled": true,
		"InvocationID": envCheck.InvocationID}).Expect(http.StatusOK)
	// web's third Revision: Mutations of the Invocation and of a Trigger (invoked by ID; it selects no Unit itself).
	var labelTrigger api.Trigger
	c.Post(sp+"/trigger", map[string]any{"Slug": "label", "Event": "Mutation", "ToolchainType": configdata.KubernetesYAML, "WhereUnit": "Slug = 'none'",
		"FunctionName": "set-label", "Arguments": []any{map[string]any{"Value": "team"}, map[string]any{"Value": "web"}}}).Expect(http.StatusOK).JSON(&labelTrigger)
	c.Post(sp+"/function/invoke?"+where("Slug = 'web'").Encode(), map[string]any{"Triggers": []any{labelTrigger.TriggerID},
		"ParameterizedInvocations": []any{map[string]any{"InvocationID": roll.InvocationID, "Parameters": map[string]any{"image": "nginx:9"}}}}).
		Expect(http.StatusOK)

	// Groups, one with both members.
	var team api.Group
	c.Post("/api/group", map[string]any{"Slug": "team", "UserIDs": []uuid.UUID{me.UserID, bob.UserID}}).Expect(http.StatusOK).JSON(&team)
	c.Post("/api/group", map[string]any{"Slug": "empty-group"}).Expect(http.StatusOK)

	return &everyFamily{
		c: c, filters: map[string]string{}, views: map[string]string{},
		path: map[string]string{
			"organization_id": me.OrganizationID.String(), "user_id": me.UserID.String(),
			"space_id": dev.SpaceID.String(), "unit_id": web.UnitID.String(),
			"revision_id": revs[1].Revision.RevisionID.String(), "mutation_id": muts[1].Mutation.MutationID.String(),
			"target_id": cluster.TargetID.String(), "tag_id": release.TagID.String(),
			"channel_id": ch.ChannelID.String(), "command_run_id": run.CommandRunID.String(),
			"group_id": team.GroupID.String(), "filter_id": webFilter.FilterID.String(),
			"view_id":    webView.ViewID.String(),
			"trigger_id": check.TriggerID.String(), "invocation_id": roll.InvocationID.String(),
			"bridge_worker_id": bw.BridgeWorkerID.String(), "service_account_id": sa.ServiceAccountID.String(),
		},
		writes: map[string]selectionWrite{
			"BulkCreateUnits":       {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkMoveUnits":         {body: map[string]any{"ToSpaceID": staging.SpaceID}},
			"BulkTagUnits":          {body: map[string]any{"TagID": release.TagID}},
			"BulkCreateFilters":     {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkCreateViews":       {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkCreateTriggers":    {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkCreateInvocations": {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkMoveFilters":       {body: map[string]any{"ToSpaceID": staging.SpaceID}},
			"BulkMoveViews":         {body: map[string]any{"ToSpaceID": staging.SpaceID}},
			// list-paths reads every ToolchainType.
			"InvokeFunctions":      {body: map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "list-paths"}}}},
			"InvokeFunctionsOnOrg": {body: map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "list-paths"}}}},
		},
	}
}

// signatureWhere are the operations whose where selects function signatures (in memory), not entities.
var signatureWhere = map[string]bool{"ListOrgFunctions": true, "ListFunctions": true}

// entityOperation is an operation of the served document that marks the entity its list parameters
// apply to (x-hubd-entity).
type entityOperation struct {
	id, method, path string
	op               *openapi3.Operation
	entity           *listquery.Entity
	params           map[string]bool // the query parameters it declares
	// extended are the properties of the items it answers (ExtendedUnit...), to know what include fills.
	extended map[string]bool
}

func entityOperations(t *testing.T) []entityOperation {
	t.Helper()
	doc, err := apitest.Document()
	require.NoError(t, err)
	var out []entityOperation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			params := map[string]bool{}
			for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, p := range list {
					if p.Value.In == openapi3.ParameterInQuery {
						params[p.Value.Name] = true
					}
				}
			}
			raw, ok := op.Extensions["x-hubd-entity"]
			if !ok {
				if signatureWhere[op.OperationID] {
					delete(params, "where")
				}
				for _, p := range []string{"where", "contains", "order_by", "select", "include_hidden"} {
					require.False(t, params[p], "%s takes %s but has no x-hubd-entity", op.OperationID, p)
				}
				continue
			}
			name, _ := raw.(string)
			if m, isRaw := raw.(json.RawMessage); isRaw {
				require.NoError(t, json.Unmarshal(m, &name))
			}
			e := listquery.Lookup(name)
			require.NotNil(t, e, "%s: x-hubd-entity %q is no listquery.Entity; defined: %v", op.OperationID, raw, listquery.Names())
			out = append(out, entityOperation{id: op.OperationID, method: method, path: path, op: op, entity: e, params: params,
				extended: itemProperties(op)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// itemProperties are the properties of the objects a 200 answers (the array's items for a list).
func itemProperties(op *openapi3.Operation) map[string]bool {
	out := map[string]bool{}
	r := op.Responses.Status(http.StatusOK)
	if r == nil || r.Value.Content.Get("application/json") == nil {
		return out
	}
	s := r.Value.Content.Get("application/json").Schema.Value
	if s.Items != nil {
		s = s.Items.Value
	}
	for name := range s.Properties {
		out[name] = true
	}
	return out
}

// listRun calls one operation and judges its answers.
type listRun struct {
	t    *testing.T
	c    *apitest.Client
	op   entityOperation
	url  string // the concrete path
	body any
	// includeChecked records the includes seen filled (Entity/Name) where the related entity exists.
	includeChecked map[string]bool
}

func (r *listRun) call(q url.Values) *apitest.Response {
	r.t.Helper()
	target := r.url
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var resp *apitest.Response
	switch {
	case r.op.method == http.MethodPatch:
		resp = r.c.Patch(target, r.body)
	default:
		resp = r.c.Do(r.op.method, target, r.body)
	}
	assert.Less(r.t, resp.Status, 500, "%s %s: a list parameter never produces a 5xx; body: %s", r.op.method, target, resp.Body)
	return resp
}

// ok calls and requires 200, returning the items (a get's one object is an item too).
func (r *listRun) ok(q url.Values) ([]map[string]any, *apitest.Response) {
	r.t.Helper()
	resp := r.call(q)
	if resp.Status >= 500 {
		return nil, resp // reported by call
	}
	if !assert.Equal(r.t, http.StatusOK, resp.Status, "%s %s?%s: %s", r.op.method, r.url, q.Encode(), resp.Body) {
		return nil, resp
	}
	var items []map[string]any
	if strings.HasPrefix(strings.TrimSpace(string(resp.Body)), "[") {
		resp.JSON(&items)
	} else {
		var one map[string]any
		resp.JSON(&one)
		items = []map[string]any{one}
	}
	return items, resp
}

// ids are the entity IDs of items: the Extended form's entity field, or the item itself (bulk reads).
func (r *listRun) ids(items []map[string]any) []string {
	e := r.op.entity
	out := make([]string, len(items))
	for i, it := range items {
		obj := it
		if inner, ok := it[e.Name].(map[string]any); ok {
			obj = inner
		}
		id, _ := obj[e.ID].(string)
		require.NotEmpty(r.t, id, "%s: an item without %s: %v", r.op.id, e.ID, it)
		out[i] = id
	}
	return out
}

// withParams is a copy of q with the given name, value pairs set.
func withParams(q url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	for i := 0; i < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// paged reads q with limit=1, follows one Service-Continue, and requires the two pages to be the first two
// items of want (the unpaged answer): the keyset token of every order field round-trips.
func (r *listRun) paged(q url.Values, want []string) {
	r.t.Helper()
	if !r.op.params["limit"] {
		return
	}
	first, resp := r.ok(withParams(q, "limit", "1"))
	if resp.Status != http.StatusOK {
		return
	}
	got := r.ids(first)
	if len(want) == 0 {
		assert.Empty(r.t, got)
		return
	}
	assert.Equal(r.t, want[:1], got, "%s %v limit=1", r.op.id, q)
	token := resp.Header.Get("Service-Continue")
	if len(want) == 1 {
		return
	}
	if !assert.NotEmpty(r.t, token, "%s %v: limit=1 of %d items has no Service-Continue", r.op.id, q, len(want)) {
		return
	}
	next, resp := r.ok(withParams(q, "limit", "1", "continue", token))
	if resp.Status == http.StatusOK {
		assert.Equal(r.t, want[1:2], r.ids(next), "%s %v: the continued page", r.op.id, q)
	}
}

// checkIncludes requires each include the answer's schema has a field for to be filled wherever the
// entity names the related one (the attribute the include is named after is set).
func (r *listRun) checkIncludes(items []map[string]any, names []string) {
	r.t.Helper()
	e := r.op.entity
	for _, in := range e.Includes {
		if !slices.Contains(names, in.Name) || !r.op.extended[in.Field] {
			continue // not asked, or a related family the service does not have yet (it expands to nothing)
		}
		if in.Unserved {
			for _, it := range items {
				if list, isList := it[in.Field].([]any); isList {
					assert.Empty(r.t, list, "%s include=%s: %s of a family not served is []", r.op.id, in.Name, in.Field)
				} else {
					assert.Nil(r.t, it[in.Field], "%s include=%s: %s of a family not served is null", r.op.id, in.Name, in.Field)
				}
			}
			continue
		}
		for _, it := range items {
			obj, _ := it[e.Name].(map[string]any)
			if !isSet(obj[in.Name]) {
				continue
			}
			if assert.NotNil(r.t, it[in.Field], "%s include=%s: %s is %v but %s is not filled", r.op.id, in.Name, in.Name, obj[in.Name], in.Field) {
				r.includeChecked[e.Name+"/"+in.Name] = true
			}
		}
	}
}

// expectUserInput asserts the answer is 400 UserInput (the client's mistake, not the server's).
func expectUserInput(t *testing.T, resp *apitest.Response, msgAndArgs ...any) {
	t.Helper()
	if assert.Equal(t, http.StatusBadRequest, resp.Status, msgAndArgs...) {
		var body api.StandardErrorResponse
		resp.JSON(&body)
		assert.Equal(t, api.ErrorTypeUserInput, body.Error.Type, msgAndArgs...)
	}
}

// isSet reports whether an attribute's JSON value names something (not null, empty or zero).
func isSet(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != "" && x != "00000000-0000-0000-0000-000000000000"
	case float64:
		return x != 0
	case bool:
		return x
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

// conditions is one where condition per filterable attribute (and per attribute of its list elements or
// object fields), each valid for the attribute's type: every attribute's SQL runs.
func conditions(prefix string, e *listquery.Entity) []string {
	var out []string
	for _, a := range e.Attributes {
		if !a.Filterable {
			continue
		}
		n := prefix + a.Name
		switch a.Type {
		case listquery.String:
			out = append(out, n+" != 'x'")
		case listquery.Int:
			out = append(out, n+" != -1")
		case listquery.UUID:
			out = append(out, n+" != '00000000-0000-0000-0000-000000000000'")
		case listquery.Bool:
			out = append(out, n+" != true")
		case listquery.Time:
			out = append(out, n+" > '2000-01-01T00:00:00Z'")
		case listquery.StringMap:
			out = append(out, n+".k != 'x'")
		case listquery.BoolMap:
			out = append(out, n+".k != true")
		case listquery.UUIDList, listquery.StringList:
			out = append(out, "LEN("+n+") >= 0")
		case listquery.EntityList:
			out = append(out, conditions(n+".*.", a.Elem)...)
		case listquery.Object:
			out = append(out, conditions(n+".", a.Elem)...)
		}
	}
	return out
}

// TestListParameters runs the list parameters of every operation the document marks with x-hubd-entity,
// against one organization with data in every family: contains, where on every filterable attribute,
// order_by (ASC and DESC) on every orderable one, include of every name and all at once, each with
// limit=1 and one continued page, select of every attribute and include_hidden=*. None may answer 5xx;
// DESC must reverse ASC exactly (the ID breaks ties in the same direction), pages must be the unpaged
// answer's items, and every include the answer has a field for must fill it where the related entity
// exists. The selection writes run with dry_run.
// filterOf returns the ID of an empty Filter of entity type from in the fixture's Space, made on first use.
func filterOf(t *testing.T, f *everyFamily, from string) string {
	t.Helper()
	if id, ok := f.filters[from]; ok {
		return id
	}
	var made api.Filter
	f.c.Post("/api/space/"+f.path["space_id"]+"/filter", map[string]any{"Slug": "all-" + strings.ToLower(from), "From": from}).
		Expect(http.StatusOK).JSON(&made)
	f.filters[from] = made.FilterID.String()
	return f.filters[from]
}

// viewOf returns the ID of a View of entity type of in the fixture's Space, made on first use: a column of
// the entity's ID, one of a field of each related entity an include expands, and, for entities with
// configuration data, one of a data path.
func viewOf(t *testing.T, f *everyFamily, of string) string {
	t.Helper()
	if id, ok := f.views[of]; ok {
		return id
	}
	e := listquery.Lookup(of)
	require.NotNil(t, e, of)
	columns := []map[string]any{{"Name": "id", "ColumnSource": map[string]any{"MetadataAttribute": e.ID}}}
	for _, in := range e.Includes {
		if rel := listquery.Lookup(in.EntityType()); rel != nil {
			columns = append(columns, map[string]any{"Name": in.Field, "ColumnSource": map[string]any{"MetadataAttribute": in.Field + "." + rel.ID}})
		}
	}
	if e.DataColumn != "" {
		columns = append(columns, map[string]any{"Name": "data", "ColumnSource": map[string]any{"DataPath": map[string]any{"Path": "metadata.name"}}})
	}
	var made api.View
	f.c.Post("/api/space/"+f.path["space_id"]+"/view", map[string]any{"Slug": "all-" + strings.ToLower(of), "Of": of, "Columns": columns}).
		Expect(http.StatusOK).JSON(&made)
	f.views[of] = made.ViewID.String()
	return f.views[of]
}

func TestListParameters(t *testing.T) {
	t.Parallel()
	f := newEveryFamily(t)
	ops := entityOperations(t)
	require.NotEmpty(t, ops)
	filtered, viewed := 0, 0 // lists filter= and view= were tried on
	// The Filters and Views filter= and view= are tried with exist before any list is read (they are
	// listed too).
	filterOf(t, f, "Space")
	filterOf(t, f, "Unit")
	viewOf(t, f, "Space")
	viewOf(t, f, "Unit")
	for _, op := range ops {
		if op.params["filter"] {
			filterOf(t, f, op.entity.Name)
		}
		if op.params["view"] {
			viewOf(t, f, op.entity.Name)
		}
	}
	includeChecked := map[string]bool{}
	includeExpected := map[string]bool{} // Entity/Name of every include some answer has a field for
	reversed := map[string]int{}         // entity → order_by checks made over two items or more
	for _, op := range ops {
		path := op.path
		for _, seg := range strings.Split(op.path, "/") {
			if strings.HasPrefix(seg, "{") {
				name := strings.Trim(seg, "{}")
				v, ok := f.path[name]
				require.True(t, ok, "%s (%s %s) has list parameters but the fixture has no value for its path parameter %s: add one to newEveryFamily",
					op.id, op.method, op.path, name)
				path = strings.Replace(path, seg, v, 1)
			}
		}
		r := &listRun{t: t, c: f.c, op: op, url: httpapi.BasePath + path, includeChecked: includeChecked}
		if op.method != http.MethodGet {
			runSelectionWrite(t, f, r)
			continue
		}
		e := op.entity
		all, resp := r.ok(nil)
		if resp.Status != http.StatusOK {
			continue
		}
		allIDs := r.ids(all)

		if op.params["filter"] {
			// A Filter of the listed type selecting everything answers what the list does; one of another
			// type is refused.
			filtered++
			id := filterOf(t, f, e.Name)
			items, _ := r.ok(url.Values{"filter": {id}})
			assert.ElementsMatch(t, allIDs, r.ids(items), "%s: an empty Filter of %s selects the whole list", op.id, e.Name)
			other := "Space"
			if e.Name == other {
				other = "Unit"
			}
			resp := r.call(url.Values{"filter": {filterOf(t, f, other)}})
			assert.Equal(t, http.StatusBadRequest, resp.Status, "%s: a Filter of %s on a %s list: %s", op.id, other, e.Name, resp.Body)
		}
		if op.params["view"] {
			// A View of the listed type lists the same items, each with its columns (the first the item's
			// ID), and pages them; one of another type is refused.
			viewed++
			id := viewOf(t, f, e.Name)
			items, _ := r.ok(url.Values{"view": {id}})
			assert.Equal(t, allIDs, r.ids(items), "%s: a View without order or Filter lists the same items", op.id)
			for i, it := range items {
				cols, _ := it["ViewColumns"].([]any)
				if assert.NotEmpty(t, cols, "%s: item %d has no ViewColumns", op.id, i) {
					first, _ := cols[0].(map[string]any)
					assert.Equal(t, map[string]any{"Name": "id", "Value": allIDs[i]}, first, "%s: the first column is the ID", op.id)
				}
			}
			r.paged(url.Values{"view": {id}}, allIDs)
			other := "Space"
			if e.Name == other {
				other = "Unit"
			}
			resp := r.call(url.Values{"view": {viewOf(t, f, other)}})
			assert.Equal(t, http.StatusBadRequest, resp.Status, "%s: a View of %s on a %s list: %s", op.id, other, e.Name, resp.Body)
		}
		if op.params["contains"] {
			if e.SupportsContains() {
				items, _ := r.ok(url.Values{"contains": {"x"}})
				for _, id := range r.ids(items) {
					assert.Contains(t, allIDs, id, "%s: contains selects from the list", op.id)
				}
			} else {
				expectUserInput(t, r.call(url.Values{"contains": {"x"}}), "%s: %s lists do not take contains", op.id, e.Name)
			}
		}
		if op.params["where"] {
			for _, w := range conditions("", e) {
				r.ok(url.Values{"where": {w}})
			}
		}
		if op.params["order_by"] {
			// distinct_on=Off is the Revision lists' other statement (no DISTINCT ON subselect); it needs limit.
			variants := []url.Values{{}}
			if op.params["distinct_on"] {
				variants = append(variants, url.Values{"distinct_on": {"Off"}, "limit": {"1000"}})
			}
			for _, v := range variants {
				base, resp := r.ok(v)
				if resp.Status != http.StatusOK {
					continue
				}
				baseIDs := r.ids(base)
				for _, field := range e.OrderFields() {
					asc, resp := r.ok(withParams(v, "order_by", field))
					desc, resp2 := r.ok(withParams(v, "order_by", "DESC:"+field))
					if resp.Status != http.StatusOK || resp2.Status != http.StatusOK {
						continue
					}
					ascIDs, descIDs := r.ids(asc), r.ids(desc)
					assert.ElementsMatch(t, baseIDs, ascIDs, "%s %v order_by=%s lists the same entities", op.id, v, field)
					reverse := slices.Clone(ascIDs)
					slices.Reverse(reverse)
					assert.Equal(t, reverse, descIDs, "%s %v: order_by=DESC:%s reverses order_by=%s", op.id, v, field, field)
					if len(ascIDs) >= 2 {
						reversed[e.Name]++
					}
					r.paged(withParams(v, "order_by", field), ascIDs)
					r.paged(withParams(v, "order_by", "DESC:"+field), descIDs)
				}
			}
		}
		if op.params["include"] {
			names := e.IncludeNames()
			for _, in := range e.Includes {
				if op.extended[in.Field] && !in.Unserved {
					includeExpected[e.Name+"/"+in.Name] = true
				}
			}
			for _, q := range append(slices.Clone(names), strings.Join(names, ",")) {
				items, resp := r.ok(url.Values{"include": {q}})
				if resp.Status == http.StatusOK {
					assert.Equal(t, allIDs, r.ids(items), "%s include=%s lists the same entities", op.id, q)
					r.checkIncludes(items, strings.Split(q, ","))
					r.paged(url.Values{"include": {q}}, allIDs)
				}
			}
		}
		if op.params["select"] {
			var every []string
			for _, a := range e.Attributes {
				every = append(every, a.Name)
			}
			r.ok(url.Values{"select": {strings.Join(every, ",")}})
			// Each field alone: what select leaves out never breaks the response schema (fields it
			// requires are always returned).
			for _, a := range every {
				r.ok(url.Values{"select": {a}})
			}
		}
		if op.params["include_hidden"] {
			r.ok(url.Values{"include_hidden": {"*"}})
		}
	}

	// The fixture gave every include something to expand, and every list (but the Organization's: a
	// token names one) two entities or more to order.
	for k := range includeExpected {
		assert.True(t, includeChecked[k], "no answer had a %s whose include is set: give the fixture one", k)
	}
	for _, op := range ops {
		if op.method == http.MethodGet && op.params["order_by"] && op.entity.Name != "Organization" {
			assert.Positive(t, reversed[op.entity.Name], "%s: no %s list had two entities to order", op.id, op.entity.Name)
		}
	}
	assert.Greater(t, filtered, 10, "filter= was tried on too few lists")
	assert.Greater(t, viewed, 10, "view= was tried on too few lists")
}

// runSelectionWrite runs a bulk write's selection (dry_run): selecting everything, by contains, and by
// each order field where it takes order_by. Its outcome per entity may be anything but a 5xx.
func runSelectionWrite(t *testing.T, f *everyFamily, r *listRun) {
	t.Helper()
	op, e := r.op, r.op.entity
	w, known := f.writes[op.id]
	switch {
	case known:
		r.body = w.body
	case op.method == http.MethodPatch:
		r.body = map[string]any{}
	case op.op.RequestBody != nil && op.op.RequestBody.Value.Required:
		t.Errorf("%s (%s %s) takes a body the test cannot guess: add it to newEveryFamily's writes", op.id, op.method, op.path)
		return
	}
	require.True(t, op.params["dry_run"], "%s: a selection write without dry_run cannot be run here", op.id)
	base := url.Values{"dry_run": {"true"}}
	for k, v := range w.query {
		base[k] = v
	}
	everything := fmt.Sprintf("%s != '00000000-0000-0000-0000-000000000000'", e.ID)
	resp := r.call(withParams(base, "where", everything))
	assert.NotEqual(t, http.StatusBadRequest, resp.Status, "%s: the selection of everything is valid: %s", op.id, resp.Body)
	if op.params["contains"] {
		resp := r.call(withParams(base, "contains", "x"))
		if !e.SupportsContains() {
			expectUserInput(t, resp, "%s: %s selections do not take contains", op.id, e.Name)
		} else if resp.Status == http.StatusBadRequest {
			var body api.StandardErrorResponse
			resp.JSON(&body)
			for _, it := range body.Error.ErrorMetadata.Items {
				assert.NotEqual(t, "contains", it.Item, "%s: contains is refused: %s", op.id, resp.Body)
			}
		}
	}
	if op.params["order_by"] {
		for _, field := range e.OrderFields() {
			r.call(withParams(base, "where", everything, "order_by", "DESC:"+field))
		}
	}
}
