package httpapi_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

func TestUnitLifecycle(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	// Validation of the create.
	c.Post(f.unitsPath(), map[string]any{"Slug": "x"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	// ToolchainType is a closed set of the document: another value is a schema violation.
	e := c.Post(f.unitsPath(), map[string]any{"Slug": "x", "ToolchainType": "Helm/Chart"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "ToolchainType", e.Error.ErrorMetadata.Items[0].Item)
	e = c.Post(f.unitsPath(), map[string]any{"Slug": "x", "ToolchainType": configdata.AppConfigEnv, "TargetID": uuid.NewString()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "TargetID", e.Error.ErrorMetadata.Items[0].Item)
	c.Post("/api/space/"+uuid.NewString()+"/unit", map[string]any{"Slug": "x", "ToolchainType": configdata.AppConfigEnv}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	var dry api.UnitCreateOrUpdateResponse
	c.Post(f.unitsPath()+"?dry_run=true", map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&dry)
	u := f.create(t, "app", configdata.AppConfigEnv)
	require.NotEqual(t, dry.Unit.UnitID, u.UnitID)
	c.Post(f.unitsPath(), map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigEnv}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var again api.UnitCreateOrUpdateResponse
	c.Post(f.unitsPath()+"?allow_exists=true", map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&again)
	require.Equal(t, u.UnitID, again.Unit.UnitID)

	// GET -> edit -> PUT, with read-only fields sent back.
	var ext api.ExtendedUnit
	c.Get(f.path(u) + "?include=SpaceID,OrganizationID,HeadRevisionNum").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "dev", ext.Space.Slug)
	require.Equal(t, "acme", ext.Organization.Slug)
	require.Nil(t, ext.HeadRevision)
	edited := ext.Unit
	edited.DisplayName = "App"
	edited.Labels = api.Labels{"tier": "prod"}
	var res api.UnitCreateOrUpdateResponse
	resp := c.Put(f.path(u), edited).Expect(http.StatusOK)
	require.Empty(t, resp.Warnings())
	resp.JSON(&res)
	require.Equal(t, "App", res.Unit.DisplayName)
	c.Put(f.path(u), edited).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	edited.Version = 0
	c.Put(f.path(u), edited).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Patch(f.path(u), map[string]any{"ToolchainType": configdata.AppConfigJSON}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var patched api.UnitCreateOrUpdateResponse
	c.Patch(f.path(u), map[string]any{"Labels": map[string]any{"tier": nil}, "LastChangeDescription": "tidy"}).Expect(http.StatusOK).JSON(&patched)
	require.Empty(t, patched.Unit.Labels)
	c.Patch(f.path(u)+"?include=Nope", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Data changes go through the data path; HeadRevision expands once there is one.
	f.put(t, u, "text/plain", "A=1\n", withQuery("last_change_description=first")).Expect(http.StatusOK)
	c.Get(f.path(u) + "?include=HeadRevisionNum").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, int64(1), ext.HeadRevision.RevisionNum)
	require.Equal(t, "first", ext.HeadRevision.Description)
	require.Equal(t, "first", ext.Unit.LastChangeDescription)

	// The Space cannot be deleted while it holds the Unit; DeleteGates hold the Unit.
	c.Delete("/api/space/"+f.space.SpaceID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(f.path(u), map[string]any{"DeleteGates": map[string]bool{"keep": true}}).Expect(http.StatusOK)
	c.Delete(f.path(u)).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(f.path(u), map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(f.path(u) + "?dry_run=true").Expect(http.StatusOK)
	c.Get(f.path(u)).Expect(http.StatusOK)
	c.Delete(f.path(u)).Expect(http.StatusOK)
	c.Get(f.path(u)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(f.path(u)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete("/api/space/" + f.space.SpaceID.String()).Expect(http.StatusOK)
}

// TestUnitConcurrentWriters: racing data writers lose nothing; Revision numbers are dense and unique.
func TestUnitConcurrentWriters(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "cfg", configdata.AppConfigEnv)
	const writers = 10
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			f.put(t, u, "text/plain", fmt.Sprintf("N=%d\n", i)).Expect(http.StatusOK)
		}(i)
	}
	wg.Wait()
	var revs []api.ExtendedRevision
	f.c.Get(f.path(u) + "/revision").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, writers)
	nums := make([]int, len(revs))
	for i, r := range revs {
		nums[i] = int(r.Revision.RevisionNum)
	}
	sort.Ints(nums)
	for i := range nums {
		require.Equal(t, i+1, nums[i])
	}
	var cur api.ExtendedUnit
	f.c.Get(f.path(u)).Expect(http.StatusOK).JSON(&cur)
	require.Equal(t, int64(writers), cur.Unit.HeadRevisionNum)
	require.Equal(t, revs[len(revs)-1].Revision.DataHash, cur.Unit.DataHash)
}

func TestUnitTenancy(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	u := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, u, "text/plain", "A=1\n").Expect(http.StatusOK)
	var revs []api.ExtendedRevision
	f.c.Get(f.path(u) + "/revision").Expect(http.StatusOK).JSON(&revs)

	b := f.env.Client(f.env.Token("other", "bob", auth.RoleAdmin))
	for _, p := range []string{f.path(u), f.path(u) + "/data", f.path(u) + "/revision", f.path(u) + "/mutation",
		f.path(u) + "/mutation_sources", f.path(u) + "/revision/" + revs[0].Revision.RevisionID.String(), f.unitsPath()} {
		b.Get(p).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	}
	b.Do(http.MethodPut, f.path(u)+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=2\n")}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Patch(f.path(u), map[string]any{"DisplayName": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Put(f.path(u), map[string]any{"Slug": "web", "ToolchainType": configdata.AppConfigEnv, "Version": 1}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Delete(f.path(u)).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedUnit
	b.Get("/api/unit").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	b.Get("/api/revision").Expect(http.StatusOK).JSON(&revs)
	require.Empty(t, revs)
	// A Unit is only reachable under its own Space.
	sp := createSpace(t, f.c, map[string]any{"Slug": "elsewhere"})
	f.c.Get("/api/space/"+sp.SpaceID.String()+"/unit/"+u.UnitID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	// Viewers read Units but do not write them.
	v := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	v.Get(f.path(u) + "/data").Expect(http.StatusOK)
	v.Do(http.MethodPut, f.path(u)+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=2\n")}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	v.Post(f.unitsPath(), map[string]any{"Slug": "x", "ToolchainType": configdata.AppConfigEnv}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}
