package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
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
	// callers are the clients of the operations that answer someone else than the admin (a worker's
	// queue answers only its worker), by operationId.
	callers map[string]*apitest.Client
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
	envUnit := unit("env", configdata.AppConfigEnv, map[string]any{"Labels": map[string]string{"tier": "x"}}, "A=1\n", "A=2\n")
	emptyUnit := unit("empty", configdata.AppConfigEnv, nil)
	// ChangeSets: one Open with a Unit in it (its Revision records it), one Closed.
	var rollout api.ChangeSet
	c.Post(sp+"/change_set", map[string]any{"Slug": "rollout", "Description": "roll out A", "Labels": map[string]string{"team": "web"}}).
		Expect(http.StatusOK).JSON(&rollout)
	var done api.ChangeSet
	c.Post(sp+"/change_set", map[string]any{"Slug": "done"}).Expect(http.StatusOK).JSON(&done)
	c.Patch(sp+"/change_set/"+done.ChangeSetID.String(), map[string]any{"State": "Closed"}).Expect(http.StatusOK)
	unit("in-rollout", configdata.AppConfigEnv, map[string]any{"ChangeSetID": rollout.ChangeSetID}, "A=1\n")
	// A clone in staging: its Upstream fields are set.
	c.Post("/api/unit?"+url.Values{"where": {"Slug = 'web'"}, "where_space": {"Slug = 'staging'"}}.Encode(), map[string]any{}).Expect(http.StatusOK)
	webPath := sp + "/unit/" + web.UnitID.String()
	// A Mutation made by a function, so contains on Mutations has a FunctionName to find.
	_, err := env.App.Store.Pool.Exec(context.Background(),
		`UPDATE mutation SET function_invocation = '{"FunctionName": "set-replicas"}' WHERE unit_id = $1 AND mutation_num = 2`, web.UnitID)
	require.NoError(t, err)
	// And one that merged from another Unit, so include=MergeSourceID has a Unit to expand (upgrades make
	// them: upgrade_test.go).
	_, err = env.App.Store.Pool.Exec(context.Background(),
		`UPDATE mutation SET merge_source_id = $2, merge_base_revision_num = 1, merge_end_revision_num = 2 WHERE unit_id = $1 AND mutation_num = 1`,
		web.UnitID, envUnit.UnitID)
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
	// Two UnitActions of web, and three UnitEvents: the worker applied the first and failed the second.
	var applies [2]api.QueuedOperation
	c.Post(webPath+"/apply", nil).Expect(http.StatusOK).JSON(&applies[0])
	c.Post(webPath+"/apply", nil).Expect(http.StatusOK).JSON(&applies[1])
	worker, queue := env.Client(workerToken(t, env, bw.BridgeWorkerID, bw.Secret)), "/api/bridge_worker/"+bw.BridgeWorkerID.String()
	for _, r := range []map[string]any{{"Status": "Progressing"}, {"Status": "Completed"}, {"Status": "Failed", "Message": "no cluster"}} {
		r["QueuedOperationID"] = applies[0].QueuedOperationID
		if r["Status"] == "Failed" {
			r["QueuedOperationID"] = applies[1].QueuedOperationID
		}
		worker.Post(queue+"/user_action_result", r).Expect(http.StatusOK)
	}
	var sa api.ServiceAccount
	c.Post("/api/service_account", map[string]any{"Slug": "deployer"}).Expect(http.StatusOK).JSON(&sa)
	c.Post("/api/service_account", map[string]any{"Slug": "reader", "OrgRole": "viewer"}).Expect(http.StatusOK)

	// Filters: one of Units (with where_data), one of Spaces reading another Space.
	var webFilter api.Filter
	c.Post(sp+"/filter", map[string]any{"Slug": "web-units", "From": "Unit", "Where": "Slug = 'web'", "WhereData": "spec.replicas > 0",
		"ResourceType": "apps/v1/Deployment"}).Expect(http.StatusOK).JSON(&webFilter)
	var stagingSpaces api.Filter
	c.Post(sp+"/filter", map[string]any{"Slug": "staging-spaces", "From": "Space", "FromSpaceID": staging.SpaceID, "IncludeHidden": "*"}).
		Expect(http.StatusOK).JSON(&stagingSpaces)
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

	// Attestations: an approval of web's first Revision, a check of both that rests on it.
	var approval api.Attestation
	c.Post(sp+"/attestation", map[string]any{"Type": "Approval", "Result": "Approved", "RevisionIDs": []uuid.UUID{revs[0].Revision.RevisionID},
		"Note": "reviewed"}).Expect(http.StatusOK).JSON(&approval)
	c.Post(sp+"/attestation", map[string]any{"Type": "Check", "Result": "Passed", "EvidenceAttestationIDs": []uuid.UUID{approval.AttestationID},
		"RevisionIDs": []uuid.UUID{revs[0].Revision.RevisionID, revs[1].Revision.RevisionID}}).Expect(http.StatusOK)

	// ChangeOrders: an Invoke one with its Invocation and Filters, an Aborted one.
	var changeOrder api.ChangeOrder
	c.Post(sp+"/change_order", map[string]any{"Slug": "raise", "Description": "raise web", "UpdateType": "Invoke", "InvocationID": roll.InvocationID,
		"Parameters": map[string]any{"image": "nginx:10"}, "WhereUnit": "Slug = 'web'", "UnitFilterID": webFilter.FilterID,
		"SpaceFilterID": stagingSpaces.FilterID, "Labels": map[string]string{"team": "web"}}).Expect(http.StatusOK).JSON(&changeOrder)
	// Restored by a promotion (the engine records that through changeorder.SetProgress), so it has a RestoreTagID.
	require.NoError(t, env.App.Store.WithTx(context.Background(), store.TxOptions{}, func(tx *store.Tx) error {
		stage := "dev"
		_, err := changeorder.SetProgress(context.Background(), tx, me.OrganizationID, changeOrder.ChangeOrderID,
			changeorder.Progress{State: changeorder.Restored, Stage: &stage, RestoreTagID: &release.TagID})
		return err
	}))
	// Its start Tag on web's head, so a Revision names a ChangeOrder (include=ChangeOrders).
	c.Post("/api/unit/tag?"+where("Slug = 'web'").Encode(), map[string]any{"TagID": changeOrder.StartTagID}).Expect(http.StatusOK)
	var dropped api.ChangeOrder
	c.Post(sp+"/change_order", map[string]any{"Slug": "dropped"}).Expect(http.StatusOK).JSON(&dropped)
	c.Patch(sp+"/change_order/"+dropped.ChangeOrderID.String(), map[string]any{"AbortedReason": "not needed"}).Expect(http.StatusOK)

	// Releases: an empty bundle (a Target with no Units) from the Tag's Revisions, and web's head.
	var bundles api.Target
	c.Post(sp+"/target", map[string]any{"Slug": "bundles", "ToolchainType": configdata.AppConfigText, "ProviderType": "FluxOCI"}).
		Expect(http.StatusOK).JSON(&bundles)
	var rel api.Release
	c.Post(sp+"/release", map[string]any{"TargetID": bundles.TargetID, "TagID": release.TagID, "Labels": map[string]string{"env": "dev"}}).
		Expect(http.StatusOK).JSON(&rel)
	c.Post(sp+"/release", map[string]any{"TargetID": cluster.TargetID, "Description": "heads"}).Expect(http.StatusOK)
	// ReviewComments: one on web's first Revision about a path, a reply on its second.
	var remark api.ReviewComment
	c.Post(sp+"/unit/"+web.UnitID.String()+"/review_comment", map[string]any{"RevisionNum": 1, "Path": "spec.replicas", "Text": "why 3?"}).
		Expect(http.StatusOK).JSON(&remark)
	c.Post(sp+"/unit/"+web.UnitID.String()+"/review_comment", map[string]any{"RevisionID": revs[1].Revision.RevisionID, "Text": "load",
		"ReplyToID": remark.ReviewCommentID}).Expect(http.StatusOK)

	// Links: env reads web's replicas; empty merges env; a copy of the first in staging reads web too.
	var envLink api.Link
	c.Post(sp+"/link", map[string]any{"Slug": "env-reads-web", "FromUnitID": envUnit.UnitID, "ToUnitID": web.UnitID, "AutoUpdate": true,
		"UpstreamPaths":   []any{map[string]any{"Name": "replicas", "ResourceType": "apps/v1/Deployment", "Path": "spec.replicas"}},
		"DownstreamPaths": []any{map[string]any{"Name": "replicas", "Path": "REPLICAS"}}, "Labels": map[string]string{"kind": "needs"}}).
		Expect(http.StatusOK).JSON(&envLink)
	// A Mutation made by the Link (propagation records it), so include=LinkID has one to expand.
	_, err = env.App.Store.Pool.Exec(context.Background(), `UPDATE mutation SET link_id = $1 WHERE unit_id = $2 AND mutation_num = 1`, envLink.LinkID, web.UnitID)
	require.NoError(t, err)
	c.Post(sp+"/link", map[string]any{"Slug": "empty-merges-env", "FromUnitID": emptyUnit.UnitID, "ToUnitID": envUnit.UnitID, "UpdateType": "MergeUnits",
		"Guards": map[string]string{"team": "web"}}).Expect(http.StatusOK)

	// ChangeWorkflows: dev then prod behind a custom gate, and a one-Stage one.
	var promote api.ChangeWorkflow
	c.Post(sp+"/change_workflow", map[string]any{"Slug": "promote", "DisplayName": "Dev to prod", "Labels": map[string]string{"kind": "promotion"},
		"Stages": []any{map[string]any{"Name": "dev", "WhereSpace": "Labels.env = 'dev'"},
			map[string]any{"Name": "prod", "WhereSpace": "Slug = 'prod'", "Prerequisites": []string{"Approved", "valid"}}},
		"Final":               map[string]any{"Prerequisites": []string{"Healthy"}},
		"CustomPrerequisites": []any{map[string]any{"Name": "valid", "Expression": "cel:revision.ValidationPassed"}}}).
		Expect(http.StatusOK).JSON(&promote)
	c.Post(sp+"/change_workflow", map[string]any{"Slug": "single", "Stages": []any{map[string]any{"Name": "only"}}}).Expect(http.StatusOK)

	// Groups, one with both members.
	var team api.Group
	c.Post("/api/group", map[string]any{"Slug": "team", "UserIDs": []uuid.UUID{me.UserID, bob.UserID}}).Expect(http.StatusOK).JSON(&team)
	c.Post("/api/group", map[string]any{"Slug": "empty-group"}).Expect(http.StatusOK)

	// Components: one with a backing Unit in dev, one following it, and staging a Variant of the second.
	var baseComp, webComp api.Component
	c.Post("/api/component?with_backing_units=true&backing_unit_space=dev", map[string]any{"Slug": "base", "Labels": map[string]string{"team": "web"}}).
		Expect(http.StatusOK).JSON(&baseComp)
	c.Post("/api/component", map[string]any{"Slug": "web-comp", "UpstreamComponentID": baseComp.ComponentID, "ChangeWorkflowRequired": true}).
		Expect(http.StatusOK).JSON(&webComp)
	c.Patch("/api/space/"+staging.SpaceID.String(), map[string]any{"ComponentID": webComp.ComponentID}).Expect(http.StatusOK)

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
			"attestation_id": approval.AttestationID.String(), "link_id": envLink.LinkID.String(),
			"release_id":        rel.ReleaseID.String(),
			"review_comment_id": remark.ReviewCommentID.String(),
			"change_set_id":     rollout.ChangeSetID.String(),
			"component_id":      webComp.ComponentID.String(),
			"change_order_id":   changeOrder.ChangeOrderID.String(),
			// ChangeWorkflows
			"change_workflow_id": promote.ChangeWorkflowID.String(),
		},
		callers: map[string]*apitest.Client{"ListQueuedOperations": worker},
		writes: map[string]selectionWrite{
			"BulkCreateUnits":        {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkMoveUnits":          {body: map[string]any{"ToSpaceID": staging.SpaceID}},
			"BulkTagUnits":           {body: map[string]any{"TagID": release.TagID}},
			"BulkCreateFilters":      {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkCreateViews":        {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkCreateTriggers":     {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkCreateInvocations":  {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkCreateLinks":        {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkMoveFilters":        {body: map[string]any{"ToSpaceID": staging.SpaceID}},
			"BulkCreateChangeSets":   {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkMoveChangeSets":     {body: map[string]any{"ToSpaceID": staging.SpaceID}},
			"BulkCreateChangeOrders": {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			"BulkMoveViews":          {body: map[string]any{"ToSpaceID": staging.SpaceID}},
			// ChangeWorkflows
			"BulkCreateChangeWorkflows": {body: map[string]any{}, query: url.Values{"name_prefixes": {"copy-"}}},
			// list-paths reads every ToolchainType.
			"InvokeFunctions":      {body: map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "list-paths"}}}},
			"InvokeFunctionsOnOrg": {body: map[string]any{"FunctionInvocations": []any{map[string]any{"FunctionName": "list-paths"}}}},
		},
	}
}

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
