package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// changeWorkflowFixture is an organization (acme) with Spaces dev and prod, and another organization
// (globex) with a ChangeWorkflow of its own.
type changeWorkflowFixture struct {
	env       *apitest.Env
	admin     *apitest.Client
	dev, prod string // /api/space/<id>
	devID     uuid.UUID
	prodID    uuid.UUID
	foreign   api.ChangeWorkflow
}

func newChangeWorkflowFixture(t *testing.T) changeWorkflowFixture {
	t.Helper()
	env := apitest.New(t)
	f := changeWorkflowFixture{env: env, admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin))}
	f.devID = createSpace(t, f.admin, map[string]any{"Slug": "dev", "Labels": map[string]string{"env": "dev"}}).SpaceID
	f.prodID = createSpace(t, f.admin, map[string]any{"Slug": "prod", "Labels": map[string]string{"env": "prod"}}).SpaceID
	f.dev, f.prod = "/api/space/"+f.devID.String(), "/api/space/"+f.prodID.String()
	other := env.Client(env.Token("globex", "gina", auth.RoleAdmin))
	sp := createSpace(t, other, map[string]any{"Slug": "theirs"})
	other.Post("/api/space/"+sp.SpaceID.String()+"/change_workflow", map[string]any{"Slug": "theirs", "Stages": []any{map[string]any{"Name": "one"}}}).
		Expect(http.StatusOK).JSON(&f.foreign)
	return f
}

// workflowBody is a valid ChangeWorkflow: dev, then prod behind Approved and a custom gate, Final Healthy.
func workflowBody(slug string) map[string]any {
	return map[string]any{
		"Slug": slug, "DisplayName": "Dev to prod", "Labels": map[string]string{"team": "web"},
		"Stages": []any{
			map[string]any{"Name": "dev", "WhereSpace": "Labels.env = 'dev'"},
			map[string]any{"Name": "prod", "WhereSpace": "Labels.env = 'prod'", "Prerequisites": []string{"Approved", "tested"}},
		},
		"Final": map[string]any{"Prerequisites": []string{"Healthy"}},
		"CustomPrerequisites": []any{map[string]any{"Name": "tested", "Description": "a passing test attestation",
			"Expression": "cel:revision.ValidationPassed && attestations.exists(a, a.Type == 'Test' && a.Result == 'Passed')"}},
	}
}

// TestChangeWorkflows: every operation of the family: create (content as sent, empty lists rather than
// null), allow_exists, get with include, list and list-all with order_by on every order field, where and
// contains, PUT (Version checked), PATCH, clone, bulk patch, delete and bulk delete, DeleteGates.
func TestChangeWorkflows(t *testing.T) {
	t.Parallel()
	f := newChangeWorkflowFixture(t)
	c := f.admin

	var w api.ChangeWorkflow
	c.Post(f.dev+"/change_workflow", workflowBody("promote")).Expect(http.StatusOK).JSON(&w)
	require.Equal(t, "ChangeWorkflow", w.EntityType)
	require.Equal(t, f.devID, w.SpaceID)
	require.Len(t, w.Stages, 2)
	require.Equal(t, api.ChangeWorkflowStage{Name: "dev", WhereSpace: "Labels.env = 'dev'", Prerequisites: []string{}}, w.Stages[0])
	require.Equal(t, []string{"Approved", "tested"}, w.Stages[1].Prerequisites)
	require.Equal(t, &api.ChangeWorkflowFinalStage{Prerequisites: []string{"Healthy"}}, w.Final)
	require.Equal(t, "tested", w.CustomPrerequisites[0].Name)
	require.Equal(t, "a passing test attestation", w.CustomPrerequisites[0].Description)
	path := f.dev + "/change_workflow/" + w.ChangeWorkflowID.String()

	c.Post(f.dev+"/change_workflow", workflowBody("promote")).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var same api.ChangeWorkflow
	c.Post(f.dev+"/change_workflow?allow_exists=true", workflowBody("promote")).Expect(http.StatusOK).JSON(&same)
	require.Equal(t, w.ChangeWorkflowID, same.ChangeWorkflowID)

	// A minimal one: Final null, no CustomPrerequisites.
	var single api.ChangeWorkflow
	c.Post(f.prod+"/change_workflow", map[string]any{"Slug": "single", "Stages": []any{map[string]any{"Name": "only", "Prerequisites": []string{"Promoted"}}}}).
		Expect(http.StatusOK).JSON(&single)
	require.Nil(t, single.Final)
	require.NotNil(t, single.CustomPrerequisites)
	require.Empty(t, single.CustomPrerequisites)

	var got api.ExtendedChangeWorkflow
	c.Get(path + "?include=SpaceID,OrganizationID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, w, got.ChangeWorkflow)
	require.Equal(t, "dev", got.Space.Slug)
	require.NotNil(t, got.Organization)
	c.Get(f.prod+"/change_workflow/"+w.ChangeWorkflowID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var selected map[string]any
	c.Get(path + "?select=Slug,Stages").Expect(http.StatusOK).JSON(&selected)
	require.Contains(t, selected["ChangeWorkflow"], "Stages")

	var list []api.ExtendedChangeWorkflow
	c.Get(f.dev + "/change_workflow").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	for _, field := range []string{"ChangeWorkflowID", "CreatedAt", "DisplayName", "HiddenReason", "OrganizationID", "Slug", "SpaceID", "UpdatedAt"} {
		c.Get("/api/change_workflow?include=SpaceID&order_by=" + field).Expect(http.StatusOK).JSON(&list)
		require.Len(t, list, 2, field)
	}
	c.Get("/api/change_workflow?order_by=Slug").Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"promote", "single"}, []string{list[0].ChangeWorkflow.Slug, list[1].ChangeWorkflow.Slug})
	c.Get("/api/change_workflow?" + where("Labels.team = 'web'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get("/api/change_workflow?contains=singl").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, single.ChangeWorkflowID, list[0].ChangeWorkflow.ChangeWorkflowID)
	c.Get("/api/change_workflow?"+where("Stages = 'x'").Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// PUT replaces the settable fields; a stale Version is 409.
	put := w
	put.DisplayName = "Promote"
	put.Stages = append(put.Stages, api.ChangeWorkflowStage{Name: "eu", WhereSpace: "Slug LIKE 'eu-%'", Prerequisites: []string{}})
	put.Final = nil
	var updated api.ChangeWorkflow
	c.Put(path, put).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "Promote", updated.DisplayName)
	require.Len(t, updated.Stages, 3)
	require.Nil(t, updated.Final)
	require.Equal(t, w.Version+1, updated.Version)
	c.Put(path, put).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	stale := updated
	stale.Version = w.Version
	c.Put(path, stale).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"Version": w.Version, "DisplayName": "old"}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// PATCH replaces a list whole and checks the result.
	c.Patch(path, map[string]any{"Final": map[string]any{"Prerequisites": []string{"Released", "tested"}}, "DeleteGates": map[string]bool{"keep": true}}).
		Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, []string{"Released", "tested"}, updated.Final.Prerequisites)
	e := c.Patch(path, map[string]any{"CustomPrerequisites": nil}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Stages[1].Prerequisites[1]", e.Error.ErrorMetadata.Items[0].Item, "tested is still named")
	c.Patch(path, map[string]any{"Final": nil}).Expect(http.StatusOK).JSON(&updated)
	require.Nil(t, updated.Final)

	// Clone into prod with a prefix.
	var cloned []api.ChangeWorkflowCreateOrUpdateResponse
	c.Post("/api/change_workflow?"+where("Slug = 'promote'").Encode()+"&name_prefixes=copy-&"+url.Values{"where_space": {"Slug = 'prod'"}}.Encode(),
		map[string]any{"DisplayName": "Copy"}).Expect(http.StatusOK).JSON(&cloned)
	require.Len(t, cloned, 1)
	require.Equal(t, "copy-promote", cloned[0].ChangeWorkflow.Slug)
	require.Equal(t, f.prodID, cloned[0].ChangeWorkflow.SpaceID)
	require.Equal(t, updated.Stages, cloned[0].ChangeWorkflow.Stages)
	// A clone whose patch breaks the content is refused naming the field.
	e = c.Post("/api/change_workflow?"+where("Slug = 'promote'").Encode()+"&name_prefixes=bad-",
		map[string]any{"Stages": []any{map[string]any{"Name": "x", "Prerequisites": []string{"nope"}}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Stages[0].Prerequisites[0]", e.Error.ErrorMetadata.Items[0].Item)

	// Bulk patch: one item's content broken gives 207.
	var patched []api.ChangeWorkflowCreateOrUpdateResponse
	c.Patch("/api/change_workflow?"+where("SpaceID = '"+f.prodID.String()+"'").Encode(), map[string]any{"Labels": map[string]string{"bulk": "yes"}}).
		Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched, 2)
	require.Equal(t, "yes", patched[0].ChangeWorkflow.Labels["bulk"])
	c.Patch("/api/change_workflow?"+where("Slug LIKE '%'").Encode(), map[string]any{"CustomPrerequisites": nil}).Expect(http.StatusMultiStatus).JSON(&patched)
	require.Len(t, patched, 3)
	failed := 0
	for _, p := range patched {
		if p.Error != nil {
			failed++
			require.Equal(t, api.ErrorTypeValidation, p.Error.Type)
		}
	}
	require.Equal(t, 2, failed, "promote and its copy name tested")

	// DeleteGates hold it; delete and bulk delete.
	c.Delete(path).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(path + "?dry_run=true").Expect(http.StatusOK)
	c.Get(path).Expect(http.StatusOK)
	c.Delete(path).Expect(http.StatusOK)
	c.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var removed []api.DeleteResponse
	// The copy kept the source's DeleteGates: it stays, the other goes (207).
	c.Delete("/api/change_workflow?" + where("Labels.bulk = 'yes'").Encode()).Expect(http.StatusMultiStatus).JSON(&removed)
	require.Len(t, removed, 2)
	c.Get("/api/change_workflow").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "copy-promote", list[0].ChangeWorkflow.Slug)
}

// TestChangeWorkflowValidation: each content rule refuses a write with 400 Validation naming the field, on
// create, PUT and PATCH alike.
func TestChangeWorkflowValidation(t *testing.T) {
	t.Parallel()
	f := newChangeWorkflowFixture(t)
	c := f.admin
	var w api.ChangeWorkflow
	c.Post(f.dev+"/change_workflow", workflowBody("ok")).Expect(http.StatusOK).JSON(&w)
	path := f.dev + "/change_workflow/" + w.ChangeWorkflowID.String()

	stages := func(st ...map[string]any) []any {
		out := make([]any, len(st))
		for i, s := range st {
			out[i] = s
		}
		return out
	}
	custom := func(name, expr string) []any {
		return []any{map[string]any{"Name": name, "Expression": expr}}
	}
	many := make([]any, 51)
	for i := range many {
		many[i] = map[string]any{"Name": "gate" + strings.Repeat("x", i), "Expression": "cel:true"}
	}
	for _, tc := range []struct {
		name    string
		patch   map[string]any
		item    string
		message string
	}{
		{"bad CEL", map[string]any{"CustomPrerequisites": custom("tested", "cel:revision.(")}, "CustomPrerequisites[0].Expression", "Syntax error"},
		{"missing cel: prefix", map[string]any{"CustomPrerequisites": custom("tested", "revision.ValidationPassed")}, "CustomPrerequisites[0].Expression", `"cel:"`},
		{"undeclared variable", map[string]any{"CustomPrerequisites": custom("tested", "cel:target.Healthy")}, "CustomPrerequisites[0].Expression", "target"},
		{"not a bool", map[string]any{"CustomPrerequisites": custom("tested", "cel:size(releases)")}, "CustomPrerequisites[0].Expression", "bool"},
		{"built-in name", map[string]any{"CustomPrerequisites": custom("Approved", "cel:true")}, "CustomPrerequisites[0].Name", "built-in"},
		{"unknown prerequisite", map[string]any{"Stages": stages(map[string]any{"Name": "a", "Prerequisites": []string{"Approved", "Deployed"}})},
			"Stages[0].Prerequisites[1]", "Deployed"},
		{"unknown final prerequisite", map[string]any{"Final": map[string]any{"Prerequisites": []string{"nope"}}}, "Final.Prerequisites[0]", "nope"},
		{"duplicate stage", map[string]any{"Stages": stages(map[string]any{"Name": "a"}, map[string]any{"Name": "b"}, map[string]any{"Name": "a"})},
			"Stages[2].Name", "twice"},
		{"bad WhereSpace", map[string]any{"Stages": stages(map[string]any{"Name": "a"}, map[string]any{"Name": "b", "WhereSpace": "Labels.env = "})},
			"Stages[1].WhereSpace", "Stages[1].WhereSpace"},
		{"WhereSpace on an unknown attribute", map[string]any{"Stages": stages(map[string]any{"Name": "a", "WhereSpace": "Color = 'red'"})},
			"Stages[0].WhereSpace", "Color"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := c.Patch(path, tc.patch).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
			require.Equal(t, tc.item, e.Error.ErrorMetadata.Items[0].Item, e.Error.Message)
			require.Contains(t, e.Error.Message, tc.message)
			body := workflowBody("new")
			for k, v := range tc.patch {
				body[k] = v
			}
			e = c.Post(f.dev+"/change_workflow", body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
			require.Equal(t, tc.item, e.Error.ErrorMetadata.Items[0].Item, e.Error.Message)
		})
	}
	// The schema bounds: no Stages, more than 50 CustomPrerequisites.
	e := c.Patch(path, map[string]any{"CustomPrerequisites": many}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "CustomPrerequisites", e.Error.ErrorMetadata.Items[0].Item)
	c.Post(f.dev+"/change_workflow", map[string]any{"Slug": "none", "Stages": []any{}}).Expect(http.StatusBadRequest)
	c.Post(f.dev+"/change_workflow", map[string]any{"Slug": "none"}).Expect(http.StatusBadRequest)
	c.Patch(path, map[string]any{"Stages": nil}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	e = c.Patch(path, map[string]any{"Stages": stages(map[string]any{"Name": strings.Repeat("n", 65)})}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Stages[0].Name", e.Error.ErrorMetadata.Items[0].Item)
	// Nothing was written.
	var got api.ChangeWorkflow
	c.Get(path).Expect(http.StatusOK).Map()
	c.Put(path, w).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, w.Stages, got.Stages)
}

// TestChangeWorkflowRoles: a viewer reads ChangeWorkflows but cannot create, change or delete one; a member
// can; a guest granted nothing sees none; a viewer granted Edit on the Space may write there.
func TestChangeWorkflowRoles(t *testing.T) {
	t.Parallel()
	f := newChangeWorkflowFixture(t)
	var w api.ChangeWorkflow
	f.admin.Post(f.dev+"/change_workflow", workflowBody("promote")).Expect(http.StatusOK).JSON(&w)
	path := f.dev + "/change_workflow/" + w.ChangeWorkflowID.String()

	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Get(path).Expect(http.StatusOK)
	var list []api.ExtendedChangeWorkflow
	viewer.Get("/api/change_workflow").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	viewer.Post(f.dev+"/change_workflow", workflowBody("v")).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Patch(path, map[string]any{"DisplayName": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Put(path, w).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Delete(path).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	guest := f.env.Client(f.env.Token("acme", "gus", auth.RoleGuest))
	guest.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	guest.Get("/api/change_workflow").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	member := f.env.Client(f.env.Token("acme", "mo", auth.RoleMember))
	var changed api.ChangeWorkflow
	member.Patch(path, map[string]any{"DisplayName": "by a member"}).Expect(http.StatusOK).JSON(&changed)
	require.Equal(t, "by a member", changed.DisplayName)
	member.Post(f.prod+"/change_workflow", workflowBody("mine")).Expect(http.StatusOK)
	member.Delete(path).Expect(http.StatusOK)
}

// TestChangeWorkflowTenancy: another organization's ChangeWorkflow is 404 by every path, and its lists do
// not show it; a User in both organizations sees each organization's own.
func TestChangeWorkflowTenancy(t *testing.T) {
	t.Parallel()
	f := newChangeWorkflowFixture(t)
	c := f.admin
	foreign := f.foreign.ChangeWorkflowID.String()
	c.Get("/api/space/"+f.foreign.SpaceID.String()+"/change_workflow/"+foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get(f.dev+"/change_workflow/"+foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Patch(f.dev+"/change_workflow/"+foreign, map[string]any{"DisplayName": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Put(f.dev+"/change_workflow/"+foreign, f.foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(f.dev+"/change_workflow/"+foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get("/api/space/"+f.foreign.SpaceID.String()+"/change_workflow").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedChangeWorkflow
	c.Get("/api/change_workflow?" + where("ChangeWorkflowID = '"+foreign+"'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	// alice is in globex too: there she sees globex's workflow only.
	c.Post(f.dev+"/change_workflow", workflowBody("acme-only")).Expect(http.StatusOK)
	aliceGlobex := f.env.Client(f.env.Token("globex", "alice", auth.RoleViewer))
	aliceGlobex.Get("/api/change_workflow").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, f.foreign.ChangeWorkflowID, list[0].ChangeWorkflow.ChangeWorkflowID)
	c.Get("/api/change_workflow").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "acme-only", list[0].ChangeWorkflow.Slug)
}
