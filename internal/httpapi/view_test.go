package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

func metadataColumn(name, attr string) map[string]any {
	return map[string]any{"Name": name, "ColumnSource": map[string]any{"MetadataAttribute": attr}}
}

func dataColumn(name, path, resourceType string) map[string]any {
	return map[string]any{"Name": name, "ColumnSource": map[string]any{"DataPath": map[string]any{"Path": path, "ResourceType": resourceType}}}
}

// TestViewLifecycle: Views are written, read, listed, patched and deleted with the kit's rules; their
// Hash follows the definition only; a Filter a View uses cannot be deleted.
func TestViewLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	dev := createSpace(t, c, map[string]any{"Slug": "dev"})
	base := "/api/space/" + dev.SpaceID.String()
	var web api.Filter
	c.Post(base+"/filter", map[string]any{"Slug": "web", "From": "Unit", "Where": "Labels.tier = 'web'"}).Expect(http.StatusOK).JSON(&web)

	var v api.View
	c.Post(base+"/view", map[string]any{"Slug": "images", "Of": "Unit", "FilterID": web.FilterID, "GroupBy": "TargetID",
		"OrderBy": "Slug", "OrderByDirection": "DESC",
		"Columns": []map[string]any{metadataColumn("Name", "Slug"), dataColumn("Image", "spec.template.spec.containers.*.image", "apps/v1/Deployment")}}).
		Expect(http.StatusOK).JSON(&v)
	require.Equal(t, "View", v.EntityType)
	require.Equal(t, "Unit", v.Of)
	require.Len(t, v.Columns, 2)
	require.Nil(t, v.Columns[0].ColumnSource.DataPath)
	require.Equal(t, "spec.template.spec.containers.*.image", v.Columns[1].ColumnSource.DataPath.Path)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), v.Hash)
	c.Post(base+"/view", map[string]any{"Slug": "images", "Of": "Space"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)

	path := base + "/view/" + v.ViewID.String()
	var ext api.ExtendedView
	c.Get(path + "?include=FilterID,SpaceID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "web", ext.Filter.Slug)
	require.Equal(t, "dev", ext.Space.Slug)
	require.Nil(t, ext.ViewColumns, "a read without view= has no columns")

	var patched api.View
	c.Patch(path, map[string]any{"DisplayName": "Images"}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, v.Hash, patched.Hash)
	c.Patch(path, map[string]any{"Columns": []map[string]any{metadataColumn("Name", "Slug")}}).Expect(http.StatusOK).JSON(&patched)
	require.NotEqual(t, v.Hash, patched.Hash)
	require.Len(t, patched.Columns, 1, "a patch replaces Columns whole")
	ext.View.DisplayName = "stale"
	c.Put(path, ext.View).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// The Filter cannot go, nor select another type, while the View uses it.
	c.Delete(base+"/filter/"+web.FilterID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	e := c.Patch(base+"/filter/"+web.FilterID.String(), map[string]any{"From": "Space", "Where": ""}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "From", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "Views of Unit use this Filter")
	c.Patch(base+"/filter/"+web.FilterID.String(), map[string]any{"DisplayName": "still fine"}).Expect(http.StatusOK)
	c.Patch(path, map[string]any{"FilterID": nil}).Expect(http.StatusOK)
	c.Delete(base + "/filter/" + web.FilterID.String()).Expect(http.StatusOK)

	var list []api.ExtendedView
	c.Post(base+"/view", map[string]any{"Slug": "spaces", "Of": "Space"}).Expect(http.StatusOK)
	c.Get("/api/view?" + where("Of = 'Unit'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "images", list[0].View.Slug)

	other := env.Client(env.Token("other", "olga", auth.RoleAdmin))
	other.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get("/api/view").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	c.Delete(path).Expect(http.StatusOK)
	c.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestViewDefinitionIsCheckedWhenWritten: columns, order and Filter that lists of Of would refuse are
// refused when the View is written, naming the field.
func TestViewDefinitionIsCheckedWhenWritten(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	dev := createSpace(t, c, map[string]any{"Slug": "dev"})
	base := "/api/space/" + dev.SpaceID.String()
	var spaces api.Filter
	c.Post(base+"/filter", map[string]any{"Slug": "spaces", "From": "Space"}).Expect(http.StatusOK).JSON(&spaces)
	other := env.Client(env.Token("other", "olga", auth.RoleAdmin))
	theirSpace := createSpace(t, other, map[string]any{"Slug": "theirs"})
	var theirs api.Filter
	other.Post("/api/space/"+theirSpace.SpaceID.String()+"/filter", map[string]any{"Slug": "x", "From": "Unit"}).Expect(http.StatusOK).JSON(&theirs)
	cols := func(c ...map[string]any) []map[string]any { return c }

	for name, tc := range map[string]struct {
		body     map[string]any
		field    string
		fragment string
	}{
		"unknown Of":           {map[string]any{"Of": "Units"}, "Of", "not an entity type"},
		"unknown attribute":    {map[string]any{"Of": "Unit", "Columns": cols(metadataColumn("a", "Nope"))}, "Columns[0].ColumnSource.MetadataAttribute", "neither a field"},
		"unknown related":      {map[string]any{"Of": "Unit", "Columns": cols(metadataColumn("a", "Space.Nope"))}, "Columns[0].ColumnSource.MetadataAttribute", "not a field of Space"},
		"related without name": {map[string]any{"Of": "Unit", "Columns": cols(metadataColumn("a", "Space"))}, "Columns[0].ColumnSource.MetadataAttribute", "name a field"},
		"broken path":          {map[string]any{"Of": "Unit", "Columns": cols(metadataColumn("a", "Labels.'x"))}, "Columns[0].ColumnSource.MetadataAttribute", "position"},
		"both sources": {map[string]any{"Of": "Unit", "Columns": cols(map[string]any{"Name": "a", "ColumnSource": map[string]any{
			"MetadataAttribute": "Slug", "DataPath": map[string]any{"Path": "a"}}})}, "Columns[0].ColumnSource", "exactly one"},
		"no source":         {map[string]any{"Of": "Unit", "Columns": cols(map[string]any{"Name": "a", "ColumnSource": map[string]any{}})}, "Columns[0].ColumnSource", "exactly one"},
		"data of a Space":   {map[string]any{"Of": "Space", "Columns": cols(dataColumn("a", "spec", ""))}, "Columns[0].ColumnSource.DataPath", "no configuration data"},
		"broken data path":  {map[string]any{"Of": "Unit", "Columns": cols(dataColumn("a", "spec..x", ""))}, "Columns[0].ColumnSource.DataPath.Path", "position"},
		"duplicate name":    {map[string]any{"Of": "Unit", "Columns": cols(metadataColumn("a", "Slug"), metadataColumn("a", "UnitID"))}, "Columns[1].Name", "two columns"},
		"unknown GroupBy":   {map[string]any{"Of": "Unit", "GroupBy": "Labels"}, "GroupBy", "cannot be grouped"},
		"unknown OrderBy":   {map[string]any{"Of": "Unit", "OrderBy": "Bogus"}, "OrderBy", "cannot be ordered"},
		"Filter of a Space": {map[string]any{"Of": "Unit", "FilterID": spaces.FilterID}, "FilterID", "selects Space"},
		"missing Filter":    {map[string]any{"Of": "Unit", "FilterID": uuid.New()}, "FilterID", "no such Filter"},
		"their Filter":      {map[string]any{"Of": "Unit", "FilterID": theirs.FilterID}, "FilterID", "no such Filter"},
	} {
		body := map[string]any{"Slug": "v"}
		for k, v := range tc.body {
			body[k] = v
		}
		e := c.Post(base+"/view", body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message+" "+e.Error.ErrorMetadata.Items[0].Description, tc.fragment, name)
		require.Equal(t, tc.field, e.Error.ErrorMetadata.Items[0].Item, name)
	}
	c.Post(base+"/view", map[string]any{"Slug": "v", "Of": "Unit", "OrderByDirection": "UP"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	var list []api.ExtendedView
	c.Get(base + "/view").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list, "nothing refused was written")
}

// TestViewOnLists: view= returns each item's columns (attributes, related entities' attributes included
// automatically, data paths, wildcards), applies the View's Filter and order, pages consistently, and
// refuses what does not fit.
func TestViewOnLists(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	deployment := func(name string, images ...string) string {
		s := fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: %d\n  template:\n    spec:\n      containers:\n", name, len(images))
		for i, img := range images {
			s += fmt.Sprintf("        - name: c%d\n          image: %s\n", i, img)
		}
		return s + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: " + name + "\n"
	}
	units := map[string][]string{"web-1": {"nginx:1.27", "envoy:1.30"}, "web-2": {"nginx:1.26"}, "api": {"api:3"}}
	made := map[string]api.Unit{}
	for _, slug := range []string{"web-1", "web-2", "api"} {
		u := f.create(t, slug, configdata.KubernetesYAML)
		made[slug] = u
		tier := "web"
		if slug == "api" {
			tier = "api"
		}
		f.c.Patch(f.path(u), map[string]any{"Labels": map[string]string{"tier": tier, "team": "core"}}).Expect(http.StatusOK)
		f.put(t, u, "application/yaml", deployment(slug, units[slug]...)).Expect(http.StatusOK)
	}
	base := "/api/space/" + f.space.SpaceID.String()
	var web api.Filter
	f.c.Post(base+"/filter", map[string]any{"Slug": "web", "From": "Unit", "Where": "Labels.tier = 'web'"}).Expect(http.StatusOK).JSON(&web)
	var images, filtered api.View
	f.c.Post(base+"/view", map[string]any{"Slug": "images", "Of": "Unit", "OrderBy": "Slug", "OrderByDirection": "DESC", "Columns": []map[string]any{
		metadataColumn("Unit", "Slug"), metadataColumn("Space", "Space.Slug"), metadataColumn("Label", "Labels.*"),
		dataColumn("Image", "spec.template.spec.containers.*.image", "apps/v1/Deployment"), dataColumn("Name", "metadata.name", ""),
		metadataColumn("Missing", "Labels.nope"),
	}}).Expect(http.StatusOK).JSON(&images)
	f.c.Post(base+"/view", map[string]any{"Slug": "web", "Of": "Unit", "FilterID": web.FilterID, "Columns": []map[string]any{metadataColumn("Unit", "Slug")}}).
		Expect(http.StatusOK).JSON(&filtered)

	get := func(q url.Values) ([]api.ExtendedUnit, *apitest.Response) {
		var list []api.ExtendedUnit
		resp := f.c.Get(f.unitsPath() + "?" + q.Encode()).Expect(http.StatusOK)
		resp.JSON(&list)
		return list, resp
	}
	list, _ := get(url.Values{"view": {images.ViewID.String()}})
	require.Len(t, list, 3)
	require.Equal(t, []string{"web-2", "web-1", "api"}, []string{list[0].Unit.Slug, list[1].Unit.Slug, list[2].Unit.Slug}, "the View's order")
	require.NotNil(t, list[0].Space, "the Space its column reads is included")
	require.Equal(t, []api.ViewColumn{
		{Name: "Unit", Value: "web-1"}, {Name: "Space", Value: "dev"},
		{Name: "Label", Value: "core"}, {Name: "Label", Value: "web"},
		{Name: "Image", Value: "nginx:1.27"}, {Name: "Image", Value: "envoy:1.30"},
		{Name: "Name", Value: "web-1"}, {Name: "Name", Value: "web-1"},
	}, list[1].ViewColumns, "columns in order, one entry per value, nothing for a path that finds nothing")

	// The request's order_by replaces the View's; select keeps the fields the columns read.
	list, _ = get(url.Values{"view": {images.ViewID.String()}, "order_by": {"Slug"}})
	require.Equal(t, "api", list[0].Unit.Slug)
	var raw []map[string]any
	f.c.Get(f.unitsPath() + "?" + url.Values{"view": {images.ViewID.String()}, "select": {"DisplayName"}}.Encode()).Expect(http.StatusOK).JSON(&raw)
	require.Contains(t, raw[0]["Unit"], "Labels")
	require.Equal(t, map[string]any{"Slug": "dev"}, raw[0]["Space"], "select keeps the included field a column reads")

	// Pages follow the View's order and end when it changes.
	first, resp := get(url.Values{"view": {images.ViewID.String()}, "limit": {"2"}})
	require.Equal(t, "web-2", first[0].Unit.Slug)
	next := resp.Header.Get("Service-Continue")
	require.NotEmpty(t, next)
	rest, _ := get(url.Values{"view": {images.ViewID.String()}, "limit": {"2"}, "continue": {next}})
	require.Len(t, rest, 1)
	require.Equal(t, "api", rest[0].Unit.Slug)
	f.c.Patch(base+"/view/"+images.ViewID.String(), map[string]any{"OrderByDirection": "ASC"}).Expect(http.StatusOK)
	e := f.c.Get(f.unitsPath()+"?"+url.Values{"view": {images.ViewID.String()}, "limit": {"2"}, "continue": {next}}.Encode()).
		ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "continue", e.Error.ErrorMetadata.Items[0].Item)

	// The View's Filter applies, and cannot be combined with filter=.
	list, _ = get(url.Values{"view": {filtered.ViewID.String()}, "order_by": {"Slug"}})
	require.Len(t, list, 2)
	require.Equal(t, "web-1", list[0].Unit.Slug)
	e = f.c.Get(f.unitsPath()+"?"+url.Values{"view": {filtered.ViewID.String()}, "filter": {web.FilterID.String()}}.Encode()).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "cannot be combined with filter")
	list, _ = get(url.Values{"view": {images.ViewID.String()}, "filter": {web.FilterID.String()}})
	require.Len(t, list, 2, "a View without a Filter takes filter=")

	// Both are named by ID, by Slug in the operation's Space, or as <Space Slug>/<Slug> anywhere.
	list, _ = get(url.Values{"view": {"web"}, "order_by": {"Slug"}})
	require.Len(t, list, 2)
	var all []api.ExtendedUnit
	f.c.Get("/api/unit?" + url.Values{"view": {"dev/web"}}.Encode()).Expect(http.StatusOK).JSON(&all)
	require.Len(t, all, 2)
	list, _ = get(url.Values{"view": {"images"}, "filter": {"web"}})
	require.Len(t, list, 2)
	f.c.Get("/api/unit?view=web").ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// A View of another type, of no one or of another organization is refused.
	var spaces api.View
	f.c.Post(base+"/view", map[string]any{"Slug": "spaces", "Of": "Space"}).Expect(http.StatusOK).JSON(&spaces)
	e = f.c.Get(f.unitsPath()+"?view="+spaces.ViewID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "is of Space, not Unit")
	f.c.Get(f.unitsPath()+"?view="+uuid.NewString()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	other := f.env.Client(f.env.Token("other", "olga", auth.RoleAdmin))
	theirSpace := createSpace(t, other, map[string]any{"Slug": "theirs"})
	var theirs api.View
	other.Post("/api/space/"+theirSpace.SpaceID.String()+"/view", map[string]any{"Slug": "x", "Of": "Unit"}).Expect(http.StatusOK).JSON(&theirs)
	for _, ref := range []string{theirs.ViewID.String(), "theirs/x"} {
		e = f.c.Get(f.unitsPath()+"?view="+ref).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message, "no View")
	}

	// GroupBy comes first, whatever order_by says of the rest.
	f.put(t, made["web-1"], "application/yaml", deployment("web-1", "nginx:1.28")).Expect(http.StatusOK) // its second Revision
	var grouped api.View
	f.c.Post(base+"/view", map[string]any{"Slug": "by-revision", "Of": "Unit", "GroupBy": "HeadRevisionNum", "OrderBy": "DESC:Slug"}).Expect(http.StatusOK).JSON(&grouped)
	slugs := func(list []api.ExtendedUnit) []string {
		out := make([]string, len(list))
		for i, e := range list {
			out[i] = e.Unit.Slug
		}
		return out
	}
	list, _ = get(url.Values{"view": {grouped.ViewID.String()}})
	require.Equal(t, []string{"web-2", "api", "web-1"}, slugs(list))
	list, _ = get(url.Values{"view": {grouped.ViewID.String()}, "order_by": {"Slug"}})
	require.Equal(t, []string{"api", "web-2", "web-1"}, slugs(list))
	list, _ = get(url.Values{"view": {grouped.ViewID.String()}, "order_by": {"DESC:HeadRevisionNum,Slug"}})
	require.Equal(t, []string{"web-1", "api", "web-2"}, slugs(list), "order_by may give the group's direction")
}

// TestEntityDocuments: Views and Filters read as documents (references by name, Version) and take edits
// of them as merge patches: an unchanged document writes nothing, a stale Version is 409, dry_run stores
// nothing, removed fields are cleared.
func TestEntityDocuments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	dev := createSpace(t, c, map[string]any{"Slug": "dev"})
	prod := createSpace(t, c, map[string]any{"Slug": "prod"})
	devPath, prodPath := "/api/space/"+dev.SpaceID.String(), "/api/space/"+prod.SpaceID.String()
	var web, prodWeb api.Filter
	c.Post(devPath+"/filter", map[string]any{"Slug": "web", "From": "Unit", "FromSpaceID": prod.SpaceID}).Expect(http.StatusOK).JSON(&web)
	c.Post(prodPath+"/filter", map[string]any{"Slug": "prod-web", "From": "Unit"}).Expect(http.StatusOK).JSON(&prodWeb)
	var v api.View
	c.Post(devPath+"/view", map[string]any{"Slug": "images", "DisplayName": "Images", "Of": "Unit", "FilterID": web.FilterID,
		"Labels": map[string]string{"team": "core"}, "Columns": []map[string]any{metadataColumn("Name", "Slug")}}).Expect(http.StatusOK).JSON(&v)
	viewPath := devPath + "/view/" + v.ViewID.String()

	var doc api.EntityDocument
	c.Get(viewPath + "/document").Expect(http.StatusOK).JSON(&doc)
	require.Equal(t, "View", doc.EntityType)
	require.Equal(t, v.Version, doc.Version)
	fields := map[string]any{}
	require.NoError(t, json.Unmarshal(doc.Document, &fields))
	require.Equal(t, "web", fields["Filter"], "a Filter of the View's Space is named by its Slug")
	require.NotContains(t, fields, "FilterID")
	require.NotContains(t, fields, "Permissions")
	require.Equal(t, "images", fields["Slug"])
	require.Len(t, fields["Columns"], 1)

	edit := func(base api.EntityDocument, change func(map[string]any), query string) *apitest.Response {
		edited := map[string]any{}
		require.NoError(t, json.Unmarshal(base.Document, &edited))
		change(edited)
		return c.Post(viewPath+"/document"+query, map[string]any{"Base": base, "Document": map[string]any{"EntityType": base.EntityType,
			"Version": base.Version, "Document": edited}})
	}
	// Unchanged: nothing is written.
	var same api.EntityDocument
	edit(doc, func(map[string]any) {}, "").Expect(http.StatusOK).JSON(&same)
	require.Equal(t, doc.Version, same.Version)
	require.JSONEq(t, string(doc.Document), string(same.Document))

	// A change: a Filter of another Space by <Space>/<Slug>, a removed field cleared, the rest kept.
	var changed api.EntityDocument
	edit(doc, func(m map[string]any) {
		m["Filter"] = "prod/prod-web"
		delete(m, "DisplayName")
		m["Labels"] = map[string]any{"team": "core", "tier": "web"}
	}, "").Expect(http.StatusOK).JSON(&changed)
	require.Equal(t, doc.Version+1, changed.Version)
	var got api.ExtendedView
	c.Get(viewPath).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, prodWeb.FilterID, *got.View.FilterID)
	require.Empty(t, got.View.DisplayName)
	require.Equal(t, api.Labels{"team": "core", "tier": "web"}, got.View.Labels)
	require.Len(t, got.View.Columns, 1)
	require.NoError(t, json.Unmarshal(changed.Document, &fields))
	require.Equal(t, "prod/prod-web", fields["Filter"])

	// The old Version is a conflict; dry_run answers the result and stores nothing.
	edit(doc, func(m map[string]any) { m["DisplayName"] = "late" }, "").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	edit(doc, func(map[string]any) {}, "").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var dry api.EntityDocument
	edit(changed, func(m map[string]any) { m["DisplayName"] = "dry" }, "?dry_run=true").Expect(http.StatusOK).JSON(&dry)
	require.Contains(t, string(dry.Document), `"DisplayName":"dry"`)
	c.Get(viewPath).Expect(http.StatusOK).JSON(&got)
	require.Empty(t, got.View.DisplayName)
	require.Equal(t, changed.Version, got.View.Version)

	// What cannot be applied is refused, naming it.
	e := edit(changed, func(m map[string]any) { m["Filter"] = "nope" }, "").ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Document.Filter", e.Error.ErrorMetadata.Items[0].Item)
	e = edit(changed, func(m map[string]any) { m["Permissions"] = map[string]any{} }, "").ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Document.Permissions", e.Error.ErrorMetadata.Items[0].Item)
	edit(changed, func(m map[string]any) { m["GroupBy"] = "Labels" }, "").ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	c.Post(viewPath+"/document", map[string]any{"Base": changed, "Document": api.EntityDocument{EntityType: "Filter", Version: changed.Version,
		Document: changed.Document}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// A Filter's document names its FromSpace; clearing it clears FromSpaceID.
	filterPath := devPath + "/filter/" + web.FilterID.String()
	var fdoc api.EntityDocument
	c.Get(filterPath + "/document").Expect(http.StatusOK).JSON(&fdoc)
	require.NoError(t, json.Unmarshal(fdoc.Document, &fields))
	require.Equal(t, "prod", fields["FromSpace"])
	fields["FromSpace"] = nil
	c.Post(filterPath+"/document", map[string]any{"Base": fdoc, "Document": map[string]any{"EntityType": "Filter", "Version": fdoc.Version,
		"Document": fields}}).Expect(http.StatusOK)
	var gotFilter api.ExtendedFilter
	c.Get(filterPath).Expect(http.StatusOK).JSON(&gotFilter)
	require.Nil(t, gotFilter.Filter.FromSpaceID)

	// Another organization reads and edits none of it.
	other := env.Client(env.Token("other", "olga", auth.RoleAdmin))
	other.Get(viewPath+"/document").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Post(viewPath+"/document", map[string]any{"Base": changed, "Document": changed}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestCloneAndMoveFiltersAndViews: POST /filter and /view copy what the selection picks (into the Spaces
// where_space and filter_space select, once per prefix, with the body applied, recording the source);
// POST /.../move moves it, refusing a taken Slug and a Space of another organization.
func TestCloneAndMoveFiltersAndViews(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	dev := createSpace(t, c, map[string]any{"Slug": "dev"})
	prod := createSpace(t, c, map[string]any{"Slug": "prod", "Labels": map[string]string{"env": "prod"}})
	stage := createSpace(t, c, map[string]any{"Slug": "stage", "Labels": map[string]string{"env": "stage"}})
	devPath := "/api/space/" + dev.SpaceID.String()
	var web api.Filter
	c.Post(devPath+"/filter", map[string]any{"Slug": "web", "From": "Unit", "Where": "Labels.tier = 'web'"}).Expect(http.StatusOK).JSON(&web)
	var v api.View
	c.Post(devPath+"/view", map[string]any{"Slug": "images", "Of": "Unit", "FilterID": web.FilterID,
		"Columns": []map[string]any{metadataColumn("Name", "Slug")}}).Expect(http.StatusOK).JSON(&v)
	var envSpaces api.Filter
	c.Post(devPath+"/filter", map[string]any{"Slug": "deployed", "From": "Space", "Where": "Labels.env IN ('prod', 'stage')"}).Expect(http.StatusOK).JSON(&envSpaces)

	// Clones into the Spaces where_space selects, with the patch; the source is recorded.
	var copies []api.FilterCreateOrUpdateResponse
	c.Post("/api/filter?"+url.Values{"where": {"Slug = 'web'"}, "where_space": {"Labels.env = 'prod'"}, "name_prefixes": {"a-,b-"}}.Encode(),
		map[string]any{"DisplayName": "copy"}).Expect(http.StatusOK).JSON(&copies)
	require.Len(t, copies, 2)
	for _, cp := range copies {
		require.Nil(t, cp.Error)
		require.Equal(t, prod.SpaceID, cp.Filter.SpaceID)
		require.Equal(t, "copy", cp.Filter.DisplayName)
		require.Equal(t, web.Where, cp.Filter.Where)
		require.Equal(t, web.FilterID, *cp.Filter.UpstreamFilterID)
		require.Equal(t, web.Hash, cp.Filter.Hash)
	}
	require.ElementsMatch(t, []string{"a-web", "b-web"}, []string{copies[0].Filter.Slug, copies[1].Filter.Slug})
	// Again: the Slugs are taken (409 each), unless allow_exists.
	c.Post("/api/filter?"+url.Values{"where": {"Slug = 'web'"}, "where_space": {"Labels.env = 'prod'"}, "name_prefixes": {"a-"}}.Encode(),
		map[string]any{}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post("/api/filter?"+url.Values{"where": {"Slug = 'web'"}, "where_space": {"Labels.env = 'prod'"}, "name_prefixes": {"a-"}, "allow_exists": {"true"}}.Encode(),
		map[string]any{}).Expect(http.StatusOK)

	// filter_space selects destinations too; a View's copy keeps its Filter.
	var viewCopies []api.ViewCreateOrUpdateResponse
	c.Post("/api/view?"+url.Values{"where": {"Slug = 'images'"}, "filter_space": {"dev/deployed"}}.Encode(), map[string]any{}).
		Expect(http.StatusOK).JSON(&viewCopies)
	require.Len(t, viewCopies, 2)
	require.ElementsMatch(t, []uuid.UUID{prod.SpaceID, stage.SpaceID}, []uuid.UUID{viewCopies[0].View.SpaceID, viewCopies[1].View.SpaceID})
	require.Equal(t, web.FilterID, *viewCopies[0].View.FilterID)
	require.Equal(t, v.ViewID, *viewCopies[0].View.UpstreamViewID)
	// A destination selecting nothing, a Filter of Units as filter_space, and no selection are refused.
	c.Post("/api/view?"+url.Values{"where": {"Slug = 'images'"}, "where_space": {"Slug = 'nowhere'"}}.Encode(), map[string]any{}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	e := c.Post("/api/view?"+url.Values{"where": {"Slug = 'images'"}, "filter_space": {"dev/web"}}.Encode(), map[string]any{}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "filter_space", e.Error.ErrorMetadata.Items[0].Item)
	c.Post("/api/view", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// Units take filter_space as well.
	var unitRes api.UnitCreateOrUpdateResponse
	c.Post(devPath+"/unit", map[string]any{"Slug": "app", "ToolchainType": configdata.KubernetesYAML}).Expect(http.StatusOK).JSON(&unitRes)
	var unitCopies []api.UnitCreateOrUpdateResponse
	c.Post("/api/unit?"+url.Values{"where": {"Slug = 'app'"}, "filter_space": {envSpaces.FilterID.String()}}.Encode(), map[string]any{}).
		Expect(http.StatusOK).JSON(&unitCopies)
	require.Len(t, unitCopies, 2)

	// Move: to another Space of the organization; a taken Slug is 409 for that item; another org's Space is refused.
	var moved []api.ViewCreateOrUpdateResponse
	c.Post("/api/view/move?"+where("Slug = 'images' AND SpaceID = '"+dev.SpaceID.String()+"'").Encode(), map[string]any{"ToSpaceID": prod.SpaceID}).
		ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post(devPath+"/view", map[string]any{"Slug": "spare", "Of": "Space"}).Expect(http.StatusOK)
	c.Post("/api/view/move?"+where("Slug = 'spare'").Encode(), map[string]any{"ToSpaceID": stage.SpaceID}).Expect(http.StatusOK).JSON(&moved)
	require.Len(t, moved, 1)
	require.Equal(t, stage.SpaceID, moved[0].View.SpaceID)
	require.Equal(t, int64(2), moved[0].View.Version)
	c.Get("/api/space/" + stage.SpaceID.String() + "/view/" + moved[0].View.ViewID.String()).Expect(http.StatusOK)
	theirs := createSpace(t, env.Client(env.Token("other", "olga", auth.RoleAdmin)), map[string]any{"Slug": "theirs"})
	var refused []api.FilterCreateOrUpdateResponse
	e = c.Post("/api/filter/move?"+where("Slug = 'a-web'").Encode(), map[string]any{"ToSpaceID": theirs.SpaceID}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ToSpaceID", e.Error.ErrorMetadata.Items[0].Item)
	c.Post("/api/filter/move?"+where("Slug = 'a-web'").Encode()+"&dry_run=true", map[string]any{"ToSpaceID": stage.SpaceID}).Expect(http.StatusOK).JSON(&refused)
	require.Equal(t, stage.SpaceID, refused[0].Filter.SpaceID)
	var still []api.ExtendedFilter
	c.Get("/api/filter?" + where("Slug = 'a-web'").Encode()).Expect(http.StatusOK).JSON(&still)
	require.Equal(t, prod.SpaceID, still[0].Filter.SpaceID, "a dry run moves nothing")
}

// TestFiltersAndViewsAcrossOrganizations: one User is a member of two organizations with Spaces of the same
// Slug. With its token of one, it reaches nothing of the other's Filters and Views: not by ID, nor by
// <Space Slug>/<Slug>, nor through documents, copies, moves or GET /filter?entity=&id=.
func TestFiltersAndViewsAcrossOrganizations(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	adminB := env.Client(env.Token("org-b", "bob", auth.RoleAdmin))
	samA := env.Client(env.Token("org-a", "sam", auth.RoleAdmin))
	samB := env.Client(env.Token("org-b", "sam", auth.RoleMember))
	devA := createSpace(t, samA, map[string]any{"Slug": "dev"})
	devB := createSpace(t, adminB, map[string]any{"Slug": "dev"})
	bPath := "/api/space/" + devB.SpaceID.String()
	var web api.Filter
	adminB.Post(bPath+"/filter", map[string]any{"Slug": "web", "From": "Unit"}).Expect(http.StatusOK).JSON(&web)
	var images api.View
	adminB.Post(bPath+"/view", map[string]any{"Slug": "images", "Of": "Unit", "FilterID": web.FilterID,
		"Columns": []map[string]any{metadataColumn("Name", "Slug")}}).Expect(http.StatusOK).JSON(&images)
	var app api.UnitCreateOrUpdateResponse
	adminB.Post(bPath+"/unit", map[string]any{"Slug": "app", "ToolchainType": configdata.KubernetesYAML}).Expect(http.StatusOK).JSON(&app)

	// In B, sam (a member) uses them.
	var units []api.ExtendedUnit
	samB.Get("/api/unit?view=dev/images").Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)

	// In A, the same names and IDs name nothing.
	for _, q := range []string{"view=dev/images", "view=" + images.ViewID.String(), "filter=dev/web", "filter=" + web.FilterID.String()} {
		samA.Get("/api/unit?"+q).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		samA.Get("/api/space/"+devA.SpaceID.String()+"/unit?"+q).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	}
	samA.Get("/api/space/"+devB.SpaceID.String()+"/view/"+images.ViewID.String()+"/document").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	samA.Get("/api/space/"+devA.SpaceID.String()+"/view/"+images.ViewID.String()+"/document").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	e := samA.Get("/api/filter?entity=Unit&id="+app.Unit.UnitID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "id", e.Error.ErrorMetadata.Items[0].Item)
	var none []api.ViewCreateOrUpdateResponse
	samA.Post("/api/view?"+url.Values{"where": {"Slug = 'images'"}, "where_space": {"Slug = 'dev'"}}.Encode(), map[string]any{}).
		Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none, "a copy selects only the caller's organization's Views")
	samA.Post("/api/view/move?"+where("Slug = 'images'").Encode(), map[string]any{"ToSpaceID": devA.SpaceID}).Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)
	var filters []api.ExtendedFilter
	samA.Get("/api/filter").Expect(http.StatusOK).JSON(&filters)
	require.Empty(t, filters)
	// And B's View and Filter are as they were.
	var got api.ExtendedView
	adminB.Get(bPath + "/view/" + images.ViewID.String()).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, images.Version, got.View.Version)
	require.Equal(t, devB.SpaceID, got.View.SpaceID)
}
