package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// linkFixture is an organization with Spaces dev and prod and Units a, b, c in dev and x in prod.
type linkFixture struct {
	env       *apitest.Env
	c         *apitest.Client
	dev, prod api.Space
	units     map[string]api.Unit
}

func newLinkFixture(t *testing.T) *linkFixture {
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	f := &linkFixture{env: env, c: c, dev: createSpace(t, c, map[string]any{"Slug": "dev"}), prod: createSpace(t, c, map[string]any{"Slug": "prod"}),
		units: map[string]api.Unit{}}
	for _, u := range []struct {
		slug  string
		space api.Space
	}{{"a", f.dev}, {"b", f.dev}, {"c", f.dev}, {"x", f.prod}} {
		var res api.UnitCreateOrUpdateResponse
		c.Post(unitsOf(u.space), map[string]any{"Slug": u.slug, "ToolchainType": configdata.KubernetesYAML}).Expect(http.StatusOK).JSON(&res)
		f.units[u.slug] = *res.Unit
	}
	return f
}

func unitsOf(sp api.Space) string { return "/api/space/" + sp.SpaceID.String() + "/unit" }
func linksOf(sp api.Space) string { return "/api/space/" + sp.SpaceID.String() + "/link" }
func linkPath(l api.Link) string {
	return "/api/space/" + l.SpaceID.String() + "/link/" + l.LinkID.String()
}

// body is a Link from Unit from to Unit to.
func (f *linkFixture) body(slug, from, to string, extra ...map[string]any) map[string]any {
	b := map[string]any{"Slug": slug, "FromUnitID": f.units[from].UnitID.String(), "ToUnitID": f.units[to].UnitID.String()}
	for _, e := range extra {
		for k, v := range e {
			b[k] = v
		}
	}
	return b
}

func (f *linkFixture) link(t *testing.T, sp api.Space, body map[string]any) api.Link {
	t.Helper()
	var l api.Link
	f.c.Post(linksOf(sp), body).Expect(http.StatusOK).JSON(&l)
	return l
}

func itemOf(t *testing.T, e api.StandardErrorResponse) string {
	t.Helper()
	require.NotEmpty(t, e.Error.ErrorMetadata.Items, e.Error.Message)
	return e.Error.ErrorMetadata.Items[0].Item
}

var namedPaths = map[string]any{
	"UpstreamPaths":   []map[string]any{{"Name": "host", "ResourceType": "v1/ConfigMap", "Path": "data.host"}, {"Path": "data.port"}},
	"DownstreamPaths": []map[string]any{{"Path": "spec.port"}, {"Name": "host", "ResourceType": "apps/v1/Deployment", "ResourceName": "web", "Path": "spec.host", "Required": true}},
}

func TestLinkLifecycle(t *testing.T) {
	t.Parallel()
	f := newLinkFixture(t)
	c := f.c

	// Create: defaults, every attribute present, collections empty rather than null.
	resp := c.Post(linksOf(f.dev), f.body("a-reads-b", "a", "b", namedPaths))
	resp.Expect(http.StatusOK)
	raw := resp.Map()
	for _, k := range []string{"Annotations", "AutoUpdate", "BackingUnitID", "Bindings", "Clearance", "CreatedAt", "DeleteGates", "DisplayName",
		"DownstreamLastMergedRevisionNum", "DownstreamPaths", "DownstreamSetters", "FromUnitID", "Guards", "Hash", "HiddenReason", "Labels",
		"LinkID", "ManualBindings", "MergeEnableSubtraction", "OrganizationID", "Permissions", "Protect", "Slug", "SpaceID", "Squash",
		"Stale", "ToSpaceID", "ToUnitID", "TransformInvocationID", "UpdateType", "UpdatedAt", "UpstreamGetters",
		"UpstreamLastMergedRevisionNum", "UpstreamLinkID", "UpstreamPaths", "UpstreamSpaceID", "Version", "EntityType", "WhereMutation", "WhereResource"} {
		require.Contains(t, raw, k)
	}
	for _, k := range []string{"Bindings", "ManualBindings", "DownstreamSetters", "UpstreamGetters", "Clearance"} {
		require.Equal(t, []any{}, raw[k], k)
	}
	require.Equal(t, map[string]any{}, raw["Guards"])
	var ab api.Link
	resp.JSON(&ab)
	require.Equal(t, "NeedsProvides", ab.UpdateType)
	require.Equal(t, f.dev.SpaceID, ab.SpaceID)
	require.Equal(t, f.dev.SpaceID, ab.ToSpaceID)
	require.Equal(t, ab.ToSpaceID, ab.UpstreamSpaceID)
	require.Equal(t, "Link", ab.EntityType)
	require.Len(t, ab.Hash, 64)
	require.Equal(t, "host", ab.DownstreamPaths[1].Name)
	require.True(t, ab.DownstreamPaths[1].Required)

	// Read-only fields sent are ignored.
	var other api.Link
	c.Post(linksOf(f.dev), f.body("a-reads-x", "a", "x", map[string]any{"Hash": "nope", "Stale": true, "ToSpaceID": f.dev.SpaceID.String(),
		"UpstreamLastMergedRevisionNum": 7, "UpdateType": "None", "Guards": map[string]string{"team": "web"},
		"Clearance": []map[string]any{{"Key": "team", "Operator": "Exists"}}})).Expect(http.StatusOK).JSON(&other)
	require.NotEqual(t, "nope", other.Hash)
	require.False(t, other.Stale)
	require.Equal(t, f.prod.SpaceID, other.ToSpaceID)
	require.Zero(t, other.UpstreamLastMergedRevisionNum)
	require.Equal(t, "None", other.UpdateType)
	require.Equal(t, []string{}, other.Clearance[0].Values)
	c.Post(linksOf(f.dev), f.body("a-reads-b", "a", "c")).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post(linksOf(f.dev)+"?allow_exists=true", f.body("a-reads-b", "a", "c")).Expect(http.StatusOK)

	// Get with include and select.
	var ext api.ExtendedLink
	c.Get(linkPath(ab) + "?include=FromUnitID,ToUnitID,ToSpaceID,SpaceID,OrganizationID,TransformInvocationID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "a", ext.FromUnit.Slug)
	require.Equal(t, "b", ext.ToUnit.Slug)
	require.Equal(t, "dev", ext.ToSpace.Slug)
	require.Equal(t, "dev", ext.Space.Slug)
	require.NotNil(t, ext.Organization)
	require.Nil(t, ext.TransformInvocation)
	sel := c.Get(linkPath(ab) + "?select=Slug").Expect(http.StatusOK).Map()["Link"].(map[string]any)
	require.Equal(t, "a-reads-b", sel["Slug"])
	require.Contains(t, sel, "FromUnitID")
	require.NotContains(t, sel, "Labels")

	// Lists: where, contains, list-all, each order field both ways.
	var list []api.ExtendedLink
	c.Get("/api/link?" + where("ToUnitID = '"+f.units["x"].UnitID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "a-reads-x", list[0].Link.Slug)
	c.Get(linksOf(f.dev) + "?" + where("UpdateType = 'NeedsProvides' AND Stale = false AND Guards.team IS NULL").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get(linksOf(f.dev) + "?" + url.Values{"contains": {"reads-x"}}.Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get(linksOf(f.prod)).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	for _, field := range []string{"AutoUpdate", "BackingUnitID", "CreatedAt", "DisplayName", "DownstreamLastMergedRevisionNum", "FromUnitID",
		"Hash", "HiddenReason", "LinkID", "MergeEnableSubtraction", "OrganizationID", "Protect", "Slug", "SpaceID", "Squash", "Stale",
		"ToSpaceID", "ToUnitID", "TransformInvocationID", "UpdateType", "UpdatedAt", "UpstreamLastMergedRevisionNum", "UpstreamLinkID"} {
		for _, dir := range []string{"ASC:", "DESC:"} {
			c.Get("/api/link?" + url.Values{"order_by": {dir + field}, "limit": {"1"}}.Encode()).Expect(http.StatusOK).JSON(&list)
			require.Len(t, list, 1, field)
		}
	}
	c.Get("/api/link?" + url.Values{"order_by": {"DESC:Slug"}}.Encode()).Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"a-reads-x", "a-reads-b"}, []string{list[0].Link.Slug, list[1].Link.Slug})
	c.Get("/api/link?"+url.Values{"order_by": {"WhereMutation"}}.Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// PUT with Version (GET -> edit -> PUT); a stale Version is 409. UpdateType left out is kept.
	got := ext.Link
	got.DisplayName = "A reads B"
	got.UpdateType = ""
	var upd api.Link
	resp = c.Put(linkPath(ab), got).Expect(http.StatusOK)
	require.Empty(t, resp.Warnings())
	resp.JSON(&upd)
	require.Equal(t, "A reads B", upd.DisplayName)
	require.Equal(t, "NeedsProvides", upd.UpdateType)
	require.Equal(t, ab.Hash, upd.Hash, "Hash covers what the Link moves, not its metadata")
	c.Put(linkPath(ab), got).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	noVersion := f.body("a-reads-b", "a", "b")
	c.Put(linkPath(ab), noVersion).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// PATCH: UpdateType the same is fine, another is refused; changing what it moves changes Hash.
	c.Patch(linkPath(ab), map[string]any{"UpdateType": "NeedsProvides", "AutoUpdate": true}).Expect(http.StatusOK).JSON(&upd)
	require.True(t, upd.AutoUpdate)
	e := c.Patch(linkPath(ab), map[string]any{"UpdateType": "None"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "UpdateType", itemOf(t, e))
	c.Patch(linkPath(ab), map[string]any{"Protect": true}).Expect(http.StatusOK).JSON(&upd)
	require.NotEqual(t, ab.Hash, upd.Hash)
	c.Patch(linkPath(ab), map[string]any{"Version": 1, "Squash": true}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// Documents: GET -> edit -> POST.
	var doc api.EntityDocument
	c.Get(linkPath(ab) + "/document").Expect(http.StatusOK).JSON(&doc)
	require.Equal(t, "Link", doc.EntityType)
	edited := map[string]any{}
	require.NoError(t, json.Unmarshal(doc.Document, &edited))
	require.NotContains(t, edited, "Permissions")
	require.Equal(t, "a", edited["FromUnit"])
	require.Equal(t, "b", edited["ToUnit"])
	edited["DisplayName"] = "From the document"
	var after api.EntityDocument
	c.Post(linkPath(ab)+"/document", map[string]any{"Base": doc, "Document": map[string]any{"EntityType": doc.EntityType,
		"Version": doc.Version, "Document": edited}}).Expect(http.StatusOK).JSON(&after)
	require.Contains(t, string(after.Document), "From the document")
	c.Post(linkPath(ab)+"/document", map[string]any{"Base": doc, "Document": map[string]any{"EntityType": doc.EntityType,
		"Version": doc.Version, "Document": edited}}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	// The To Unit named in another Space by <Space Slug>/<Slug>.
	doc = after
	edited = map[string]any{}
	require.NoError(t, json.Unmarshal(doc.Document, &edited))
	edited["ToUnit"] = "prod/x"
	c.Post(linkPath(ab)+"/document", map[string]any{"Base": doc, "Document": map[string]any{"EntityType": doc.EntityType,
		"Version": doc.Version, "Document": edited}}).Expect(http.StatusOK).JSON(&after)
	require.Contains(t, string(after.Document), `"ToUnit":"prod/x"`)
	c.Get(linkPath(ab)).Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, f.units["x"].UnitID, ext.Link.ToUnitID)
	require.Equal(t, f.prod.SpaceID, ext.Link.ToSpaceID)
	c.Patch(linkPath(ab), map[string]any{"ToUnitID": f.units["b"].UnitID.String()}).Expect(http.StatusOK)

	// Unit.FromLinkID lists the Unit's Links; include=FromLinkID expands them.
	var eu api.ExtendedUnit
	c.Get(unitsOf(f.dev) + "/" + f.units["a"].UnitID.String() + "?include=FromLinkID").Expect(http.StatusOK).JSON(&eu)
	require.ElementsMatch(t, []uuid.UUID{ab.LinkID, other.LinkID}, eu.Unit.FromLinkID)
	require.Len(t, *eu.FromLink, 2)
	var units []api.ExtendedUnit
	c.Get("/api/unit?" + where("LEN(FromLinkID) > 0").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
	require.Equal(t, "a", units[0].Unit.Slug)
	c.Get(unitsOf(f.dev) + "?" + where("FromLinkID ? '"+ab.LinkID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)

	// Bulk patch, copy, delete.
	var items []api.LinkCreateOrUpdateResponse
	c.Patch("/api/link?"+where("FromUnitID = '"+f.units["a"].UnitID.String()+"'").Encode(), map[string]any{"Labels": map[string]string{"team": "web"}}).
		Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	// A copy for another From Unit names it; the copy is made in that Unit's Space.
	c.Post("/api/link?"+where("Slug = 'a-reads-b'").Encode(), map[string]any{"FromUnitID": f.units["x"].UnitID.String()}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Nil(t, items[0].Error)
	cp := *items[0].Link
	require.Equal(t, f.prod.SpaceID, cp.SpaceID)
	require.Equal(t, f.units["x"].UnitID, cp.FromUnitID)
	require.Equal(t, ab.LinkID, *cp.UpstreamLinkID)
	require.Equal(t, "a-reads-b", cp.Slug)
	// Again: the Slug is taken there (409), unless allow_exists hands back the copy made.
	c.Post("/api/link?"+where("Slug = 'a-reads-b'").Encode(), map[string]any{"FromUnitID": f.units["x"].UnitID.String()}).
		ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post("/api/link?"+url.Values{"where": {"Slug = 'a-reads-b' AND SpaceID = '" + f.dev.SpaceID.String() + "'"}, "allow_exists": {"true"}}.Encode(),
		map[string]any{"FromUnitID": f.units["x"].UnitID.String()}).Expect(http.StatusOK).JSON(&items)
	require.Equal(t, cp.LinkID, items[0].Link.LinkID)
	// filter= selects what a stored Filter of Links does.
	var flt api.Filter
	c.Post("/api/space/"+f.dev.SpaceID.String()+"/filter", map[string]any{"Slug": "readers-of-x", "From": "Link",
		"Where": "ToUnitID = '" + f.units["x"].UnitID.String() + "'"}).Expect(http.StatusOK).JSON(&flt)
	c.Get("/api/link?" + url.Values{"filter": {flt.FilterID.String()}}.Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "a-reads-x", list[0].Link.Slug)
	// A copy in the same Space needs another Slug: name_prefixes.
	c.Post("/api/link?"+where("Slug = 'a-reads-b' AND SpaceID = '"+f.dev.SpaceID.String()+"'").Encode(), map[string]any{"ToUnitID": f.units["c"].UnitID.String()}).
		Expect(http.StatusConflict)
	c.Post("/api/link?"+url.Values{"where": {"Slug = 'a-reads-b' AND SpaceID = '" + f.dev.SpaceID.String() + "'"}, "name_prefixes": {"copy-"}}.Encode(),
		map[string]any{"ToUnitID": f.units["c"].UnitID.String()}).Expect(http.StatusOK).JSON(&items)
	require.Equal(t, "copy-a-reads-b", items[0].Link.Slug)
	require.Equal(t, f.units["c"].UnitID, items[0].Link.ToUnitID)
	// A copy naming a Unit that is not there fails like a create.
	c.Post("/api/link?"+url.Values{"where": {"Slug = 'a-reads-x'"}, "name_prefixes": {"again-"}}.Encode(),
		map[string]any{"FromUnitID": uuid.NewString()}).Expect(http.StatusBadRequest)
	var dels []api.DeleteResponse
	c.Delete("/api/link?" + where("Labels.team = 'web' AND SpaceID = '"+f.dev.SpaceID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&dels)
	require.Len(t, dels, 3, "the copies kept the Labels")
	c.Get("/api/link").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Delete(linkPath(cp)).Expect(http.StatusOK)
	c.Get(linkPath(cp)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

func TestLinkRefusals(t *testing.T) {
	t.Parallel()
	f := newLinkFixture(t)
	c := f.c
	post := func(body map[string]any) api.StandardErrorResponse {
		t.Helper()
		return c.Post(linksOf(f.dev), body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	}
	refused := func(field string, body map[string]any, words ...string) {
		t.Helper()
		e := post(body)
		require.Equal(t, field, itemOf(t, e), e.Error.Message)
		for _, w := range words {
			require.Contains(t, e.Error.Message, w)
		}
	}

	// References: a random ID, a Unit of another Space (From), the same Unit.
	random := f.body("l", "a", "b", map[string]any{"ToUnitID": uuid.NewString()})
	refused("ToUnitID", random)
	randomMsg := post(random).Error.Message
	refused("FromUnitID", f.body("l", "x", "b"))
	refused("FromUnitID", f.body("l", "a", "b", map[string]any{"FromUnitID": uuid.NewString()}))
	refused("ToUnitID", f.body("l", "a", "a"))
	c.Post(linksOf(f.dev), map[string]any{"Slug": "l", "ToUnitID": f.units["b"].UnitID.String()}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// UpdateType.
	refused("UpdateType", f.body("l", "a", "b", map[string]any{"UpdateType": "Upsert"}), "not supported", "NeedsProvides, UpgradeUnit, MergeUnits, None")
	refused("UpdateType", f.body("l", "a", "b", map[string]any{"UpdateType": "Sideways"}), "NeedsProvides")
	refused("UpstreamPaths", f.body("l", "a", "b", map[string]any{"UpdateType": "MergeUnits", "UpstreamPaths": []map[string]any{{"Path": "a"}}}), "empty")
	var merge api.Link
	c.Post(linksOf(f.dev), f.body("merge", "a", "b", map[string]any{"UpdateType": "UpgradeUnit"})).Expect(http.StatusOK).JSON(&merge)

	// Paths: pairing, names, syntax, ResourceName.
	paths := func(up, down []map[string]any) map[string]any {
		return f.body("l", "a", "b", map[string]any{"UpstreamPaths": up, "DownstreamPaths": down})
	}
	p := func(name, path string) map[string]any { return map[string]any{"Name": name, "Path": path} }
	refused("DownstreamPaths.1", paths([]map[string]any{p("", "a")}, []map[string]any{p("", "a"), p("", "b")}), "pairs")
	refused("UpstreamPaths.1", paths([]map[string]any{p("", "a"), p("", "b")}, []map[string]any{p("", "a")}))
	refused("DownstreamPaths.0.Name", paths([]map[string]any{p("x", "a")}, []map[string]any{p("y", "a")}))
	refused("UpstreamPaths.1.Name", paths([]map[string]any{p("x", "a"), p("x", "b")}, []map[string]any{p("x", "a")}), "unique")
	refused("DownstreamPaths.1.Path", paths([]map[string]any{p("", "a"), p("", "b")}, []map[string]any{p("", "a"), p("", "a..b")}))
	refused("UpstreamPaths.0.Path", paths([]map[string]any{p("", "")}, []map[string]any{p("", "a")}))
	refused("DownstreamPaths.0.ResourceName", paths([]map[string]any{p("", "a")}, []map[string]any{{"Path": "a", "ResourceName": "web"}}))
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = p("", "a")
	}
	c.Post(linksOf(f.dev), paths(many, many)).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// What is not supported yet.
	for field, v := range map[string]any{"Bindings": []map[string]any{{"a": 1}}, "ManualBindings": []map[string]any{{"a": 1}},
		"DownstreamSetters": []map[string]any{{"a": 1}}, "UpstreamGetters": []map[string]any{{"a": 1}},
		"TransformInvocationID": uuid.NewString(), "WhereMutation": "x", "WhereResource": "y"} {
		refused(field, f.body("l", "a", "b", map[string]any{field: v}), "not supported yet; use UpstreamPaths and DownstreamPaths")
	}
	// Clearance and Guards as functions take them.
	refused("Clearance.0.Values", f.body("l", "a", "b", map[string]any{"Clearance": []map[string]any{{"Key": "team", "Operator": "In"}}}))
	refused("Guards.-bad", f.body("l", "a", "b", map[string]any{"Guards": map[string]string{"-bad": "x"}}))

	// Tenancy: another organization's Units are refused as random IDs; its Links are not found.
	g := f.env.Client(f.env.Token("globex", "gina", auth.RoleAdmin))
	gsp := createSpace(t, g, map[string]any{"Slug": "dev"})
	var gres api.UnitCreateOrUpdateResponse
	g.Post(unitsOf(gsp), map[string]any{"Slug": "g", "ToolchainType": configdata.KubernetesYAML}).Expect(http.StatusOK).JSON(&gres)
	e := post(f.body("l", "a", "b", map[string]any{"ToUnitID": gres.Unit.UnitID.String()}))
	require.Equal(t, randomMsg, e.Error.Message)
	require.NotContains(t, e.Error.Message, gres.Unit.UnitID.String())
	e = post(f.body("l", "a", "b", map[string]any{"FromUnitID": gres.Unit.UnitID.String()}))
	require.Equal(t, "FromUnitID", itemOf(t, e))
	g.Get(linkPath(merge)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	g.Patch(linkPath(merge), map[string]any{"DisplayName": "g"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	g.Delete(linkPath(merge)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedLink
	g.Get("/api/link").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	// Nor can a Link of the other organization name this one's Units.
	g.Post(linksOf(gsp), map[string]any{"Slug": "l", "FromUnitID": gres.Unit.UnitID.String(), "ToUnitID": f.units["a"].UnitID.String()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// A User of both organizations reaches each organization's Links only with its token.
	aliceInGlobex := f.env.Client(f.env.Token("globex", "alice", auth.RoleAdmin))
	aliceInGlobex.Get(linkPath(merge)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	aliceInGlobex.Get("/api/link").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	e = aliceInGlobex.Post(linksOf(gsp), map[string]any{"Slug": "l", "FromUnitID": gres.Unit.UnitID.String(), "ToUnitID": f.units["a"].UnitID.String()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ToUnitID", itemOf(t, e))
	c.Get("/api/link").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)

	// A Unit the caller may not view is refused as a random ID: a guest granted prod alone.
	gus := f.env.Client(f.env.Token("acme", "gus", auth.RoleGuest))
	var me api.OrganizationMember
	gus.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	all := map[string]any{}
	for _, p := range []string{"View", "Edit", "CreateChildren"} {
		all[p] = map[string]any{"UserIDs": map[string]bool{me.UserID.String(): true}}
	}
	c.Patch("/api/space/"+f.prod.SpaceID.String(), map[string]any{"Permissions": all}).Expect(http.StatusOK)
	gus = f.env.Client(f.env.Token("acme", "gus", auth.RoleGuest))
	e = gus.Post(linksOf(f.prod), f.body("l", "x", "a")).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, randomMsg, e.Error.Message)
	gus.Post(linksOf(f.prod), map[string]any{"Slug": "l", "FromUnitID": f.units["x"].UnitID.String(), "ToUnitID": f.units["x"].UnitID.String()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	gus.Get(linkPath(merge)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

func TestLinkCycles(t *testing.T) {
	t.Parallel()
	f := newLinkFixture(t)
	c := f.c
	ab := f.link(t, f.dev, f.body("ab", "a", "b"))
	f.link(t, f.dev, f.body("bc", "b", "c"))
	e := c.Post(linksOf(f.dev), f.body("ca", "c", "a")).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ToUnitID", itemOf(t, e))
	require.Contains(t, e.Error.Message, "c → a → b → c")
	// Through PATCH: a Link c -> x turned into c -> a.
	cx := f.link(t, f.dev, f.body("cx", "c", "x"))
	e = c.Patch(linkPath(cx), map[string]any{"ToUnitID": f.units["a"].UnitID.String()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "c → a → b → c")
	// And through a bulk patch and a copy.
	var items []api.LinkCreateOrUpdateResponse
	c.Patch("/api/link?"+where("Slug = 'cx'").Encode(), map[string]any{"ToUnitID": f.units["a"].UnitID.String()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	c.Post("/api/link?"+url.Values{"where": {"Slug = 'bc'"}, "name_prefixes": {"cp-"}}.Encode(),
		map[string]any{"FromUnitID": f.units["c"].UnitID.String(), "ToUnitID": f.units["a"].UnitID.String()}).Expect(http.StatusBadRequest)
	// Rewriting the Link that makes the path is no cycle: a -> b becomes a -> c (a, c, and b -> c).
	var upd api.Link
	c.Patch(linkPath(ab), map[string]any{"ToUnitID": f.units["c"].UnitID.String()}).Expect(http.StatusOK).JSON(&upd)
	require.Equal(t, f.units["c"].UnitID, upd.ToUnitID)
	// Two Links between the same Units in the same direction are fine; a diamond is no cycle.
	f.link(t, f.dev, f.body("ab2", "a", "b"))
	c.Post("/api/link?"+url.Values{"where": {"Slug = 'ab2'"}, "name_prefixes": {"cp-"}}.Encode(), map[string]any{}).Expect(http.StatusOK).JSON(&items)
	require.Nil(t, items[0].Error)
	// c -> a is still refused, named by the shortest way back: a -> c directly.
	e = c.Patch(linkPath(cx), map[string]any{"ToUnitID": f.units["a"].UnitID.String()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "c → a → c;")
}

func TestLinkPermissions(t *testing.T) {
	t.Parallel()
	f := newLinkFixture(t)
	c := f.c
	ab := f.link(t, f.dev, f.body("ab", "a", "b"))

	// A viewer creates nothing.
	vicToken := f.env.Token("acme", "vic", auth.RoleViewer)
	vic := f.env.Client(vicToken)
	vic.Post(linksOf(f.dev), f.body("v", "a", "c")).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var list []api.ExtendedLink
	vic.Get("/api/link").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	var me api.OrganizationMember
	vic.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	grant := func(perms ...string) map[string]any {
		out := map[string]any{}
		for _, p := range perms {
			out[p] = map[string]any{"UserIDs": map[string]bool{me.UserID.String(): true}}
		}
		return out
	}
	// Granted CreateChildren on the Space and Edit on the Link, but able only to view the From Unit: 403 on
	// every write of a Link from it.
	c.Patch("/api/space/"+f.dev.SpaceID.String(), map[string]any{"Permissions": grant("CreateChildren")}).Expect(http.StatusOK)
	c.Patch(linkPath(ab), map[string]any{"Permissions": grant("Edit", "Delete")}).Expect(http.StatusOK)
	vic = f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	e := vic.Post(linksOf(f.dev), f.body("v", "a", "c")).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Equal(t, "Unit", e.Error.ErrorMetadata.EntityType)
	vic.Patch(linkPath(ab), map[string]any{"DisplayName": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	vic.Delete(linkPath(ab)).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var items []api.LinkCreateOrUpdateResponse
	vic.Patch("/api/link?"+where("Slug = 'ab'").Encode(), map[string]any{"DisplayName": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	// Granted Edit on the From Unit, the same writes pass.
	c.Patch(unitsOf(f.dev)+"/"+f.units["a"].UnitID.String(), map[string]any{"Permissions": grant("Edit")}).Expect(http.StatusOK)
	var v api.Link
	vic.Post(linksOf(f.dev), f.body("v", "a", "c")).Expect(http.StatusOK).JSON(&v)
	vic.Patch(linkPath(ab), map[string]any{"DisplayName": "v"}).Expect(http.StatusOK)
	vic.Patch("/api/link?"+where("Slug = 'ab'").Encode(), map[string]any{"DisplayName": "w"}).Expect(http.StatusOK).JSON(&items)
	require.Nil(t, items[0].Error)
	// Moving a Link to another From Unit writes into both: Edit on b is missing.
	c.Patch(linkPath(v), map[string]any{"Permissions": grant("Edit")}).Expect(http.StatusOK)
	e = vic.Patch(linkPath(v), map[string]any{"FromUnitID": f.units["b"].UnitID.String()}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Equal(t, f.units["b"].UnitID.String(), e.Error.ErrorMetadata.EntityID)
	vic.Delete(linkPath(ab)).Expect(http.StatusOK)
	// And with Edit on the new From Unit but not the old one.
	c.Patch(unitsOf(f.dev)+"/"+f.units["b"].UnitID.String(), map[string]any{"Permissions": grant("Edit")}).Expect(http.StatusOK)
	c.Patch(unitsOf(f.dev)+"/"+f.units["a"].UnitID.String(), map[string]any{"Permissions": map[string]any{"Edit": nil}}).Expect(http.StatusOK)
	e = vic.Patch(linkPath(v), map[string]any{"FromUnitID": f.units["b"].UnitID.String()}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Equal(t, f.units["a"].UnitID.String(), e.Error.ErrorMetadata.EntityID)
	c.Patch(linkPath(v), map[string]any{"FromUnitID": f.units["b"].UnitID.String()}).Expect(http.StatusOK)
}

func TestLinkUnits(t *testing.T) {
	t.Parallel()
	f := newLinkFixture(t)
	c := f.c
	ab := f.link(t, f.dev, f.body("ab", "a", "b"))
	xb := f.link(t, f.prod, f.body("xb", "x", "b"))
	bc := f.link(t, f.dev, f.body("bc", "b", "c"))

	// A Unit that Links read from is not deleted: 409 naming them.
	e := c.Delete(unitsOf(f.dev)+"/"+f.units["b"].UnitID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Contains(t, e.Error.Message, "ab, xb")
	require.Contains(t, e.Error.Message, "delete them first")

	// Moving b to prod takes bc with it, and ab and xb follow b (ToSpaceID).
	var moved []api.UnitMoveResponse
	c.Post("/api/unit/move?"+where("Slug = 'b'").Encode(), map[string]any{"ToSpaceID": f.prod.SpaceID.String()}).Expect(http.StatusOK).JSON(&moved)
	require.True(t, moved[0].Moved)
	require.Equal(t, []string{"bc"}, moved[0].MovedLinkSlugs)
	var got api.ExtendedLink
	c.Get(linksOf(f.prod) + "/" + bc.LinkID.String()).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, f.prod.SpaceID, got.Link.SpaceID)
	require.Greater(t, got.Link.Version, bc.Version)
	c.Get(linkPath(ab)).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, f.prod.SpaceID, got.Link.ToSpaceID)
	require.Equal(t, f.prod.SpaceID, got.Link.UpstreamSpaceID)
	c.Get(linkPath(xb)).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, f.prod.SpaceID, got.Link.ToSpaceID)

	// A Link Slug taken in the destination fails the move of that Unit.
	f.link(t, f.dev, f.body("xb", "a", "c"))
	e = c.Post("/api/unit/move?"+where("Slug = 'x'").Encode(), map[string]any{"ToSpaceID": f.dev.SpaceID.String()}).
		ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	require.Contains(t, e.Error.Message, "Link xb")
	c.Post("/api/unit/move?"+where("Slug IN ('x', 'c')").Encode(), map[string]any{"ToSpaceID": f.dev.SpaceID.String()}).
		Expect(http.StatusMultiStatus).JSON(&moved)
	require.Len(t, moved, 2)
	for _, m := range moved {
		require.Equal(t, []string{}, m.MovedLinkSlugs)
		require.Equal(t, m.Slug == "c", m.Moved)
	}
	c.Get(linkPath(xb)).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, f.prod.SpaceID, got.Link.SpaceID, "the failed move left x's Link where it was")

	// Links from a deleted Unit go with it.
	c.Delete(linkPath(ab)).Expect(http.StatusOK)
	c.Delete(unitsOf(f.prod) + "/" + f.units["x"].UnitID.String()).Expect(http.StatusOK)
	c.Get(linkPath(xb)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(unitsOf(f.prod) + "/" + f.units["b"].UnitID.String()).Expect(http.StatusOK)
	c.Get(linksOf(f.prod)+"/"+bc.LinkID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestLinkCycleRace: two Links that each keep the graph acyclic but together close a cycle, written at
// once, never both pass (Link writes of an organization serialize).
func TestLinkCycleRace(t *testing.T) {
	t.Parallel()
	f := newLinkFixture(t)
	for round := range 10 {
		statuses := make(chan int, 2)
		for _, pair := range [][2]string{{"a", "b"}, {"b", "a"}} {
			go func() {
				statuses <- f.c.Post(linksOf(f.dev), f.body(pair[0]+pair[1]+"-"+string(rune('0'+round)), pair[0], pair[1])).Status
			}()
		}
		got := []int{<-statuses, <-statuses}
		require.ElementsMatch(t, []int{http.StatusOK, http.StatusBadRequest}, got, "round %d", round)
		var dels []api.DeleteResponse
		f.c.Delete("/api/link?" + where("SpaceID = '"+f.dev.SpaceID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&dels)
		require.Len(t, dels, 1)
	}
}

// TestLinkOfMutation: include=LinkID expands the Link that made a Mutation (propagation records it).
func TestLinkOfMutation(t *testing.T) {
	t.Parallel()
	f := newLinkFixture(t)
	ab := f.link(t, f.dev, f.body("ab", "a", "b"))
	a := unitsOf(f.dev) + "/" + f.units["a"].UnitID.String()
	var res api.UnitWriteResponse
	f.c.Put(a+"/data", apitest.Raw{ContentType: "application/yaml", Data: []byte(deployment)}).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, []uuid.UUID{ab.LinkID}, res.Unit.FromLinkID, "a data write answers the Unit's Links")
	f.c.Patch(a+"?restore=1", map[string]any{}).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, []uuid.UUID{ab.LinkID}, res.Unit.FromLinkID)
	_, err := f.env.App.Store.Pool.Exec(context.Background(), `UPDATE mutation SET link_id = $1 WHERE unit_id = $2`, ab.LinkID, f.units["a"].UnitID)
	require.NoError(t, err)
	var muts []api.ExtendedMutation
	f.c.Get(a + "/mutation?include=LinkID").Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 2)
	require.Equal(t, "ab", muts[0].Link.Slug)
	f.c.Get(a + "/mutation").Expect(http.StatusOK).JSON(&muts)
	require.Nil(t, muts[0].Link)
}
