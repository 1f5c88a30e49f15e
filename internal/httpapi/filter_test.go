package httpapi_test

import (
	"context"
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
)

// TestFilterLifecycle: Filters are written, read, listed, patched and deleted with the kit's rules; their
// Hash follows the definition only.
func TestFilterLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	dev := createSpace(t, c, map[string]any{"Slug": "dev"})
	filters := "/api/space/" + dev.SpaceID.String() + "/filter"

	var f api.Filter
	c.Post(filters, map[string]any{"Slug": "web", "From": "Unit", "Where": "Labels.tier = 'web'", "WhereData": "spec.replicas > 1",
		"ResourceType": "apps/v1/Deployment"}).Expect(http.StatusOK).JSON(&f)
	require.Equal(t, "Unit", f.From)
	require.Equal(t, "Filter", f.EntityType)
	require.Equal(t, int64(1), f.Version)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), f.Hash)
	c.Post(filters, map[string]any{"Slug": "web", "From": "Space"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post(filters+"?dry_run=true", map[string]any{"Slug": "ghost", "From": "Space"}).Expect(http.StatusOK)

	path := filters + "/" + f.FilterID.String()
	var ext api.ExtendedFilter
	c.Get(path + "?include=SpaceID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, f.Hash, ext.Filter.Hash)
	require.Equal(t, "dev", ext.Space.Slug)

	// The Hash changes with the definition, not with the rest.
	var patched api.Filter
	c.Patch(path, map[string]any{"DisplayName": "Web Units"}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, f.Hash, patched.Hash)
	c.Patch(path, map[string]any{"Where": "Labels.tier = 'api'"}).Expect(http.StatusOK).JSON(&patched)
	require.NotEqual(t, f.Hash, patched.Hash)
	ext.Filter.Where = "Slug = 'x'"
	c.Put(path, ext.Filter).ExpectError(http.StatusConflict, api.ErrorTypeConflict) // a stale Version

	var list []api.ExtendedFilter
	c.Post(filters, map[string]any{"Slug": "spaces", "From": "Space", "Where": "Labels.env = 'prod'"}).Expect(http.StatusOK)
	c.Get("/api/filter?" + where("From = 'Unit'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "web", list[0].Filter.Slug)
	c.Get(filters + "?order_by=DESC:Slug").Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"web", "spaces"}, []string{list[0].Filter.Slug, list[1].Filter.Slug})

	// Another organization sees none of it.
	other := env.Client(env.Token("other", "olga", auth.RoleAdmin))
	other.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get("/api/filter").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	c.Delete(path).Expect(http.StatusOK)
	c.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestFilterDefinitionIsCheckedWhenWritten: a definition that a list of From would refuse is refused when
// the Filter is written, naming the field (and the position in an expression).
func TestFilterDefinitionIsCheckedWhenWritten(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	dev := createSpace(t, c, map[string]any{"Slug": "dev"})
	filters := "/api/space/" + dev.SpaceID.String() + "/filter"
	foreign := createSpace(t, env.Client(env.Token("other", "olga", auth.RoleAdmin)), map[string]any{"Slug": "theirs"})

	for name, tc := range map[string]struct {
		body     map[string]any
		field    string
		fragment string
	}{
		"unknown From":          {map[string]any{"From": "Units"}, "From", "not an entity type"},
		"unknown attribute":     {map[string]any{"From": "Unit", "Where": "Nope = 'a'"}, "Where", "position 1"},
		"broken where":          {map[string]any{"From": "Space", "Where": "Slug = 'a"}, "Where", "not closed"},
		"wrong type":            {map[string]any{"From": "Space", "Where": "CreatedAt > 'yesterday'"}, "Where", "a quoted time"},
		"data of a Space":       {map[string]any{"From": "Space", "WhereData": "a = 1"}, "WhereData", "Space lists take no where_data"},
		"broken where_data":     {map[string]any{"From": "Unit", "WhereData": "a = "}, "WhereData", "position"},
		"bad include_hidden":    {map[string]any{"From": "Unit", "IncludeHidden": "*,old"}, "IncludeHidden", "stands alone"},
		"unknown FromSpaceID":   {map[string]any{"From": "Unit", "FromSpaceID": uuid.New()}, "FromSpaceID", "no such Space"},
		"another org's SpaceID": {map[string]any{"From": "Unit", "FromSpaceID": foreign.SpaceID}, "FromSpaceID", "no such Space"},
	} {
		body := map[string]any{"Slug": "f"}
		for k, v := range tc.body {
			body[k] = v
		}
		e := c.Post(filters, body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message+" "+e.Error.ErrorMetadata.Items[0].Description, tc.fragment, name)
		require.Equal(t, tc.field, e.Error.ErrorMetadata.Items[0].Item, name)
	}
	var list []api.ExtendedFilter
	c.Get(filters).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list, "nothing refused was written")

	// A valid one with a Space of the organization; a patch to a broken definition is refused and changes nothing.
	var f api.Filter
	c.Post(filters, map[string]any{"Slug": "f", "From": "Space", "FromSpaceID": dev.SpaceID}).Expect(http.StatusOK).JSON(&f)
	c.Patch(filters+"/"+f.FilterID.String(), map[string]any{"Where": "Bogus = 1"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var got api.ExtendedFilter
	c.Get(filters + "/" + f.FilterID.String()).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, f.Version, got.Filter.Version)
	require.Empty(t, got.Filter.Where)
}

// TestFilterOnLists: filter= ANDs a stored Filter's Where with the request's where (and, for Units, its
// WhereData and ResourceType with where_data) on lists and bulk selections; the Filter must be the
// organization's, of the listed type and, reading another Space, of the operation's; a changed Filter ends
// the pages of the old one.
func TestFilterOnLists(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	manifest := func(name string, replicas int) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: %d\n", name, replicas)
	}
	for i, slug := range []string{"web-1", "web-2", "api"} {
		u := f.create(t, slug, "Kubernetes/YAML")
		tier := "web"
		if slug == "api" {
			tier = "api"
		}
		f.c.Patch(f.path(u), map[string]any{"Labels": map[string]string{"tier": tier}}).Expect(http.StatusOK)
		f.put(t, u, "application/yaml", manifest(slug, i+1)).Expect(http.StatusOK)
	}
	filters := "/api/space/" + f.space.SpaceID.String() + "/filter"
	var web, big, spaces api.Filter
	f.c.Post(filters, map[string]any{"Slug": "web", "From": "Unit", "Where": "Labels.tier = 'web'"}).Expect(http.StatusOK).JSON(&web)
	f.c.Post(filters, map[string]any{"Slug": "big", "From": "Unit", "WhereData": "spec.replicas > 1", "ResourceType": "apps/v1/Deployment"}).
		Expect(http.StatusOK).JSON(&big)
	f.c.Post(filters, map[string]any{"Slug": "spaces", "From": "Space"}).Expect(http.StatusOK).JSON(&spaces)

	unitSlugs := func(query url.Values) []string {
		var list []api.ExtendedUnit
		f.c.Get(f.unitsPath() + "?" + query.Encode()).Expect(http.StatusOK).JSON(&list)
		out := make([]string, len(list))
		for i, e := range list {
			out[i] = e.Unit.Slug
		}
		return out
	}
	by := url.Values{"order_by": {"Slug"}}
	with := func(filterID uuid.UUID, more ...string) url.Values {
		q := url.Values{"filter": {filterID.String()}, "order_by": {"Slug"}}
		for i := 0; i+1 < len(more); i += 2 {
			q.Set(more[i], more[i+1])
		}
		return q
	}
	require.Equal(t, []string{"api", "web-1", "web-2"}, unitSlugs(by))
	require.Equal(t, []string{"web-1", "web-2"}, unitSlugs(with(web.FilterID)))
	require.Equal(t, []string{"web-2"}, unitSlugs(with(web.FilterID, "where", "Slug != 'web-1'")))
	require.Equal(t, []string{"api", "web-2"}, unitSlugs(with(big.FilterID)), "its WhereData and ResourceType apply")
	require.Equal(t, []string{"web-2"}, unitSlugs(with(big.FilterID, "where_data", "spec.replicas < 3")))
	var all []api.ExtendedUnit
	f.c.Get("/api/unit?" + with(web.FilterID).Encode()).Expect(http.StatusOK).JSON(&all)
	require.Len(t, all, 2, "list-all takes it too")

	// The request's where keeps its own positions in errors.
	e := f.c.Get(f.unitsPath()+"?"+with(web.FilterID, "where", "Nope = 1").Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "position 1")

	// A Filter of another type, of no one, or of another organization is refused.
	e = f.c.Get(f.unitsPath()+"?filter="+spaces.FilterID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "selects Space, not Unit")
	f.c.Get(f.unitsPath()+"?filter="+uuid.NewString()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	other := f.env.Client(f.env.Token("other", "olga", auth.RoleAdmin))
	otherSpace := createSpace(t, other, map[string]any{"Slug": "theirs"})
	var theirs api.Filter
	other.Post("/api/space/"+otherSpace.SpaceID.String()+"/filter", map[string]any{"Slug": "x", "From": "Unit"}).Expect(http.StatusOK).JSON(&theirs)
	e = f.c.Get(f.unitsPath()+"?filter="+theirs.FilterID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "no Filter")

	// A Filter reading another Space applies to that Space's lists only.
	prod := createSpace(t, f.c, map[string]any{"Slug": "prod"})
	var prodUnits api.Filter
	f.c.Post(filters, map[string]any{"Slug": "prod-units", "From": "Unit", "FromSpaceID": prod.SpaceID}).Expect(http.StatusOK).JSON(&prodUnits)
	e = f.c.Get(f.unitsPath()+"?filter="+prodUnits.FilterID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "reads Space")
	f.c.Get("/api/space/" + prod.SpaceID.String() + "/unit?filter=" + prodUnits.FilterID.String()).Expect(http.StatusOK)
	// A Filter without FromSpaceID reads its own Space: another Space's lists refuse it, lists of all take it.
	e = f.c.Get("/api/space/"+prod.SpaceID.String()+"/unit?filter="+web.FilterID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "is of Space")
	f.c.Get("/api/unit?filter=" + web.FilterID.String()).Expect(http.StatusOK)

	// Pages of a Filter end when it changes.
	first := f.c.Get(f.unitsPath() + "?" + with(web.FilterID, "limit", "1").Encode()).Expect(http.StatusOK)
	next := first.Header.Get("Service-Continue")
	require.NotEmpty(t, next)
	f.c.Get(f.unitsPath() + "?" + with(web.FilterID, "limit", "1", "continue", next).Encode()).Expect(http.StatusOK)
	f.c.Patch(filters+"/"+web.FilterID.String(), map[string]any{"Where": "Labels.tier = 'api'"}).Expect(http.StatusOK)
	e = f.c.Get(f.unitsPath()+"?"+with(web.FilterID, "limit", "1", "continue", next).Encode()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "continue", e.Error.ErrorMetadata.Items[0].Item)

	// Bulk selections take it: only the Filter's Units are patched.
	var items []api.UnitCreateOrUpdateResponse
	f.c.Patch("/api/unit?filter="+web.FilterID.String(), map[string]any{"Labels": map[string]string{"picked": "yes"}}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Equal(t, "api", items[0].Unit.Slug)
}

// TestFiltersSelectingAnEntity: GET /filter with entity and id lists the Filters that select that entity
// (its type, Where, WhereData and IncludeHidden), across pages.
func TestFiltersSelectingAnEntity(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	web := f.create(t, "web", "Kubernetes/YAML")
	f.c.Patch(f.path(web), map[string]any{"Labels": map[string]string{"tier": "web"}}).Expect(http.StatusOK)
	f.put(t, web, "application/yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n").Expect(http.StatusOK)
	filters := "/api/space/" + f.space.SpaceID.String() + "/filter"
	for _, body := range []map[string]any{
		{"Slug": "all-units", "From": "Unit"},
		{"Slug": "web", "From": "Unit", "Where": "Labels.tier = 'web'"},
		{"Slug": "api", "From": "Unit", "Where": "Labels.tier = 'api'"},
		{"Slug": "big", "From": "Unit", "WhereData": "spec.replicas > 2", "ResourceType": "apps/v1/Deployment"},
		{"Slug": "small", "From": "Unit", "WhereData": "spec.replicas < 2"},
		{"Slug": "spaces", "From": "Space"},
	} {
		f.c.Post(filters, body).Expect(http.StatusOK)
	}
	selecting := func(q url.Values) []string {
		var out []string
		for {
			var page []api.ExtendedFilter
			resp := f.c.Get("/api/filter?" + q.Encode()).Expect(http.StatusOK)
			resp.JSON(&page)
			for _, e := range page {
				out = append(out, e.Filter.Slug)
			}
			next := resp.Header.Get("Service-Continue")
			if next == "" {
				return out
			}
			q.Set("continue", next)
		}
	}
	q := url.Values{"entity": {"Unit"}, "id": {web.UnitID.String()}, "order_by": {"Slug"}}
	require.Equal(t, []string{"all-units", "big", "web"}, selecting(q))
	q.Set("limit", "1")
	require.Equal(t, []string{"all-units", "big", "web"}, selecting(q), "pages may hold fewer than limit")
	require.Equal(t, []string{"spaces"}, selecting(url.Values{"entity": {"Space"}, "id": {f.space.SpaceID.String()}}))

	// A hidden entity is selected only by Filters that include its reason.
	_, err := f.env.App.Store.Pool.Exec(context.Background(), "UPDATE unit SET hidden_reason = 'BackingUnit' WHERE unit_id = $1", web.UnitID)
	require.NoError(t, err)
	require.Empty(t, selecting(url.Values{"entity": {"Unit"}, "id": {web.UnitID.String()}}))
	f.c.Post(filters, map[string]any{"Slug": "backing", "From": "Unit", "IncludeHidden": "BackingUnit"}).Expect(http.StatusOK)
	require.Equal(t, []string{"backing"}, selecting(url.Values{"entity": {"Unit"}, "id": {web.UnitID.String()}}))

	// entity and id go together; an unknown type, or an entity the caller does not have, is refused.
	f.c.Get("/api/filter?entity=Unit").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.c.Get("/api/filter?id="+web.UnitID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	e := f.c.Get("/api/filter?entity=Units&id="+web.UnitID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "entity", e.Error.ErrorMetadata.Items[0].Item)
	other := f.env.Client(f.env.Token("other", "olga", auth.RoleAdmin))
	e = other.Get("/api/filter?entity=Unit&id="+web.UnitID.String()).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "id", e.Error.ErrorMetadata.Items[0].Item)
}
