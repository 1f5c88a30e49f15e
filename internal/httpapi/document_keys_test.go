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

// TestDocumentKeysMatchExactly: a document's keys are matched exactly; a key no field of the entity has,
// one differing only in case included ("permissions" is not Permissions, which documents leave out), is
// refused (400 naming it) and never merged into a field, at the top level and below it.
func TestDocumentKeysMatchExactly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	vic := env.Principal("acme", "vic", auth.RoleGuest).UserID
	dev := createSpace(t, c, map[string]any{"Slug": "dev"})
	var v api.View
	c.Post("/api/space/"+dev.SpaceID.String()+"/view", map[string]any{"Slug": "images", "Of": "Unit",
		"Columns": []map[string]any{metadataColumn("Name", "Slug")}}).Expect(http.StatusOK).JSON(&v)
	viewPath := "/api/space/" + dev.SpaceID.String() + "/view/" + v.ViewID.String()
	var doc api.EntityDocument
	c.Get(viewPath + "/document").Expect(http.StatusOK).JSON(&doc)

	edit := func(change func(map[string]any)) *apitest.Response {
		edited := map[string]any{}
		require.NoError(t, json.Unmarshal(doc.Document, &edited))
		change(edited)
		return c.Post(viewPath+"/document", map[string]any{"Base": doc, "Document": map[string]any{"EntityType": doc.EntityType,
			"Version": doc.Version, "Document": edited}})
	}
	grant := map[string]any{"View": map[string]any{"UserIDs": map[string]bool{vic.String(): true}}}
	e := edit(func(m map[string]any) { m["permissions"] = grant }).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Document.permissions", e.Error.ErrorMetadata.Items[0].Item)
	e = edit(func(m map[string]any) { m["slug"] = "other" }).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Document.slug", e.Error.ErrorMetadata.Items[0].Item)
	e = edit(func(m map[string]any) {
		m["Columns"] = []map[string]any{{"Name": "Name", "columnSource": map[string]any{"MetadataAttribute": "DisplayName"}, "ColumnSource": map[string]any{"MetadataAttribute": "Slug"}}}
	}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Document.Columns.0.columnSource", e.Error.ErrorMetadata.Items[0].Item)

	var got api.ExtendedView
	c.Get(viewPath).Expect(http.StatusOK).JSON(&got)
	now := got.View
	require.Equal(t, v.Version, now.Version, "nothing was written")
	require.Empty(t, now.Permissions["View"].UserIDs)
	require.Equal(t, "images", now.Slug)
}
