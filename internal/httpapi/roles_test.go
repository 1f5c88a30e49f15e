package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/authz"
)

// roleFixture is one organization holding an entity of every family, with a client per role.
type roleFixture struct {
	t       *testing.T
	admin   *apitest.Client
	clients map[auth.Role]*apitest.Client
	// params are the values of the document's path parameters, by name.
	params map[string]string
	// ids of the fixture's entities, for bodies and selections.
	otherSpace, emptySpace, tag, userKid string
}

func newRoleFixture(t *testing.T, env *apitest.Env) *roleFixture {
	t.Helper()
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	f := &roleFixture{t: t, admin: admin, clients: map[auth.Role]*apitest.Client{
		auth.RoleViewer: env.Client(env.Token("acme", "vic", auth.RoleViewer)), auth.RoleMember: env.Client(env.Token("acme", "mo", auth.RoleMember)),
		auth.RoleManager: env.Client(env.Token("acme", "mia", auth.RoleManager)), auth.RoleAdmin: admin,
		auth.RoleGuest: env.Client(env.Token("acme", "gus", auth.RoleGuest)),
	}}
	var me api.OrganizationMember
	admin.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	extra := env.Principal("acme", "extra", auth.RoleViewer)

	sp := createSpace(t, admin, map[string]any{"Slug": "dev"})
	f.otherSpace = createSpace(t, admin, map[string]any{"Slug": "prod"}).SpaceID.String()
	f.emptySpace = createSpace(t, admin, map[string]any{"Slug": "empty"}).SpaceID.String()
	base := "/api/space/" + sp.SpaceID.String()
	var u api.UnitCreateOrUpdateResponse
	admin.Post(base+"/unit", map[string]any{"Slug": "app", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&u)
	unit := base + "/unit/" + u.Unit.UnitID.String()
	admin.Put(unit+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)
	admin.Put(unit+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=2\n")}).Expect(http.StatusOK)
	var revs []api.ExtendedRevision
	admin.Get(unit + "/revision").Expect(http.StatusOK).JSON(&revs)
	var muts []api.ExtendedMutation
	admin.Get(unit + "/mutation").Expect(http.StatusOK).JSON(&muts)
	var target api.Target
	admin.Post(base+"/target", map[string]any{"Slug": "t", "ToolchainType": "Kubernetes/YAML", "ProviderType": "ArgoCDOCI"}).Expect(http.StatusOK).JSON(&target)
	var tag api.Tag
	admin.Post(base+"/tag", map[string]any{"Slug": "v1"}).Expect(http.StatusOK).JSON(&tag)
	f.tag = tag.TagID.String()
	var filt api.Filter
	admin.Post(base+"/filter", map[string]any{"Slug": "web", "From": "Unit", "Where": "Slug = 'app'"}).Expect(http.StatusOK).JSON(&filt)
	var vw api.View
	admin.Post(base+"/view", map[string]any{"Slug": "web", "Of": "Unit", "Columns": []map[string]any{{"Name": "Slug", "ColumnSource": map[string]any{"MetadataAttribute": "Slug"}}}}).
		Expect(http.StatusOK).JSON(&vw)
	var trig api.Trigger
	admin.Post(base+"/trigger", map[string]any{"Slug": "check", "Event": "Mutation", "ToolchainType": "AppConfig/Env", "FunctionName": "is-valid"}).
		Expect(http.StatusOK).JSON(&trig)
	var inv api.Invocation
	admin.Post(base+"/invocation", map[string]any{"Slug": "checks", "ToolchainType": "AppConfig/Env", "FunctionInvocations": []map[string]any{{"FunctionName": "is-valid"}}}).
		Expect(http.StatusOK).JSON(&inv)
	var ch api.Channel
	admin.Post(base+"/channel", map[string]any{"Slug": "bot", "Commands": map[string]any{"deploy": map[string]any{"Description": "Deploy"}}}).
		Expect(http.StatusOK).JSON(&ch)
	var run api.CommandRun
	admin.Post("/api/command_run", map[string]any{"Command": "deploy", "ChannelID": ch.ChannelID}).Expect(http.StatusOK).JSON(&run)
	var w api.BridgeWorker
	admin.Post(base+"/bridge_worker", map[string]any{"Slug": "w"}).Expect(http.StatusOK).JSON(&w)
	var sa api.ServiceAccount
	admin.Post("/api/service_account", map[string]any{"Slug": "fixture-sa"}).Expect(http.StatusOK).JSON(&sa)
	saKey, userKey := newSigner(t), newSigner(t)
	admin.Post("/api/service_account/"+sa.ServiceAccountID.String()+"/key", map[string]any{"PublicJWK": saKey.jwk}).Expect(http.StatusOK)
	admin.Post("/api/user/"+sa.UserID.String()+"/key", map[string]any{"PublicJWK": userKey.jwk}).Expect(http.StatusOK)
	f.userKid = userKey.kid
	var att api.Attestation
	admin.Post(base+"/attestation", map[string]any{"Type": "Check", "RevisionIDs": []uuid.UUID{revs[0].Revision.RevisionID}}).Expect(http.StatusOK).JSON(&att)
	var rel api.Release
	admin.Post(base+"/release", map[string]any{"TargetID": target.TargetID}).Expect(http.StatusOK).JSON(&rel)
	var comment api.ReviewComment
	admin.Post(base+"/unit/"+u.Unit.UnitID.String()+"/review_comment", map[string]any{"RevisionNum": 1, "Text": "why?"}).Expect(http.StatusOK).JSON(&comment)
	var cs api.ChangeSet
	admin.Post(base+"/change_set", map[string]any{"Slug": "cs"}).Expect(http.StatusOK).JSON(&cs)
	var comp api.Component
	admin.Post("/api/component", map[string]any{"Slug": "comp"}).Expect(http.StatusOK).JSON(&comp)
	var co api.ChangeOrder
	admin.Post(base+"/change_order", map[string]any{"Slug": "co"}).Expect(http.StatusOK).JSON(&co)
	var cw api.ChangeWorkflow
	admin.Post(base+"/change_workflow", map[string]any{"Slug": "cw", "Stages": []map[string]any{{"Name": "dev"}}}).Expect(http.StatusOK).JSON(&cw)
	var oc api.OAuthClient
	admin.Post("/api/oauth_client", map[string]any{"Name": "fixture-app", "RedirectURIs": []string{"https://app.example.com"}}).Expect(http.StatusOK).JSON(&oc)
	var group api.Group
	admin.Post("/api/group", map[string]any{"Slug": "team", "UserIDs": []string{me.UserID.String()}}).Expect(http.StatusOK).JSON(&group)
	// A Link from app to another Unit (Units that Links read from cannot be deleted: app is not one).
	var upstream api.UnitCreateOrUpdateResponse
	admin.Post(base+"/unit", map[string]any{"Slug": "upstream", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&upstream)
	var lnk api.Link
	admin.Post(base+"/link", map[string]any{"Slug": "reads", "FromUnitID": u.Unit.UnitID, "ToUnitID": upstream.Unit.UnitID,
		"UpstreamPaths": []any{map[string]any{"Path": "A"}}, "DownstreamPaths": []any{map[string]any{"Path": "A"}}}).Expect(http.StatusOK).JSON(&lnk)

	f.params = map[string]string{
		"organization_id": me.OrganizationID.String(), "organization_member_id": extra.UserID.String(),
		"space_id": sp.SpaceID.String(), "unit_id": u.Unit.UnitID.String(), "revision_id": revs[0].Revision.RevisionID.String(),
		"mutation_id": muts[0].Mutation.MutationID.String(), "target_id": target.TargetID.String(), "tag_id": f.tag,
		"channel_id": ch.ChannelID.String(), "command_run_id": run.CommandRunID.String(), "bridge_worker_id": w.BridgeWorkerID.String(),
		"name": "cursor", "service_account_id": sa.ServiceAccountID.String(), "user_id": sa.UserID.String(), "kid": saKey.kid,
		"group_id": group.GroupID.String(), "filter_id": filt.FilterID.String(), "view_id": vw.ViewID.String(),
		"trigger_id": trig.TriggerID.String(), "invocation_id": inv.InvocationID.String(), "attestation_id": att.AttestationID.String(),
		"release_id": rel.ReleaseID.String(), "review_comment_id": comment.ReviewCommentID.String(),
		"change_set_id": cs.ChangeSetID.String(), "component_id": comp.ComponentID.String(),
		"change_order_id": co.ChangeOrderID.String(),
		"link_id":         lnk.LinkID.String(), "oauth_client": oc.ClientID, "upstream_unit_id": upstream.Unit.UnitID.String(),
		"queued_operation_id": uuid.NewString(), "unit_action_id": uuid.NewString(), "unit_event_id": uuid.NewString(),
		// ChangeWorkflows
		"change_workflow_id": cw.ChangeWorkflowID.String(),
	}
	return f
}

// roleRequest is what the test sends for one operation: query parameters beyond dry_run, a path other
// than the fixture's, and a body (built when sent, so a PUT carries the Version it reads).
type roleRequest struct {
	query url.Values
	path  func(f *roleFixture) string
	body  func(f *roleFixture, path string) any
	// also are statuses an allowed caller may get besides 2xx, because an earlier allowed caller changed
	// what the operation acts on (the run it cancelled, the key it removed) or the fixture cannot make it
	// succeed for everyone (a poll without the lease).
	also []int
	// guestSelectsNothing is the error a guest (granted nothing) gets from a selection that finds nothing
	// it may view, when the operation refuses an empty selection instead of answering an empty array.
	guestSelectsNothing api.ErrorType
	// guestSees is how many items a guest granted nothing finds in the list (its own User).
	guestSees int
}

// guestWithheld reports whether a guest granted nothing got what the rules give it instead of a refusal:
// what it may not view does not exist for it, so reading one is 404 as an unknown ID is, and a list or a
// bulk selection finds nothing but what is its own (an empty array, or the operation's error for an empty selection).
func guestWithheld(op *openapi3.Operation, req roleRequest, resp *apitest.Response) bool {
	switch {
	case resp.Status == http.StatusNotFound:
		resp.ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
		return true
	case op.Extensions["x-hubd-entity"] == nil:
		return false
	case req.guestSelectsNothing != "":
		resp.ExpectError(http.StatusBadRequest, req.guestSelectsNothing)
		return true
	case resp.Status == http.StatusOK:
		var items []json.RawMessage
		return json.Unmarshal(resp.Body, &items) == nil && items != nil && len(items) == req.guestSees
	}
	return false
}

func sel(w string) url.Values { return url.Values{"where": {w}} }

// setValue is a mutating invocation every ToolchainType takes (the fixture's Unit is AppConfig/Env).
var setValue = map[string]any{"FunctionName": "set-value", "Arguments": []any{map[string]any{"Value": "LEVEL"}, map[string]any{"Value": "debug"}}}

func jsonBody(v any) func(*roleFixture, string) any {
	return func(*roleFixture, string) any { return v }
}

// readBack is the body of a PUT: the entity as GET returns it, under field of the Extended form.
func readBack(field string) func(*roleFixture, string) any {
	return func(f *roleFixture, path string) any {
		return f.admin.Get(path).Expect(http.StatusOK).Map()[field]
	}
}

// documentEdit is the body of a document edit: the document as GET returns it, unchanged.
func documentEdit(f *roleFixture, path string) any {
	doc := f.admin.Get(path).Expect(http.StatusOK).Map()
	return map[string]any{"Base": doc, "Document": doc}
}

// roleRequests gives every operation with a body, a required selection or a special path its request;
// operations not named here are sent with the fixture's path parameters and nothing else.
var roleRequests = map[string]roleRequest{
	"BulkPatchServiceAccounts":  {query: sel("Slug = 'fixture-sa'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteServiceAccounts": {query: sel("Slug = 'fixture-sa'")},
	"BulkPatchSpaces":           {query: sel("Slug = 'dev'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteSpaces":          {query: sel("Slug = 'empty'")},
	"BulkPatchTargets":          {query: sel("Slug = 't'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteTargets":         {query: sel("Slug = 't'")},
	"BulkPatchFilters":          {query: sel("Slug = 'web'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteFilters":         {query: sel("Slug = 'web'")},
	"BulkPatchViews":            {query: sel("Slug = 'web'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteViews":           {query: sel("Slug = 'web'")},
	"BulkPatchUnits":            {query: sel("Slug = 'app'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteUnits":           {query: sel("Slug = 'app'")},
	"InvokeFunctions":           {query: sel("Slug = 'app'"), body: jsonBody(map[string]any{"FunctionInvocations": []any{setValue}})},
	"InvokeFunctionsOnOrg":      {query: sel("Slug = 'app'"), body: jsonBody(map[string]any{"FunctionInvocations": []any{setValue}})},
	"BulkCreateUnits": {query: url.Values{"where": {"Slug = 'app'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	"BulkCreateFilters": {query: url.Values{"where": {"Slug = 'web'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	"BulkCreateViews": {query: url.Values{"where": {"Slug = 'web'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	"BulkPatchChangeSets":  {query: sel("Slug = 'cs'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteChangeSets": {query: sel("Slug = 'cs'")},
	"BulkCreateChangeSets": {query: url.Values{"where": {"Slug = 'cs'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	"BulkMoveChangeSets":          {query: sel("Slug = 'cs'"), body: func(f *roleFixture, _ string) any { return map[string]any{"ToSpaceID": f.otherSpace} }},
	"CreateChangeSet":             {body: jsonBody(map[string]any{"Slug": "new-change-set"})},
	"UpdateChangeSet":             {body: readBack("ChangeSet")},
	"PatchChangeSet":              {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"UpdateChangeSetFromDocument": {body: documentEdit},
	"BulkPatchComponents":         {query: sel("Slug = 'comp'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteComponents":        {query: sel("Slug = 'comp'")},
	"CreateComponent":             {body: jsonBody(map[string]any{"Slug": "new-component"})},
	"UpdateComponent":             {body: readBack("Component")},
	"PatchComponent":              {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"UpdateComponentFromDocument": {body: documentEdit},
	"BulkMoveFilters":             {query: sel("Slug = 'web'"), body: func(f *roleFixture, _ string) any { return map[string]any{"ToSpaceID": f.otherSpace} }},
	"BulkMoveViews":               {query: sel("Slug = 'web'"), body: func(f *roleFixture, _ string) any { return map[string]any{"ToSpaceID": f.otherSpace} }},
	"BulkPatchChangeOrders":       {query: sel("Slug = 'co'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteChangeOrders":      {query: sel("Slug = 'co'")},
	"BulkCreateChangeOrders": {query: url.Values{"where": {"Slug = 'co'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	"CreateChangeOrder": {body: jsonBody(map[string]any{"Slug": "new-change-order"})},
	"UpdateChangeOrder": {body: readBack("ChangeOrder")},
	"PatchChangeOrder":  {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"BulkMoveUnits": {query: sel("Slug = 'app'"), body: func(f *roleFixture, _ string) any {
		return map[string]any{"ToSpaceID": f.otherSpace}
	}},
	"BulkTagUnits": {query: sel("Slug = 'app'"), body: func(f *roleFixture, _ string) any { return map[string]any{"TagID": f.tag} }},
	// The fixture's admin wrote the Unit's Revisions: an author cannot approve their own change (403).
	"ApproveUnit":      {also: []int{http.StatusForbidden}},
	"BulkApproveUnits": {query: sel("Slug = 'app'"), also: []int{http.StatusForbidden}},
	"Promote": {body: func(f *roleFixture, _ string) any {
		return map[string]any{"ChangeOrderID": f.params["change_order_id"], "WhereSpace": "Slug = 'prod'"}
	}},
	"CreateCommandRun": {body: func(f *roleFixture, _ string) any {
		return map[string]any{"Command": "deploy", "ChannelID": f.params["channel_id"]}
	}},
	"CancelCommandRun":       {also: []int{http.StatusConflict}},
	"ReportCommandRunResult": {body: jsonBody(map[string]any{"Status": "Completed"}), also: []int{http.StatusConflict}},
	"AcquireChannelLease":    {body: jsonBody(map[string]any{})},
	"ReleaseChannelLease":    {query: url.Values{"claim_token": {uuid.NewString()}}, also: []int{http.StatusConflict}},
	"PollChannel":            {body: jsonBody(map[string]any{"ClaimToken": uuid.NewString(), "TimeoutSeconds": 0}), also: []int{http.StatusConflict}},
	"PollBridgeWorkerEvents": {body: jsonBody(map[string]any{"Name": "cursor", "TimeoutSeconds": 0})},
	"DiffConfigData":         {body: jsonBody(map[string]any{"ToolchainType": "AppConfig/Env", "From": "A=1\n", "To": "A=2\n"})},
	"CreateOrganization":     {body: jsonBody(map[string]any{"Slug": "new-org"})},
	"UpdateOrganization":     {body: readBack("Organization")},
	// The organization holds the fixture: its delete passes the permission check, then finds it in use.
	"DeleteOrganization":       {also: []int{http.StatusConflict}},
	"CreateOrganizationMember": {body: jsonBody(map[string]any{"Username": "newbie", "OrgRole": "viewer"})},
	"CreateServiceAccount":     {body: jsonBody(map[string]any{"Slug": "new-sa"})},
	"UpdateServiceAccount":     {body: readBack("ServiceAccount")},
	"PatchServiceAccount":      {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"CreateServiceAccountKey":  {body: newKey},
	"DeleteServiceAccountKey":  {also: []int{http.StatusNotFound}},
	"CreateUserKey":            {body: newKey},
	"DeleteUserKey": {path: func(f *roleFixture) string { return "/api/user/" + f.params["user_id"] + "/key/" + f.userKid },
		also: []int{http.StatusNotFound}},
	"BulkPatchGroups":          {query: sel("Slug = 'team'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteGroups":         {query: sel("Slug = 'team'")},
	"CreateGroup":              {body: jsonBody(map[string]any{"Slug": "new-group"})},
	"CreateOAuthClient":        {body: jsonBody(map[string]any{"Name": "new-app", "RedirectURIs": []string{"https://new.example.com"}})},
	"UpdateGroup":              {body: readBack("Group")},
	"PatchGroup":               {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"ListUsers":                {guestSees: 1},
	"CreateSpace":              {body: jsonBody(map[string]any{"Slug": "new-space"})},
	"UpdateSpace":              {body: readBack("Space")},
	"PatchSpace":               {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"DeleteSpace":              {path: func(f *roleFixture) string { return "/api/space/" + f.emptySpace }},
	"CreateBridgeWorker":       {body: jsonBody(map[string]any{"Slug": "new-w"})},
	"UpdateBridgeWorker":       {body: readBack("BridgeWorker")},
	"PatchBridgeWorker":        {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"CreateChannel":            {body: jsonBody(map[string]any{"Slug": "new-c"})},
	"UpdateChannel":            {body: readBack("Channel")},
	"PatchChannel":             {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"CreateFilter":             {body: jsonBody(map[string]any{"Slug": "new-filter", "From": "Space"})},
	"UpdateFilter":             {body: readBack("Filter")},
	"PatchFilter":              {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"CreateView":               {body: jsonBody(map[string]any{"Slug": "new-view", "Of": "Space"})},
	"UpdateViewFromDocument":   {body: documentEdit},
	"UpdateFilterFromDocument": {body: documentEdit},
	"UpdateView":               {body: readBack("View")},
	"CreateTrigger":            {body: jsonBody(map[string]any{"Slug": "new-trigger", "Event": "Mutation", "ToolchainType": "AppConfig/Env", "FunctionName": "is-valid"})},
	"UpdateTrigger":            {body: readBack("Trigger")},
	"PatchTrigger":             {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"BulkPatchTriggers":        {query: sel("Slug = 'check'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteTriggers":       {query: sel("Slug = 'check'")},
	"BulkCreateTriggers": {query: url.Values{"where": {"Slug = 'check'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	"CreateInvocation":      {body: jsonBody(map[string]any{"Slug": "new-invocation", "ToolchainType": "AppConfig/Env", "FunctionInvocations": []map[string]any{{"FunctionName": "is-valid"}}})},
	"UpdateInvocation":      {body: readBack("Invocation")},
	"PatchInvocation":       {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"BulkPatchInvocations":  {query: sel("Slug = 'checks'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteInvocations": {query: sel("Slug = 'checks'")},
	"BulkCreateInvocations": {query: url.Values{"where": {"Slug = 'checks'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	// ChangeWorkflows
	"CreateChangeWorkflow":      {body: jsonBody(map[string]any{"Slug": "new-change-workflow", "Stages": []map[string]any{{"Name": "dev"}}})},
	"UpdateChangeWorkflow":      {body: readBack("ChangeWorkflow")},
	"PatchChangeWorkflow":       {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"BulkPatchChangeWorkflows":  {query: sel("Slug = 'cw'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteChangeWorkflows": {query: sel("Slug = 'cw'")},
	"BulkCreateChangeWorkflows": {query: url.Values{"where": {"Slug = 'cw'"}, "where_space": {"Slug = 'prod'"}}, body: jsonBody(map[string]any{}),
		guestSelectsNothing: api.ErrorTypeValidation},
	"CreateLink": {body: func(f *roleFixture, _ string) any {
		return map[string]any{"Slug": "new-link", "FromUnitID": f.params["unit_id"], "ToUnitID": f.params["upstream_unit_id"], "UpdateType": "None"}
	}},
	"UpdateLink":             {body: readBack("Link")},
	"PatchLink":              {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"UpdateLinkFromDocument": {body: documentEdit},
	"BulkPatchLinks":         {query: sel("Slug = 'reads'"), body: jsonBody(map[string]any{"Labels": map[string]string{"k": "v"}})},
	"BulkDeleteLinks":        {query: sel("Slug = 'reads'")},
	"BulkCreateLinks":        {query: url.Values{"where": {"Slug = 'reads'"}, "name_prefixes": {"copy-"}}, body: jsonBody(map[string]any{})},
	"PatchView":              {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"CreateTag":              {body: jsonBody(map[string]any{"Slug": "new-tag"})},
	"CreateAttestation": {body: func(f *roleFixture, _ string) any {
		return map[string]any{"Type": "Check", "RevisionIDs": []string{f.params["revision_id"]}}
	}},
	"PublishRelease": {body: func(f *roleFixture, _ string) any { return map[string]any{"TargetID": f.params["target_id"]} }},
	"UpdateRelease":  {body: readBack("Release")},
	"PatchRelease":   {body: jsonBody(map[string]any{"LiveStatus": "Synced"})},
	// Only its author (the fixture's admin) changes a ReviewComment; its author or a manager deletes it.
	"CreateReviewComment":      {body: jsonBody(map[string]any{"RevisionNum": 1, "Text": "and?"})},
	"UpdateReviewComment":      {body: readBack("ReviewComment"), also: []int{http.StatusForbidden}},
	"PatchReviewComment":       {body: jsonBody(map[string]any{"Text": "x"}), also: []int{http.StatusForbidden}},
	"DeleteReviewComment":      {also: []int{http.StatusForbidden}},
	"BulkPatchReviewComments":  {query: sel("RevisionNum = 1"), body: jsonBody(map[string]any{"Text": "x"}), also: []int{http.StatusForbidden}},
	"BulkDeleteReviewComments": {query: sel("RevisionNum = 1"), also: []int{http.StatusForbidden}},
	"UpdateTag":                {body: readBack("Tag")},
	"PatchTag":                 {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"CreateTarget":             {body: jsonBody(map[string]any{"Slug": "new-t", "ToolchainType": "Kubernetes/YAML", "ProviderType": "ArgoCDOCI"})},
	"UpdateTarget":             {body: readBack("Target")},
	"PatchTarget":              {body: jsonBody(map[string]any{"DisplayName": "x"})},
	"CreateUnit":               {body: jsonBody(map[string]any{"Slug": "new-u", "ToolchainType": "AppConfig/Env"})},
	"UpdateUnit":               {body: readBack("Unit")},
	"PatchUnit":                {body: jsonBody(map[string]any{"DisplayName": "x"})},
	// The clearance clears the guard SetUnitGuard sets on A (it runs first).
	"UploadUnitData": {query: url.Values{"clearance": {`[{"Key": "owner", "Operator": "Exists"}]`}},
		body: jsonBody(apitest.Raw{ContentType: "text/plain", Data: []byte("A=3\n")})},
	"SetUnitGuard":         {body: jsonBody(map[string]any{"ResourceGuards": []any{map[string]any{"Set": map[string]any{"A": map[string]string{"owner": "sre"}}}}})},
	"ResolveUnitConflicts": {body: jsonBody(map[string]any{"Action": "Dismiss"})},
	"SetUnitProtection":    {body: jsonBody(map[string]any{"ResourceProtection": []any{map[string]any{"Protected": map[string]bool{"A": true}}}})},
	// The fixture's Unit has no Target: an allowed caller gets 422 naming TargetID (unit_action_test.go
	// starts actions); the worker's queue answers its worker alone, and 404 to every other caller.
	"ApplyUnit":             {also: []int{http.StatusUnprocessableEntity}},
	"DestroyUnit":           {also: []int{http.StatusUnprocessableEntity}},
	"RefreshUnit":           {also: []int{http.StatusUnprocessableEntity}},
	"ImportUnit":            {also: []int{http.StatusUnprocessableEntity}},
	"BulkApplyUnits":        {query: sel("Slug = 'app'"), also: []int{http.StatusUnprocessableEntity}},
	"BulkDestroyUnits":      {query: sel("Slug = 'app'"), also: []int{http.StatusUnprocessableEntity}},
	"BulkRefreshUnits":      {query: sel("Slug = 'app'"), also: []int{http.StatusUnprocessableEntity}},
	"BulkCancelUnitActions": {query: sel("Slug = 'app'"), also: []int{http.StatusNotFound}},
	"ListQueuedOperations":  {also: []int{http.StatusNotFound}},
	"GetUnitAction":         {also: []int{http.StatusNotFound}},
	"GetUnitEvent":          {also: []int{http.StatusNotFound}},
	"GetQueuedOperation":    {also: []int{http.StatusNotFound}},
	"PollQueuedOperations":  {body: jsonBody(map[string]any{"TimeoutSeconds": 0}), also: []int{http.StatusNotFound}},
	"ReportUserActionResult": {body: func(f *roleFixture, _ string) any {
		return map[string]any{"QueuedOperationID": f.params["queued_operation_id"], "Status": "Completed"}
	}, also: []int{http.StatusNotFound}},
	"ReportActionResult": {body: func(f *roleFixture, _ string) any {
		return map[string]any{"QueuedOperationID": f.params["queued_operation_id"], "Result": "ApplyCompleted"}
	}, also: []int{http.StatusNotFound}},
}

func newKey(f *roleFixture, _ string) any { return map[string]any{"PublicJWK": newSigner(f.t).jwk} }

// TestRolesOfEveryOperation calls every operation of the document as every role of one organization, and
// checks the role rules: a caller is refused (403 Permission; for a guest, granted nothing, 404 for what it
// may not view) exactly when its role does not hold what the operation's x-hubd-permission names, and
// otherwise succeeds. Writes run with dry_run where the
// operation has it; the weakest role goes first, so every refusal meets the fixture intact.
func TestRolesOfEveryOperation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newRoleFixture(t, env)
	doc, err := apitest.Document()
	require.NoError(t, err)

	type operation struct {
		method, path string
		op           *openapi3.Operation
	}
	var ops []operation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Extensions["x-hubd-served"] == "root" {
				continue // sign-in and health take no token: roles do not apply (signin tests cover them)
			}
			ops = append(ops, operation{method, path, op})
		}
	}
	// Operations that remove what others act on go last.
	sort.Slice(ops, func(i, j int) bool {
		di, dj := ops[i].method == http.MethodDelete, ops[j].method == http.MethodDelete
		if di != dj {
			return dj
		}
		return ops[i].op.OperationID < ops[j].op.OperationID
	})
	roles := []auth.Role{auth.RoleGuest, auth.RoleViewer, auth.RoleMember, auth.RoleManager, auth.RoleAdmin}
	for _, o := range ops {
		perm, _ := o.op.Extensions["x-hubd-permission"].(string)
		req := roleRequests[o.op.OperationID]
		path := "/api" + o.path
		for name, value := range f.params {
			path = strings.ReplaceAll(path, "{"+name+"}", value)
		}
		if req.path != nil {
			path = req.path(f)
		}
		require.NotContains(t, path, "{", "%s: the fixture has no value for a path parameter of %s", o.op.OperationID, o.path)
		query := url.Values{}
		for k, v := range req.query {
			query[k] = v
		}
		if o.op.Parameters.GetByInAndName(openapi3.ParameterInQuery, "dry_run") != nil {
			query.Set("dry_run", "true")
		}
		if len(query) > 0 {
			path += "?" + query.Encode()
		}
		if o.op.RequestBody != nil && o.op.RequestBody.Value.Required && req.body == nil {
			t.Fatalf("%s takes a body: give it one in roleRequests", o.op.OperationID)
		}
		for _, role := range roles {
			var body any
			if req.body != nil {
				body = req.body(f, strings.SplitN(path, "?", 2)[0])
			}
			resp := f.clients[role].Do(o.method, path, body)
			allowed := perm == "None" || perm == "Authenticated" ||
				authz.Allowed(auth.Principal{Role: role}, authz.Permission(perm), authz.Target{})
			if !allowed {
				if role == auth.RoleGuest && guestWithheld(o.op, req, resp) {
					continue
				}
				if resp.Status != http.StatusForbidden {
					t.Errorf("%s as %s (needs %s): status %d, want 403; body: %s", o.op.OperationID, role, perm, resp.Status, resp.Body)
					continue
				}
				resp.ExpectError(http.StatusForbidden, api.ErrorTypePermission)
				continue
			}
			if resp.Status >= 300 && !contains(req.also, resp.Status) {
				t.Errorf("%s as %s (needs %s): status %d, want success; body: %s", o.op.OperationID, role, perm, resp.Status, resp.Body)
			}
		}
	}
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
