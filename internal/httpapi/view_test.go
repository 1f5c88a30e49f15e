package httpapi_test

import (
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
