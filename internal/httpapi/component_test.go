package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/component"
)

// componentFixture is an organization (acme) with two Spaces, and another organization (globex) with a
// Component of its own.
type componentFixture struct {
	env      *apitest.Env
	admin    *apitest.Client
	me       api.OrganizationMember
	dev      api.Space
	prod     api.Space
	foreign  api.Component
	globexSp api.Space
}

func newComponentFixture(t *testing.T) componentFixture {
	t.Helper()
	env := apitest.New(t)
	f := componentFixture{env: env, admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin))}
	f.admin.Get("/api/me").Expect(http.StatusOK).JSON(&f.me)
	f.dev = createSpace(t, f.admin, map[string]any{"Slug": "dev"})
	f.prod = createSpace(t, f.admin, map[string]any{"Slug": "prod"})
	other := env.Client(env.Token("globex", "gina", auth.RoleAdmin))
	f.globexSp = createSpace(t, other, map[string]any{"Slug": "theirs"})
	other.Post("/api/component", map[string]any{"Slug": "theirs"}).Expect(http.StatusOK).JSON(&f.foreign)
	return f
}

func (f componentFixture) create(t *testing.T, body map[string]any) api.Component {
	t.Helper()
	var c api.Component
	f.admin.Post("/api/component", body).Expect(http.StatusOK).JSON(&c)
	return c
}

// TestComponents: every operation of the family: create (allow_exists, dry_run, Slug taken), get with
// include, list with where, contains and order_by on every order field, PUT, PATCH, documents, bulk patch,
// delete and bulk delete, DeleteGates; AllowedChangeWorkflowIDs naming no ChangeWorkflow is refused.
func TestComponents(t *testing.T) {
	t.Parallel()
	f := newComponentFixture(t)
	c := f.admin

	web := f.create(t, map[string]any{"Slug": "web", "DisplayName": "Web", "Labels": map[string]string{"team": "web"},
		"ChangeWorkflowRequired": true})
	require.Equal(t, "Component", web.EntityType)
	require.Equal(t, f.me.OrganizationID, web.OrganizationID)
	require.True(t, web.ChangeWorkflowRequired)
	require.Empty(t, web.AllowedChangeWorkflowIDs)
	require.NotNil(t, web.AllowedChangeWorkflowIDs)
	require.Nil(t, web.UpstreamComponentID)
	require.Nil(t, web.BackingUnitID)
	path := "/api/component/" + web.ComponentID.String()

	c.Post("/api/component", map[string]any{"Slug": "web"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var same api.Component
	c.Post("/api/component?allow_exists=true", map[string]any{"Slug": "web"}).Expect(http.StatusOK).JSON(&same)
	require.Equal(t, web.ComponentID, same.ComponentID)
	c.Post("/api/component?dry_run=true", map[string]any{"Slug": "dry"}).Expect(http.StatusOK)
	c.Get("/api/component/dry").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Post("/api/component", map[string]any{"Slug": "bad slug!"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// AllowedChangeWorkflowIDs name ChangeWorkflows of the organization (another organization's is refused
	// as a random ID is); repeats are dropped.
	other := f.env.Client(f.env.Token("globex", "gina", auth.RoleAdmin))
	var foreignWF, wf api.ChangeWorkflow
	other.Post("/api/space/"+f.globexSp.SpaceID.String()+"/change_workflow", map[string]any{"Slug": "theirs", "Stages": []map[string]any{{"Name": "dev"}}}).
		Expect(http.StatusOK).JSON(&foreignWF)
	c.Post("/api/space/"+f.dev.SpaceID.String()+"/change_workflow", map[string]any{"Slug": "promote", "Stages": []map[string]any{{"Name": "dev"}}}).
		Expect(http.StatusOK).JSON(&wf)
	requireNoSuchReference(t, "AllowedChangeWorkflowIDs", foreignWF.ChangeWorkflowID, func(id uuid.UUID) *apitest.Response {
		return c.Post("/api/component", map[string]any{"Slug": "wf", "AllowedChangeWorkflowIDs": []uuid.UUID{id}})
	})
	withWF := f.create(t, map[string]any{"Slug": "wf", "AllowedChangeWorkflowIDs": []uuid.UUID{wf.ChangeWorkflowID, wf.ChangeWorkflowID}})
	require.Equal(t, []uuid.UUID{wf.ChangeWorkflowID}, withWF.AllowedChangeWorkflowIDs)
	requireNoSuchReference(t, "AllowedChangeWorkflowIDs", foreignWF.ChangeWorkflowID, func(id uuid.UUID) *apitest.Response {
		return c.Patch("/api/component/wf", map[string]any{"AllowedChangeWorkflowIDs": []uuid.UUID{wf.ChangeWorkflowID, id}})
	})
	var wfList []api.ExtendedComponent
	c.Get("/api/component?" + where("AllowedChangeWorkflowIDs ? '"+wf.ChangeWorkflowID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&wfList)
	require.Len(t, wfList, 1)
	c.Delete("/api/component/wf").Expect(http.StatusOK)

	var got api.ExtendedComponent
	c.Get(path + "?include=OrganizationID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, web, got.Component)
	require.NotNil(t, got.Organization)
	c.Get("/api/component/web").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, web.ComponentID, got.Component.ComponentID)
	sel := c.Get(path + "?select=Slug").Expect(http.StatusOK).Map()
	require.Equal(t, "web", sel["Component"].(map[string]any)["Slug"])

	api2 := f.create(t, map[string]any{"Slug": "api", "DisplayName": "API", "UpstreamComponentID": web.ComponentID})
	require.Equal(t, web.ComponentID, *api2.UpstreamComponentID)
	var list []api.ExtendedComponent
	for _, field := range []string{"ComponentID", "Slug", "DisplayName", "ChangeWorkflowRequired", "UpstreamComponentID", "BackingUnitID",
		"HiddenReason", "CreatedAt", "UpdatedAt"} {
		c.Get("/api/component?include=OrganizationID&order_by=" + field).Expect(http.StatusOK).JSON(&list)
		require.Len(t, list, 2, field)
	}
	c.Get("/api/component?order_by=Slug").Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"api", "web"}, []string{list[0].Component.Slug, list[1].Component.Slug})
	c.Get("/api/component?limit=1&order_by=Slug").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get("/api/component?" + where("ChangeWorkflowRequired = true AND Labels.team = 'web'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, web.ComponentID, list[0].Component.ComponentID)
	c.Get("/api/component?" + where("UpstreamComponentID = '"+web.ComponentID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "api", list[0].Component.Slug)
	c.Get("/api/component?contains=API").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)

	// PUT replaces the settable fields; a stale Version is 409.
	put := web
	put.DisplayName = "Web front"
	var updated api.Component
	c.Put(path, put).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "Web front", updated.DisplayName)
	require.Equal(t, web.Version+1, updated.Version)
	c.Put(path, put).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"ChangeWorkflowRequired": false, "DeleteGates": map[string]bool{"keep": true}}).Expect(http.StatusOK).JSON(&updated)
	require.False(t, updated.ChangeWorkflowRequired)
	c.Patch(path+"?dry_run=true", map[string]any{"DisplayName": "dry"}).Expect(http.StatusOK)
	c.Get(path).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "Web front", got.Component.DisplayName)

	// Documents: Permissions left out, the upstream shown by Slug; an edit of it applies as a patch.
	var doc api.EntityDocument
	c.Get("/api/component/api/document").Expect(http.StatusOK).JSON(&doc)
	require.Equal(t, "Component", doc.EntityType)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(doc.Document, &fields))
	require.NotContains(t, fields, "Permissions")
	require.Equal(t, "web", fields["UpstreamComponent"])
	fields["DisplayName"] = "From the document"
	fields["UpstreamComponent"] = nil
	edited := doc
	edited.Document, _ = json.Marshal(fields)
	c.Post("/api/component/api/document", map[string]any{"Base": doc, "Document": edited}).Expect(http.StatusOK)
	c.Get("/api/component/api").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "From the document", got.Component.DisplayName)
	require.Nil(t, got.Component.UpstreamComponentID)
	c.Post("/api/component/api/document", map[string]any{"Base": doc, "Document": edited}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// Bulk patch, then DeleteGates hold web; delete and bulk delete.
	var patched []api.ComponentCreateOrUpdateResponse
	c.Patch("/api/_component?"+where("Slug IN ('api', 'web')").Encode(), map[string]any{"Labels": map[string]string{"bulk": "yes"}}).
		Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched, 2)
	require.Equal(t, "yes", patched[0].Component.Labels["bulk"])
	c.Patch("/api/_component", map[string]any{"DisplayName": "x"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Delete(path).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var removed []api.DeleteResponse
	c.Delete("/api/_component?" + where("Labels.bulk = 'yes'").Encode()).Expect(http.StatusMultiStatus).JSON(&removed)
	require.Len(t, removed, 2)
	c.Get("/api/component").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Patch(path, map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(path + "?dry_run=true").Expect(http.StatusOK)
	c.Delete(path).Expect(http.StatusOK)
	c.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestComponentBackingUnits: with_backing_units makes a backing Unit (AppConfig/YAML, component-<Slug>) in
// backing_unit_space holding the Component's document; each write of the Component rewrites it (a new
// Revision only when the document changes); the Component's delete leaves it. backing_unit_space is required
// with with_backing_units and must name a Space the caller may create Units in.
func TestComponentBackingUnits(t *testing.T) {
	t.Parallel()
	f := newComponentFixture(t)
	c := f.admin

	e := c.Post("/api/component?with_backing_units=true", map[string]any{"Slug": "web"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "backing_unit_space", e.Error.ErrorMetadata.Items[0].Item)
	e = c.Post("/api/component?backing_unit_space=dev", map[string]any{"Slug": "web"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "with_backing_units", e.Error.ErrorMetadata.Items[0].Item)
	requireNoSuchReference(t, "backing_unit_space", f.globexSp.SpaceID, func(id uuid.UUID) *apitest.Response {
		return c.Post("/api/component?with_backing_units=true&backing_unit_space="+id.String(), map[string]any{"Slug": "web"})
	})
	c.Post("/api/component?with_backing_units=true&backing_unit_space=dev&dry_run=true", map[string]any{"Slug": "web"}).Expect(http.StatusOK)
	dev := "/api/space/" + f.dev.SpaceID.String()
	var units []api.ExtendedUnit
	c.Get(dev + "/unit").Expect(http.StatusOK).JSON(&units)
	require.Empty(t, units, "a dry run makes no Unit")

	var web api.Component
	c.Post("/api/component?with_backing_units=true&backing_unit_space=dev", map[string]any{"Slug": "web", "DisplayName": "Web",
		"Labels": map[string]string{"team": "web"}}).Expect(http.StatusOK).JSON(&web)
	require.NotNil(t, web.BackingUnitID)
	unitPath := dev + "/unit/" + web.BackingUnitID.String()
	var u api.ExtendedUnit
	c.Get(unitPath).Expect(http.StatusOK).JSON(&u)
	require.Equal(t, "component-web", u.Unit.Slug)
	require.Equal(t, "AppConfig/YAML", string(u.Unit.ToolchainType))
	require.Equal(t, int64(1), u.Unit.HeadRevisionNum)
	readDoc := func() map[string]any {
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal(c.Get(unitPath+"/data").Expect(http.StatusOK).Body, &doc))
		return doc
	}
	doc := readDoc()
	require.Equal(t, "web", doc["Slug"])
	require.Equal(t, "Web", doc["DisplayName"])
	require.Equal(t, map[string]any{"team": "web"}, doc["Labels"])
	require.NotContains(t, doc, "Permissions")

	// A patch rewrites the data in its transaction; one that leaves the document alone makes no Revision.
	c.Patch("/api/component/web", map[string]any{"DisplayName": "Web front", "ChangeWorkflowRequired": true}).Expect(http.StatusOK)
	doc = readDoc()
	require.Equal(t, "Web front", doc["DisplayName"])
	require.Equal(t, true, doc["ChangeWorkflowRequired"])
	c.Get(unitPath).Expect(http.StatusOK).JSON(&u)
	require.Equal(t, int64(2), u.Unit.HeadRevisionNum)
	grant := map[string]any{"UserIDs": map[string]bool{f.me.UserID.String(): true}}
	c.Patch("/api/component/web", map[string]any{"Permissions": map[string]any{"View": grant}}).Expect(http.StatusOK)
	c.Get(unitPath).Expect(http.StatusOK).JSON(&u)
	require.Equal(t, int64(2), u.Unit.HeadRevisionNum, "Permissions are not in the document")
	base := f.create(t, map[string]any{"Slug": "base"})
	c.Patch("/api/component/web?dry_run=true", map[string]any{"UpstreamComponentID": base.ComponentID}).Expect(http.StatusOK)
	c.Get(unitPath).Expect(http.StatusOK).JSON(&u)
	require.Equal(t, int64(2), u.Unit.HeadRevisionNum, "a dry run writes nothing")
	var bulk []api.ComponentCreateOrUpdateResponse
	c.Patch("/api/_component?"+where("Slug = 'web'").Encode(), map[string]any{"UpstreamComponentID": base.ComponentID}).Expect(http.StatusOK).JSON(&bulk)
	require.Equal(t, "base", readDoc()["UpstreamComponent"])

	// A create that finds the Component (allow_exists) hands it back as it is; a Unit Slug taken is 409.
	var again api.Component
	c.Post("/api/component?allow_exists=true&with_backing_units=true&backing_unit_space=dev", map[string]any{"Slug": "web"}).
		Expect(http.StatusOK).JSON(&again)
	require.Equal(t, *web.BackingUnitID, *again.BackingUnitID)
	c.Post(dev+"/unit", map[string]any{"Slug": "component-api", "ToolchainType": "AppConfig/YAML"}).Expect(http.StatusOK)
	c.Post("/api/component?with_backing_units=true&backing_unit_space=dev", map[string]any{"Slug": "api"}).
		ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Get("/api/component/api").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// A member who may not create Units in prod cannot back a Component there.
	viewerOfProd := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewerOfProd.Post("/api/component?with_backing_units=true&backing_unit_space=prod", map[string]any{"Slug": "v"}).
		ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Deleting the Component leaves its Unit.
	c.Delete("/api/component/web").Expect(http.StatusOK)
	c.Get(unitPath).Expect(http.StatusOK)
	require.Equal(t, "Web front", readDoc()["DisplayName"])

	// Deleting a backing Unit leaves its Component without one; its writes then write no Unit.
	var ops api.Component
	c.Post("/api/component?with_backing_units=true&backing_unit_space="+f.prod.SpaceID.String(), map[string]any{"Slug": "ops"}).
		Expect(http.StatusOK).JSON(&ops)
	require.NotNil(t, ops.BackingUnitID)
	c.Delete("/api/space/" + f.prod.SpaceID.String() + "/unit/" + ops.BackingUnitID.String()).Expect(http.StatusOK)
	var after api.Component
	c.Patch("/api/component/ops", map[string]any{"DisplayName": "Ops"}).Expect(http.StatusOK).JSON(&after)
	require.Nil(t, after.BackingUnitID)
}

// TestComponentUpstreams: UpstreamComponentID names a Component of the organization the caller may view
// (another organization's is refused as a random ID is) and never closes a cycle (400 naming it).
func TestComponentUpstreams(t *testing.T) {
	t.Parallel()
	f := newComponentFixture(t)
	c := f.admin
	a := f.create(t, map[string]any{"Slug": "a"})
	b := f.create(t, map[string]any{"Slug": "b", "UpstreamComponentID": a.ComponentID})
	cc := f.create(t, map[string]any{"Slug": "c", "UpstreamComponentID": b.ComponentID})

	e := c.Patch("/api/component/a", map[string]any{"UpstreamComponentID": cc.ComponentID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "UpstreamComponentID", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "a -> c -> b -> a")
	e = c.Patch("/api/component/a", map[string]any{"UpstreamComponentID": a.ComponentID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "UpstreamComponentID", e.Error.ErrorMetadata.Items[0].Item)
	c.Patch("/api/_component?"+where("Slug = 'a'").Encode(), map[string]any{"UpstreamComponentID": b.ComponentID}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	requireNoSuchReference(t, "UpstreamComponentID", f.foreign.ComponentID, func(id uuid.UUID) *apitest.Response {
		return c.Patch("/api/component/a", map[string]any{"UpstreamComponentID": id})
	})
	requireNoSuchReference(t, "UpstreamComponentID", f.foreign.ComponentID, func(id uuid.UUID) *apitest.Response {
		return c.Post("/api/component", map[string]any{"Slug": "d", "UpstreamComponentID": id})
	})
	// A Component others follow cannot go (409).
	c.Delete("/api/component/b").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch("/api/component/c", map[string]any{"UpstreamComponentID": nil}).Expect(http.StatusOK)
	c.Delete("/api/component/b").Expect(http.StatusOK)
}

// TestComponentVariants: a Space names its Component in ComponentID (a Component of the organization the
// caller may view; another organization's is refused as a random ID is); a Component that Spaces name
// cannot be deleted (409 naming them) until they let it go; PolicyForSpaces reads the Variants' Policy.
func TestComponentVariants(t *testing.T) {
	t.Parallel()
	f := newComponentFixture(t)
	c := f.admin
	var wf api.ChangeWorkflow
	c.Post("/api/space/"+f.dev.SpaceID.String()+"/change_workflow", map[string]any{"Slug": "promote", "Stages": []map[string]any{{"Name": "dev"}}}).
		Expect(http.StatusOK).JSON(&wf)
	web := f.create(t, map[string]any{"Slug": "web", "ChangeWorkflowRequired": true, "AllowedChangeWorkflowIDs": []uuid.UUID{wf.ChangeWorkflowID}})
	devPath := "/api/space/" + f.dev.SpaceID.String()

	var sp api.Space
	c.Patch(devPath, map[string]any{"ComponentID": web.ComponentID}).Expect(http.StatusOK).JSON(&sp)
	require.Equal(t, web.ComponentID, *sp.ComponentID)
	created := createSpace(t, c, map[string]any{"Slug": "qa", "ComponentID": web.ComponentID})
	require.Equal(t, web.ComponentID, *created.ComponentID)
	var spaces []api.ExtendedSpace
	c.Get("/api/space?" + where("ComponentID = '"+web.ComponentID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&spaces)
	require.Len(t, spaces, 2)
	c.Get("/api/space?order_by=ComponentID").Expect(http.StatusOK).JSON(&spaces)
	require.Len(t, spaces, 3)
	var ext api.ExtendedSpace
	c.Get(devPath + "?include=ComponentID").Expect(http.StatusOK).JSON(&ext)
	require.NotNil(t, ext.Component)
	require.Equal(t, "web", ext.Component.Slug)
	c.Get("/api/space/" + f.prod.SpaceID.String() + "?include=ComponentID").Expect(http.StatusOK).JSON(&ext)
	require.Nil(t, ext.Component)
	requireNoSuchReference(t, "ComponentID", f.foreign.ComponentID, func(id uuid.UUID) *apitest.Response {
		return c.Patch("/api/space/"+f.prod.SpaceID.String(), map[string]any{"ComponentID": id})
	})
	requireNoSuchReference(t, "ComponentID", f.foreign.ComponentID, func(id uuid.UUID) *apitest.Response {
		return c.Post("/api/space", map[string]any{"Slug": "x", "ComponentID": id})
	})

	// A guest who may edit prod but not view the Component cannot name it: it does not exist for them.
	guest := f.env.Principal("acme", "gil", auth.RoleGuest)
	grant := map[string]any{"UserIDs": map[string]bool{guest.UserID.String(): true}}
	c.Patch("/api/space/"+f.prod.SpaceID.String(), map[string]any{"Permissions": map[string]any{"View": grant, "Edit": grant}}).Expect(http.StatusOK)
	gil := f.env.Client(f.env.Token("acme", "gil", auth.RoleGuest))
	e := gil.Patch("/api/space/"+f.prod.SpaceID.String(), map[string]any{"ComponentID": web.ComponentID}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ComponentID", e.Error.ErrorMetadata.Items[0].Item)
	c.Patch("/api/component/web", map[string]any{"Permissions": map[string]any{"View": grant}}).Expect(http.StatusOK)
	gil.Patch("/api/space/"+f.prod.SpaceID.String(), map[string]any{"ComponentID": web.ComponentID}).Expect(http.StatusOK)
	// A viewer cannot change a Space's ComponentID (Edit on the Space).
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Patch(devPath, map[string]any{"ComponentID": nil}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// PolicyForSpaces: the Variants' Component, in one query; a Space that is no Variant is absent.
	other := createSpace(t, c, map[string]any{"Slug": "plain"})
	pol, err := component.PolicyForSpaces(context.Background(), f.env.App.Store.Q(), f.me.OrganizationID,
		[]uuid.UUID{f.dev.SpaceID, f.prod.SpaceID, other.SpaceID, f.globexSp.SpaceID})
	require.NoError(t, err)
	require.Len(t, pol, 2)
	require.Equal(t, component.Policy{ComponentID: web.ComponentID, Slug: "web", Allowed: []uuid.UUID{wf.ChangeWorkflowID}, Required: true}, pol[f.dev.SpaceID])
	require.Contains(t, pol, f.prod.SpaceID)

	// The Component cannot go while Spaces name it: 409 naming each.
	e = c.Delete("/api/component/web").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var named []string
	for _, it := range e.Error.ErrorMetadata.Items {
		named = append(named, it.Item)
	}
	require.Equal(t, []string{"Space dev", "Space prod", "Space qa"}, named)
	var removed []api.DeleteResponse
	c.Delete("/api/_component?"+where("Slug = 'web'").Encode()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch("/api/_space?"+where("ComponentID = '"+web.ComponentID.String()+"'").Encode(), map[string]any{"ComponentID": nil}).Expect(http.StatusOK)
	c.Delete("/api/_component?" + where("Slug = 'web'").Encode()).Expect(http.StatusOK).JSON(&removed)
	require.Len(t, removed, 1)
}

// TestComponentRoles: a viewer reads Components but cannot create, change or delete one; a member can; a
// guest sees only those granted to it.
func TestComponentRoles(t *testing.T) {
	t.Parallel()
	f := newComponentFixture(t)
	web := f.create(t, map[string]any{"Slug": "web"})
	path := "/api/component/" + web.ComponentID.String()
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Get(path).Expect(http.StatusOK)
	viewer.Get("/api/component/web/document").Expect(http.StatusOK)
	viewer.Post("/api/component", map[string]any{"Slug": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Patch(path, map[string]any{"DisplayName": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Delete(path).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	member := f.env.Client(f.env.Token("acme", "mo", auth.RoleMember))
	var mine api.Component
	member.Post("/api/component", map[string]any{"Slug": "mine"}).Expect(http.StatusOK).JSON(&mine)
	member.Patch(path, map[string]any{"DisplayName": "m"}).Expect(http.StatusOK)
	member.Patch(path, map[string]any{"Permissions": map[string]any{}}).Expect(http.StatusOK) // unchanged: no Manage needed
	grant := map[string]any{"UserIDs": map[string]bool{f.me.UserID.String(): true}}
	member.Patch(path, map[string]any{"Permissions": map[string]any{"View": grant}}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Delete("/api/component/mine").Expect(http.StatusOK)

	guestP := f.env.Principal("acme", "gil", auth.RoleGuest)
	guest := f.env.Client(f.env.Token("acme", "gil", auth.RoleGuest))
	var list []api.ExtendedComponent
	guest.Get("/api/component").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	guest.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	guest.Post("/api/component", map[string]any{"Slug": "g"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	gGrant := map[string]any{"UserIDs": map[string]bool{guestP.UserID.String(): true}}
	f.admin.Patch(path, map[string]any{"Permissions": map[string]any{"View": gGrant}}).Expect(http.StatusOK)
	guest.Get("/api/component").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	guest.Get(path).Expect(http.StatusOK)
	guest.Patch(path, map[string]any{"DisplayName": "g"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}

// TestComponentTenancy: another organization's Component is 404 everywhere, and a User of two organizations
// sees and uses each organization's Components only with that organization's token.
func TestComponentTenancy(t *testing.T) {
	t.Parallel()
	f := newComponentFixture(t)
	c := f.admin
	foreign := "/api/component/" + f.foreign.ComponentID.String()
	c.Get(foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get(foreign+"/document").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Patch(foreign, map[string]any{"DisplayName": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(foreign).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Get("/api/component/theirs").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedComponent
	c.Get("/api/component").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	var bulk []api.DeleteResponse
	c.Delete("/api/_component?" + where("Slug = 'theirs'").Encode()).Expect(http.StatusOK).JSON(&bulk)
	require.Empty(t, bulk)

	// Gina belongs to both organizations: the same Slug in each, each seen only with its token.
	mine := f.create(t, map[string]any{"Slug": "theirs"})
	gina := f.env.Client(f.env.Token("acme", "gina", auth.RoleAdmin))
	gina.Get("/api/component").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, mine.ComponentID, list[0].Component.ComponentID)
	gina.Patch("/api/space/"+f.dev.SpaceID.String(), map[string]any{"ComponentID": f.foreign.ComponentID}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	ginaGlobex := f.env.Client(f.env.Token("globex", "gina", auth.RoleAdmin))
	ginaGlobex.Get("/api/component/theirs").Expect(http.StatusOK)
	ginaGlobex.Get("/api/component").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, f.foreign.ComponentID, list[0].Component.ComponentID)
	ginaGlobex.Delete("/api/component/"+mine.ComponentID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	ginaGlobex.Post("/api/component?with_backing_units=true&backing_unit_space=dev", map[string]any{"Slug": "x"}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}
