package httpapi_test

import (
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
