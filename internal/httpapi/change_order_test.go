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
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/store"
)

// changeOrderFixture is an organization (acme) with two Spaces, an Invocation and Filters of Spaces and of
// Units in dev, and another organization (globex) with the same of its own and a ChangeOrder.
type changeOrderFixture struct {
	env                       *apitest.Env
	admin                     *apitest.Client
	dev, prod                 string // /api/space/<id>
	devID, prodID             uuid.UUID
	invocation                uuid.UUID
	spaceFilter, unitFilter   uuid.UUID
	foreign                   api.ChangeOrder
	foreignSpace              uuid.UUID
	foreignInvocation         uuid.UUID
	foreignSpaceFilter, fUnit uuid.UUID
	workflow, foreignWorkflow api.ChangeWorkflow
}

func newChangeOrderFixture(t *testing.T) changeOrderFixture {
	t.Helper()
	env := apitest.New(t)
	f := changeOrderFixture{env: env, admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin))}
	f.devID = createSpace(t, f.admin, map[string]any{"Slug": "dev"}).SpaceID
	f.prodID = createSpace(t, f.admin, map[string]any{"Slug": "prod"}).SpaceID
	f.dev, f.prod = "/api/space/"+f.devID.String(), "/api/space/"+f.prodID.String()
	refs := func(c *apitest.Client, sp string) (inv, spaces, units uuid.UUID) {
		var i api.Invocation
		c.Post(sp+"/invocation", map[string]any{"Slug": "checks", "ToolchainType": "AppConfig/Env",
			"FunctionInvocations": []map[string]any{{"FunctionName": "is-valid"}}}).Expect(http.StatusOK).JSON(&i)
		var fs, fu api.Filter
		c.Post(sp+"/filter", map[string]any{"Slug": "prods", "From": "Space", "Where": "Slug = 'prod'"}).Expect(http.StatusOK).JSON(&fs)
		c.Post(sp+"/filter", map[string]any{"Slug": "web", "From": "Unit", "Where": "Slug = 'web'"}).Expect(http.StatusOK).JSON(&fu)
		return i.InvocationID, fs.FilterID, fu.FilterID
	}
	f.invocation, f.spaceFilter, f.unitFilter = refs(f.admin, f.dev)
	other := env.Client(env.Token("globex", "gina", auth.RoleAdmin))
	f.foreignSpace = createSpace(t, other, map[string]any{"Slug": "theirs"}).SpaceID
	theirs := "/api/space/" + f.foreignSpace.String()
	f.foreignInvocation, f.foreignSpaceFilter, f.fUnit = refs(other, theirs)
	other.Post(theirs+"/change_order", map[string]any{"Slug": "theirs"}).Expect(http.StatusOK).JSON(&f.foreign)
	stages := []map[string]any{{"Name": "dev", "WhereSpace": "Slug = 'dev'"}, {"Name": "prod", "WhereSpace": "Slug = 'prod'", "Prerequisites": []string{"Promoted", "ok"}}}
	custom := []map[string]any{{"Name": "ok", "Expression": "cel:true", "Description": "always"}}
	f.admin.Post(f.prod+"/change_workflow", map[string]any{"Slug": "dev-to-prod", "Stages": stages, "CustomPrerequisites": custom}).
		Expect(http.StatusOK).JSON(&f.workflow)
	other.Post(theirs+"/change_workflow", map[string]any{"Slug": "theirs", "Stages": stages[:1]}).Expect(http.StatusOK).JSON(&f.foreignWorkflow)
	return f
}

func (f changeOrderFixture) create(t *testing.T, space string, body map[string]any) api.ChangeOrder {
	t.Helper()
	var co api.ChangeOrder
	f.admin.Post(space+"/change_order", body).Expect(http.StatusOK).JSON(&co)
	return co
}

func (f changeOrderFixture) path(co api.ChangeOrder) string {
	return "/api/space/" + co.SpaceID.String() + "/change_order/" + co.ChangeOrderID.String()
}

// setProgress records p on co as a promotion would (changeorder.SetProgress).
func (f changeOrderFixture) setProgress(t *testing.T, co api.ChangeOrder, p changeorder.Progress) changeorder.ChangeOrder {
	t.Helper()
	var out changeorder.ChangeOrder
	require.NoError(t, f.env.App.Store.WithTx(context.Background(), store.TxOptions{}, func(tx *store.Tx) error {
		sc := authz.SystemScope(co.OrganizationID, "test")
		if _, err := changeorder.LockForPromote(context.Background(), sc, tx, co.ChangeOrderID); err != nil {
			return err
		}
		var err error
		out, err = changeorder.SetProgress(context.Background(), tx, co.OrganizationID, co.ChangeOrderID, p)
		return err
	}))
	return out
}

// TestChangeOrders: every operation of the family: create (New, its start and end Tags made and named),
// get with every include, list and list-all with order_by on every order field, where and contains, PUT,
// PATCH, clone (each copy New with its own Tags), bulk patch, delete and bulk delete, DeleteGates; read-only
// fields sent are ignored.
func TestChangeOrders(t *testing.T) {
	t.Parallel()
	f := newChangeOrderFixture(t)
	c := f.admin

	co := f.create(t, f.dev, map[string]any{"Slug": "raise", "DisplayName": "Raise replicas", "Description": "more web",
		"Labels": map[string]string{"team": "web"}, "State": "Resolved", "Stage": "prod", "AbortedReason": "no",
		"WhereSpace": "Labels.env = 'prod'", "WhereUnit": "Slug = 'web'", "SpaceFilterID": f.spaceFilter, "UnitFilterID": f.unitFilter,
		"InScopeSpaceIDs": []uuid.UUID{f.prodID, f.prodID}, "Parameters": map[string]any{"replicas": 3},
		"ResolvedSpaceIDs": []uuid.UUID{f.prodID}})
	require.Equal(t, api.ChangeOrderState("New"), co.State, "a ChangeOrder is created New")
	require.Nil(t, co.Stage)
	require.Empty(t, co.AbortedReason)
	require.Equal(t, api.ChangeOrderUpdateType("UpgradeUnit"), co.UpdateType, "UpgradeUnit is the default")
	require.Equal(t, "ChangeOrder", co.EntityType)
	require.Equal(t, []uuid.UUID{f.prodID}, co.InScopeSpaceIDs)
	require.Equal(t, map[string]any{"replicas": float64(3)}, co.Parameters)
	require.Empty(t, co.ResolvedSpaceIDs)
	require.Empty(t, co.ReleasedSpaceIDs)
	require.Empty(t, co.RestoredSpaceIDs)
	require.Empty(t, co.ReleasedRestoredSpaceIDs)
	require.Empty(t, co.PromotionOverrides)
	require.Empty(t, co.PromotionFailures)
	require.Empty(t, co.SkippedUnits)
	require.Nil(t, co.ChangeWorkflowID)
	require.Nil(t, co.ChangeWorkflow)
	require.Nil(t, co.RestoreTagID)
	require.Nil(t, co.AdoptedEndTagID)
	require.NotNil(t, co.StartTagID)
	require.NotNil(t, co.EndTagID)
	path := f.path(co)

	// Its Tags are in its Space and name it.
	var tags []api.ExtendedTag
	c.Get(f.dev + "/tag?order_by=Slug&" + where("ChangeOrderID = '"+co.ChangeOrderID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&tags)
	require.Len(t, tags, 2)
	require.Equal(t, []string{"raise-end", "raise-start"}, []string{tags[0].Tag.Slug, tags[1].Tag.Slug})
	require.Equal(t, *co.EndTagID, tags[0].Tag.TagID)
	require.Equal(t, co.ChangeOrderID, *tags[1].Tag.ChangeOrderID)

	var tagEvents int
	require.NoError(t, f.env.App.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM event_log
		WHERE subject_entity_id = ANY($1) AND event_type = 'tag.created'`, []uuid.UUID{*co.StartTagID, *co.EndTagID}).Scan(&tagEvents))
	require.Equal(t, 2, tagEvents, "each Tag made with a ChangeOrder has its tag.created event")

	// A taken Tag Slug gets a suffix.
	c.Post(f.dev+"/tag", map[string]any{"Slug": "lower-start"}).Expect(http.StatusOK)
	lower := f.create(t, f.dev, map[string]any{"Slug": "lower", "Description": "fewer"})
	var start api.ExtendedTag
	c.Get(f.dev + "/tag/" + lower.StartTagID.String()).Expect(http.StatusOK).JSON(&start)
	require.Equal(t, "lower-start-2", start.Tag.Slug)

	c.Post(f.dev+"/change_order", map[string]any{"Slug": "raise"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var same api.ChangeOrder
	c.Post(f.dev+"/change_order?allow_exists=true", map[string]any{"Slug": "raise"}).Expect(http.StatusOK).JSON(&same)
	require.Equal(t, co.ChangeOrderID, same.ChangeOrderID)
	c.Post(f.dev+"/change_order?dry_run=true", map[string]any{"Slug": "dry"}).Expect(http.StatusOK)
	c.Get(f.dev + "/tag?" + where("Slug = 'dry-start'").Encode()).Expect(http.StatusOK).JSON(&tags)
	require.Empty(t, tags, "a dry run makes no Tags")

	// Get with every include.
	inv := f.create(t, f.dev, map[string]any{"Slug": "inv", "UpdateType": "Invoke", "InvocationID": f.invocation})
	var got api.ExtendedChangeOrder
	c.Get(path + "?include=SpaceID,OrganizationID,StartTagID,EndTagID,RestoreTagID,InvocationID,SpaceFilterID,UnitFilterID").
		Expect(http.StatusOK).JSON(&got)
	require.Equal(t, co, got.ChangeOrder)
	require.Equal(t, "dev", got.Space.Slug)
	require.NotNil(t, got.Organization)
	require.Equal(t, "raise-start", got.StartTag.Slug)
	require.Equal(t, "raise-end", got.EndTag.Slug)
	require.Nil(t, got.RestoreTag)
	require.Equal(t, "prods", got.SpaceFilter.Slug)
	require.Equal(t, "web", got.UnitFilter.Slug)
	require.Nil(t, got.Invocation)
	c.Get(f.path(inv) + "?include=InvocationID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "checks", got.Invocation.Slug)
	c.Get(f.prod+"/change_order/"+co.ChangeOrderID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	second := f.create(t, f.prod, map[string]any{"Slug": "elsewhere"})
	var list []api.ExtendedChangeOrder
	c.Get(f.prod + "/change_order").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, second.ChangeOrderID, list[0].ChangeOrder.ChangeOrderID)
	for _, field := range []string{"AdoptedEndTagID", "ChangeOrderID", "ChangeWorkflowID", "CreatedAt", "Description", "DisplayName",
		"EndTagID", "HiddenReason", "InvocationID", "OrganizationID", "RestoreTagID", "Slug", "SpaceFilterID", "SpaceID", "Stage",
		"StartTagID", "State", "UnitFilterID", "UpdateType", "UpdatedAt"} {
		c.Get("/api/change_order?include=SpaceID,EndTagID,InvocationID,OrganizationID,RestoreTagID,SpaceFilterID,StartTagID,UnitFilterID&order_by=" + field).
			Expect(http.StatusOK).JSON(&list)
		require.Len(t, list, 4, field)
	}
	c.Get("/api/change_order?order_by=Slug").Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"elsewhere", "inv", "lower", "raise"}, []string{list[0].ChangeOrder.Slug, list[1].ChangeOrder.Slug,
		list[2].ChangeOrder.Slug, list[3].ChangeOrder.Slug})
	c.Get("/api/change_order?" + where("State = 'New' AND UpdateType = 'Invoke'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "inv", list[0].ChangeOrder.Slug)
	c.Get("/api/change_order?contains=fewer").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, lower.ChangeOrderID, list[0].ChangeOrder.ChangeOrderID)

	// PUT replaces the settable fields; read-only ones sent are ignored.
	put := co
	put.DisplayName = "Raise"
	put.State = "Released"
	stage := "prod"
	put.Stage = &stage
	put.WhereUnit = ""
	var updated api.ChangeOrder
	c.Put(path, put).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "Raise", updated.DisplayName)
	require.Empty(t, updated.WhereUnit)
	require.Equal(t, api.ChangeOrderState("New"), updated.State)
	require.Nil(t, updated.Stage)
	require.Equal(t, co.StartTagID, updated.StartTagID, "a write keeps the Tags")
	c.Put(path, put).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"Description": "much more web", "DeleteGates": map[string]bool{"keep": true}, "State": "Resolved",
		"StartTagID": uuid.New()}).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "much more web", updated.Description)
	require.Equal(t, api.ChangeOrderState("New"), updated.State)
	require.Equal(t, co.StartTagID, updated.StartTagID)
	var cleared api.ChangeOrder
	c.Patch(path, map[string]any{"SpaceFilterID": nil, "Parameters": nil}).Expect(http.StatusOK).JSON(&cleared)
	require.Nil(t, cleared.SpaceFilterID)
	require.Empty(t, cleared.Parameters)

	// Clone into prod with a prefix: the copy is New, with Tags of its own in prod.
	var cloned []api.ChangeOrderCreateOrUpdateResponse
	c.Post("/api/change_order?"+where("Slug = 'raise'").Encode()+"&name_prefixes=copy-&"+url.Values{"where_space": {"Slug = 'prod'"}}.Encode(),
		map[string]any{"DisplayName": "Copy"}).Expect(http.StatusOK).JSON(&cloned)
	require.Len(t, cloned, 1)
	cp := *cloned[0].ChangeOrder
	require.Equal(t, "copy-raise", cp.Slug)
	require.Equal(t, f.prodID, cp.SpaceID)
	require.Equal(t, api.ChangeOrderState("New"), cp.State)
	require.NotEqual(t, *co.StartTagID, *cp.StartTagID)
	c.Get(f.prod + "/tag/" + cp.EndTagID.String()).Expect(http.StatusOK).JSON(&start)
	require.Equal(t, "copy-raise-end", start.Tag.Slug)

	var patched []api.ChangeOrderCreateOrUpdateResponse
	c.Patch("/api/change_order?"+where("SpaceID = '"+f.prodID.String()+"'").Encode(), map[string]any{"Labels": map[string]string{"bulk": "yes"}}).
		Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched, 2)
	require.Equal(t, "yes", patched[0].ChangeOrder.Labels["bulk"])

	// DeleteGates hold it; delete and bulk delete. Its Tags stay and name nothing.
	c.Delete(path).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(path + "?dry_run=true").Expect(http.StatusOK)
	c.Delete(path).Expect(http.StatusOK)
	c.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get(f.dev + "/tag/" + co.StartTagID.String()).Expect(http.StatusOK).JSON(&start)
	require.Nil(t, start.Tag.ChangeOrderID)
	var removed []api.DeleteResponse
	// The copy kept the source's DeleteGates: it stays, the other goes (207).
	c.Delete("/api/change_order?" + where("Labels.bulk = 'yes'").Encode()).Expect(http.StatusMultiStatus).JSON(&removed)
	require.Len(t, removed, 2)
	c.Get("/api/change_order").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 3)

	// A ChangeOrder's Tag is not deleted while it names the Tag.
	c.Delete(f.dev+"/tag/"+lower.StartTagID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
}

// TestChangeOrderRefusals: each field checked on write, with the field named: UpdateType, InvocationID
// (required by Invoke, refused otherwise, an Invocation of the organization), WhereSpace and WhereUnit,
// the Filters (of the organization, of the right entity type), InScopeSpaceIDs and ChangeWorkflowID;
// another organization's IDs are refused as random ones.
func TestChangeOrderRefusals(t *testing.T) {
	t.Parallel()
	f := newChangeOrderFixture(t)
	c := f.admin
	refused := func(body map[string]any, typ api.ErrorType, item string) {
		t.Helper()
		body["Slug"] = "bad"
		e := c.Post(f.dev+"/change_order", body).ExpectError(http.StatusBadRequest, typ)
		require.Equal(t, item, e.Error.ErrorMetadata.Items[0].Item)
	}
	refused(map[string]any{"UpdateType": "Replace"}, api.ErrorTypeUserInput, "UpdateType")
	refused(map[string]any{"UpdateType": "Invoke"}, api.ErrorTypeValidation, "InvocationID")
	refused(map[string]any{"UpdateType": "MergeUnits", "InvocationID": f.invocation}, api.ErrorTypeValidation, "InvocationID")
	refused(map[string]any{"InvocationID": f.invocation}, api.ErrorTypeValidation, "InvocationID")
	refused(map[string]any{"WhereSpace": "Bogus = 'x'"}, api.ErrorTypeValidation, "WhereSpace")
	refused(map[string]any{"WhereSpace": "Slug = "}, api.ErrorTypeValidation, "WhereSpace")
	refused(map[string]any{"WhereUnit": "ToolchainType ="}, api.ErrorTypeValidation, "WhereUnit")
	refused(map[string]any{"SpaceFilterID": f.unitFilter}, api.ErrorTypeValidation, "SpaceFilterID")
	refused(map[string]any{"UnitFilterID": f.spaceFilter}, api.ErrorTypeValidation, "UnitFilterID")
	refused(map[string]any{"ChangeWorkflowID": uuid.New()}, api.ErrorTypeValidation, "ChangeWorkflowID")

	post := func(field string, extra map[string]any) func(id uuid.UUID) *apitest.Response {
		return func(id uuid.UUID) *apitest.Response {
			body := map[string]any{"Slug": "ref", field: id}
			for k, v := range extra {
				body[k] = v
			}
			if field == "InScopeSpaceIDs" {
				body[field] = []uuid.UUID{id}
			}
			return c.Post(f.dev+"/change_order", body)
		}
	}
	requireNoSuchReference(t, "InvocationID", f.foreignInvocation, post("InvocationID", map[string]any{"UpdateType": "Invoke"}))
	requireNoSuchReference(t, "SpaceFilterID", f.foreignSpaceFilter, post("SpaceFilterID", nil))
	requireNoSuchReference(t, "UnitFilterID", f.fUnit, post("UnitFilterID", nil))
	requireNoSuchReference(t, "InScopeSpaceIDs", f.foreignSpace, post("InScopeSpaceIDs", nil))
	requireNoSuchReference(t, "ChangeWorkflowID", f.foreignWorkflow.ChangeWorkflowID, post("ChangeWorkflowID", nil))

	// The same checks on PATCH, PUT and bulk patch.
	co := f.create(t, f.dev, map[string]any{"Slug": "co"})
	path := f.path(co)
	requireNoSuchReference(t, "UnitFilterID", f.fUnit, func(id uuid.UUID) *apitest.Response {
		return c.Patch(path, map[string]any{"UnitFilterID": id})
	})
	requireNoSuchReference(t, "InvocationID", f.foreignInvocation, func(id uuid.UUID) *apitest.Response {
		return c.Patch("/api/change_order?"+where("Slug = 'co'").Encode(), map[string]any{"UpdateType": "Invoke", "InvocationID": id})
	})
	put := co
	put.WhereSpace = "Nope ="
	e := c.Put(path, put).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "WhereSpace", e.Error.ErrorMetadata.Items[0].Item)
	e = c.Patch(path, map[string]any{"UpdateType": "Invoke"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "InvocationID", e.Error.ErrorMetadata.Items[0].Item)
	var got api.ChangeOrder
	c.Patch(path, map[string]any{"UpdateType": "Invoke", "InvocationID": f.invocation}).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, f.invocation, *got.InvocationID)
	e = c.Patch(path, map[string]any{"UpdateType": "UpgradeUnit"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "InvocationID", e.Error.ErrorMetadata.Items[0].Item)
	c.Patch(path, map[string]any{"UpdateType": nil, "InvocationID": nil}).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.ChangeOrderUpdateType("UpgradeUnit"), got.UpdateType)
	requireNoSuchReference(t, "ChangeWorkflowID", f.foreignWorkflow.ChangeWorkflowID, func(id uuid.UUID) *apitest.Response {
		return c.Patch(path, map[string]any{"ChangeWorkflowID": id})
	})
}

// TestChangeOrderWorkflow: a ChangeOrder made with a ChangeWorkflowID carries a copy of the workflow's
// content (of any Space of the organization), which later edits of the workflow leave alone; changing
// ChangeWorkflowID while New copies the new one (null clears it); a copy copies the workflow again; a
// ChangeWorkflow the caller may not view is refused as a random one.
func TestChangeOrderWorkflow(t *testing.T) {
	t.Parallel()
	f := newChangeOrderFixture(t)
	c := f.admin
	co := f.create(t, f.dev, map[string]any{"Slug": "wf", "ChangeWorkflowID": f.workflow.ChangeWorkflowID, "ChangeWorkflow": map[string]any{"Stages": []any{map[string]any{"Name": "ignored"}}}})
	require.Equal(t, f.workflow.ChangeWorkflowID, *co.ChangeWorkflowID)
	require.NotNil(t, co.ChangeWorkflow)
	require.Len(t, co.ChangeWorkflow.Stages, 2)
	require.Equal(t, "prod", co.ChangeWorkflow.Stages[1].Name)
	require.Equal(t, []string{"Promoted", "ok"}, co.ChangeWorkflow.Stages[1].Prerequisites)
	require.Equal(t, "cel:true", co.ChangeWorkflow.CustomPrerequisites[0].Expression)

	// Editing the workflow later does not change the copy.
	wfPath := f.prod + "/change_workflow/" + f.workflow.ChangeWorkflowID.String()
	c.Patch(wfPath, map[string]any{"Stages": []map[string]any{{"Name": "only"}}, "CustomPrerequisites": nil}).Expect(http.StatusOK)
	var got api.ExtendedChangeOrder
	c.Get(f.path(co)).Expect(http.StatusOK).JSON(&got)
	require.Len(t, got.ChangeOrder.ChangeWorkflow.Stages, 2)

	// A write that leaves ChangeWorkflowID alone keeps the copy; setting it again (while New) copies anew;
	// null clears it.
	var patched api.ChangeOrder
	c.Patch(f.path(co), map[string]any{"Description": "d"}).Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched.ChangeWorkflow.Stages, 2)
	c.Patch(f.path(co), map[string]any{"ChangeWorkflowID": nil}).Expect(http.StatusOK).JSON(&patched)
	require.Nil(t, patched.ChangeWorkflow)
	var again api.ChangeOrder
	c.Patch(f.path(co), map[string]any{"ChangeWorkflowID": f.workflow.ChangeWorkflowID}).Expect(http.StatusOK).JSON(&again)
	require.Len(t, again.ChangeWorkflow.Stages, 1)
	require.Equal(t, "only", again.ChangeWorkflow.Stages[0].Name)

	// A copy copies the workflow as it is now.
	var cloned []api.ChangeOrderCreateOrUpdateResponse
	c.Post("/api/change_order?"+where("Slug = 'wf'").Encode()+"&name_prefixes=copy-", map[string]any{}).Expect(http.StatusOK).JSON(&cloned)
	require.Equal(t, "only", cloned[0].ChangeOrder.ChangeWorkflow.Stages[0].Name)

	// A guest granted the ChangeOrder's Space but not the workflow's is refused it as a random ID.
	guest := f.env.Principal("acme", "gil", auth.RoleGuest)
	grant := map[string]any{"UserIDs": map[string]bool{guest.UserID.String(): true}}
	c.Patch(f.dev, map[string]any{"Permissions": map[string]any{"View": grant, "CreateChildren": grant}}).Expect(http.StatusOK)
	gil := f.env.Client(f.env.Token("acme", "gil", auth.RoleGuest))
	gil.Post(f.dev+"/change_order", map[string]any{"Slug": "g"}).Expect(http.StatusOK)
	requireNoSuchReference(t, "ChangeWorkflowID", f.workflow.ChangeWorkflowID, func(id uuid.UUID) *apitest.Response {
		return gil.Post(f.dev+"/change_order", map[string]any{"Slug": "g2", "ChangeWorkflowID": id})
	})
}

// TestChangeOrderStates: a write setting AbortedReason aborts a New or InProgress ChangeOrder and is
// refused in the other States; an Aborted one changes only its descriptive fields and keeps a reason;
// State and Stage are read-only; promotions record progress through SetProgress (a new Version and a
// changeorder.updated event); ChangeWorkflowID changes only while New; an InProgress ChangeOrder is
// deleted only with detach; one that Attestations name is not deleted.
func TestChangeOrderStates(t *testing.T) {
	t.Parallel()
	f := newChangeOrderFixture(t)
	c := f.admin

	// New → Aborted.
	co := f.create(t, f.dev, map[string]any{"Slug": "a"})
	path := f.path(co)
	var got api.ChangeOrder
	c.Patch(path, map[string]any{"AbortedReason": "wrong change"}).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.ChangeOrderState("Aborted"), got.State)
	require.Equal(t, "wrong change", got.AbortedReason)
	c.Patch(path, map[string]any{"DisplayName": "Gave up", "Labels": map[string]string{"x": "y"}, "AbortedReason": "really wrong"}).
		Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "Gave up", got.DisplayName)
	require.Equal(t, "really wrong", got.AbortedReason)
	for field, value := range map[string]any{"WhereUnit": "Slug = 'x'", "Slug": "b", "UpdateType": "MergeUnits", "Parameters": map[string]any{"n": 1},
		"InScopeSpaceIDs": []uuid.UUID{f.prodID}, "UnitFilterID": f.unitFilter} {
		e := c.Patch(path, map[string]any{field: value}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, field, e.Error.ErrorMetadata.Items[0].Item)
		require.Contains(t, e.Error.Message, "Aborted")
	}
	e := c.Patch(path, map[string]any{"AbortedReason": ""}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "AbortedReason", e.Error.ErrorMetadata.Items[0].Item)

	// InProgress → Aborted; Resolved refuses an AbortedReason. Progress is the promotion's.
	b := f.create(t, f.dev, map[string]any{"Slug": "b", "InScopeSpaceIDs": []uuid.UUID{f.prodID}})
	stage := "staging"
	unitID := uuid.New()
	rec := f.setProgress(t, b, changeorder.Progress{State: changeorder.InProgress, Stage: &stage, ResolvedSpaceIDs: []uuid.UUID{f.prodID},
		SkippedUnits:       map[uuid.UUID]string{unitID: "not in scope"},
		PromotionOverrides: []changeorder.PromotionOverride{{Stage: "staging", Prerequisites: []string{"Validated"}, Reason: "hotfix", UserID: unitID}},
		PromotionFailures:  []changeorder.PromotionFailure{{Stage: "staging", SpaceID: f.prodID, Prerequisite: "Validated", Message: "invalid"}}})
	require.Equal(t, b.Version+1, rec.Version)
	var events int
	require.NoError(t, f.env.App.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM event_log
		WHERE subject_entity_id = $1 AND event_type = 'changeorder.updated' AND (payload->>'Version')::bigint = $2`,
		b.ChangeOrderID, rec.Version).Scan(&events))
	require.Equal(t, 1, events, "recorded progress has its changeorder.updated event")
	bpath := f.path(b)
	var ext api.ExtendedChangeOrder
	c.Get(bpath).Expect(http.StatusOK).JSON(&ext)
	got = ext.ChangeOrder
	require.Equal(t, api.ChangeOrderState("InProgress"), got.State)
	require.Equal(t, "staging", *got.Stage)
	require.Equal(t, []uuid.UUID{f.prodID}, got.ResolvedSpaceIDs)
	require.Equal(t, map[string]string{unitID.String(): "not in scope"}, got.SkippedUnits)
	require.Equal(t, []string{"Validated"}, got.PromotionOverrides[0].Prerequisites)
	require.Equal(t, "invalid", got.PromotionFailures[0].Message)
	c.Get("/api/change_order?" + where("Stage = 'staging'").Encode()).Expect(http.StatusOK)

	// ChangeWorkflowID changes only while New.
	e = c.Patch(bpath, map[string]any{"ChangeWorkflowID": uuid.New()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ChangeWorkflowID", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "InProgress")

	// Deleting an InProgress ChangeOrder needs detach.
	c.Delete(bpath).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Delete("/api/change_order?"+where("Slug = 'b'").Encode()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Delete(bpath + "?detach=true&dry_run=true").Expect(http.StatusOK)
	c.Patch(bpath, map[string]any{"AbortedReason": "stop"}).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.ChangeOrderState("Aborted"), got.State)

	r := f.create(t, f.dev, map[string]any{"Slug": "r"})
	f.setProgress(t, r, changeorder.Progress{State: changeorder.Resolved})
	e = c.Patch(f.path(r), map[string]any{"AbortedReason": "late"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "AbortedReason", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "Resolved")
	c.Patch(f.path(r), map[string]any{"WhereUnit": "Slug = 'web'"}).Expect(http.StatusOK)

	// SetProgress records States only.
	err := f.env.App.Store.WithTx(context.Background(), store.TxOptions{}, func(tx *store.Tx) error {
		_, err := changeorder.SetProgress(context.Background(), tx, r.OrganizationID, r.ChangeOrderID, changeorder.Progress{State: "Done"})
		return err
	})
	require.ErrorContains(t, err, "not a State")

	// Detach deletes an InProgress one.
	d := f.create(t, f.dev, map[string]any{"Slug": "d"})
	f.setProgress(t, d, changeorder.Progress{State: changeorder.InProgress})
	c.Delete("/api/change_order?detach=true&" + where("Slug = 'd'").Encode()).Expect(http.StatusOK)

	// An Attestation names a ChangeOrder of its Space; one naming it keeps it.
	var u api.UnitCreateOrUpdateResponse
	c.Post(f.dev+"/unit", map[string]any{"Slug": "web", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&u)
	c.Put(f.dev+"/unit/"+u.Unit.UnitID.String()+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)
	var revs []api.ExtendedRevision
	c.Get(f.dev + "/unit/" + u.Unit.UnitID.String() + "/revision").Expect(http.StatusOK).JSON(&revs)
	rev := []uuid.UUID{revs[0].Revision.RevisionID}
	elsewhere := f.create(t, f.prod, map[string]any{"Slug": "p"})
	for _, id := range []uuid.UUID{elsewhere.ChangeOrderID, f.foreign.ChangeOrderID, uuid.New()} {
		e = c.Post(f.dev+"/attestation", map[string]any{"Type": "Check", "RevisionIDs": rev, "ChangeOrderID": id}).
			ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, "ChangeOrderID", e.Error.ErrorMetadata.Items[0].Item)
	}
	var att api.Attestation
	c.Post(f.dev+"/attestation", map[string]any{"Type": "Check", "RevisionIDs": rev, "ChangeOrderID": r.ChangeOrderID}).
		Expect(http.StatusOK).JSON(&att)
	require.Equal(t, r.ChangeOrderID, *att.ChangeOrderID)
	c.Delete(f.path(r)).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
}

// TestChangeOrderTenancy: another organization's ChangeOrder is 404 everywhere as a random ID is, and a
// User of two organizations sees each organization's ChangeOrders only with that organization's token.
func TestChangeOrderTenancy(t *testing.T) {
	t.Parallel()
	f := newChangeOrderFixture(t)
	c := f.admin
	foreign := f.foreign.ChangeOrderID.String()
	c.Get("/api/space/"+f.foreignSpace.String()+"/change_order/"+foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get(f.dev+"/change_order/"+foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Patch(f.dev+"/change_order/"+foreign, map[string]any{"AbortedReason": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Put(f.dev+"/change_order/"+foreign, map[string]any{"Slug": "x", "Version": 1}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(f.dev+"/change_order/"+foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Post("/api/space/"+f.foreignSpace.String()+"/change_order", map[string]any{"Slug": "in"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedChangeOrder
	c.Get("/api/change_order").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	var items []api.ChangeOrderCreateOrUpdateResponse
	c.Patch("/api/change_order?"+where("Slug = 'theirs'").Encode(), map[string]any{"DisplayName": "x"}).Expect(http.StatusOK).JSON(&items)
	require.Empty(t, items)
	err := f.env.App.Store.WithTx(context.Background(), store.TxOptions{}, func(tx *store.Tx) error {
		_, err := changeorder.LockForPromote(context.Background(), authz.SystemScope(f.devOrg(t), "test"), tx, f.foreign.ChangeOrderID)
		return err
	})
	require.Error(t, err)
	require.Contains(t, err.Error(), "not found")

	// Gina belongs to both organizations: with acme's token she sees acme's ChangeOrders only.
	mine := f.create(t, f.dev, map[string]any{"Slug": "mine"})
	gina := f.env.Client(f.env.Token("acme", "gina", auth.RoleAdmin))
	gina.Get("/api/change_order").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, mine.ChangeOrderID, list[0].ChangeOrder.ChangeOrderID)
	e := gina.Post(f.dev+"/change_order", map[string]any{"Slug": "g", "UpdateType": "Invoke", "InvocationID": f.foreignInvocation}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "InvocationID", e.Error.ErrorMetadata.Items[0].Item)
	ginaGlobex := f.env.Client(f.env.Token("globex", "gina", auth.RoleAdmin))
	ginaGlobex.Get("/api/change_order").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, f.foreign.ChangeOrderID, list[0].ChangeOrder.ChangeOrderID)
	ginaGlobex.Delete(f.path(mine)+"?detach=true").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

func (f changeOrderFixture) devOrg(t *testing.T) uuid.UUID {
	t.Helper()
	var sp api.Space
	f.admin.Get(f.dev).Expect(http.StatusOK).JSON(&sp)
	return sp.OrganizationID
}

// TestChangeOrderRoles: a viewer reads ChangeOrders but cannot create, change or delete one; a member can;
// a guest reaches one only through its Permissions (View to read, Edit to abort), and a ChangeOrder it may
// not view is 404 to it, also to LockForPromote.
func TestChangeOrderRoles(t *testing.T) {
	t.Parallel()
	f := newChangeOrderFixture(t)
	co := f.create(t, f.dev, map[string]any{"Slug": "co"})
	path := f.path(co)
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Get(path).Expect(http.StatusOK)
	viewer.Post(f.dev+"/change_order", map[string]any{"Slug": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Patch(path, map[string]any{"AbortedReason": "no"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Delete(path).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member := f.env.Client(f.env.Token("acme", "mia", auth.RoleMember))
	var mine api.ChangeOrder
	member.Post(f.dev+"/change_order", map[string]any{"Slug": "m"}).Expect(http.StatusOK).JSON(&mine)
	member.Patch(path, map[string]any{"Description": "member"}).Expect(http.StatusOK)
	member.Delete(f.path(mine)).Expect(http.StatusOK)

	guestP := f.env.Principal("acme", "gil", auth.RoleGuest)
	gil := f.env.Client(f.env.Token("acme", "gil", auth.RoleGuest))
	gil.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	sc := authz.Scope{Principal: guestP}
	err := f.env.App.Store.WithTx(context.Background(), store.TxOptions{}, func(tx *store.Tx) error {
		_, err := changeorder.LockForPromote(context.Background(), sc, tx, co.ChangeOrderID)
		return err
	})
	require.Error(t, err)
	grant := map[string]any{"UserIDs": map[string]bool{guestP.UserID.String(): true}}
	f.admin.Patch(path, map[string]any{"Permissions": map[string]any{"View": grant}}).Expect(http.StatusOK)
	gil.Get(path).Expect(http.StatusOK)
	gil.Patch(path, map[string]any{"AbortedReason": "no"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	f.admin.Patch(path, map[string]any{"Permissions": map[string]any{"View": grant, "Edit": grant}}).Expect(http.StatusOK)
	var got api.ChangeOrder
	gil.Patch(path, map[string]any{"AbortedReason": "no"}).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.ChangeOrderState("Aborted"), got.State)
	require.True(t, strings.HasPrefix(got.AbortedReason, "no"))
}
