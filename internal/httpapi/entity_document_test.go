package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

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
	fields = map[string]any{}
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
