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
	"github.com/hubd/hubd/internal/configdata"
)

// revisionTags returns, by RevisionNum, whether each Revision of the Unit at path carries Tag id.
func revisionTags(t *testing.T, c *apitest.Client, path string, id uuid.UUID) []bool {
	t.Helper()
	var revs []api.ExtendedRevision
	c.Get(path + "/revision?order_by=RevisionNum").Expect(http.StatusOK).JSON(&revs)
	out := make([]bool, len(revs))
	for i, r := range revs {
		_, out[i] = r.Revision.Tags[id.String()]
	}
	return out
}

func getTag(t *testing.T, c *apitest.Client, space string, id uuid.UUID) api.Tag {
	t.Helper()
	var ext api.ExtendedTag
	c.Get(space + "/tag/" + id.String()).Expect(http.StatusOK).JSON(&ext)
	return ext.Tag
}

// TestChangeSetTags: a ChangeSet makes its start Tag when created; a Unit joining gets it on its head
// Revision (the one before its first change in the set); the first close makes the end Tag and puts it on
// the head of every Unit that recorded Revisions with the ChangeSet; a later close puts the same Tag on
// the heads again. The Tag: selector then reads the change's boundaries.
func TestChangeSetTags(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	c := f.admin
	cs := f.create(t, f.dev, map[string]any{"Slug": "raise"})
	require.NotNil(t, cs.StartTagID)
	require.True(t, cs.StartTagIsPriorRevision)
	start := getTag(t, c, f.dev, *cs.StartTagID)
	require.Equal(t, "raise-start", start.Slug)
	require.Equal(t, cs.ChangeSetID, *start.ChangeSetID)
	var tags []api.ExtendedTag
	c.Get(f.dev + "/tag?" + where("ChangeSetID = '"+cs.ChangeSetID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&tags)
	require.Len(t, tags, 1)

	// web has two Revisions, then joins: its Revision 2 gets the start Tag.
	f.putData("A=1\n", nil).Expect(http.StatusOK)
	f.putData("A=2\n", nil).Expect(http.StatusOK)
	c.Patch(f.unit, map[string]any{"ChangeSetID": cs.ChangeSetID}).Expect(http.StatusOK)
	require.Equal(t, []bool{false, true}, revisionTags(t, c, f.unit, start.TagID))
	f.putData("A=3\n", nil).Expect(http.StatusOK)
	f.putData("A=4\n", nil).Expect(http.StatusOK)
	// A PATCH that leaves ChangeSetID as it is does not move the start Tag.
	c.Patch(f.unit, map[string]any{"DisplayName": "Web", "ChangeSetID": cs.ChangeSetID}).Expect(http.StatusOK)
	require.Equal(t, []bool{false, true, false, false}, revisionTags(t, c, f.unit, start.TagID))

	// api joins before it has data: no start Tag (its first change in the set is its Revision 1).
	var api2 api.UnitCreateOrUpdateResponse
	c.Post(f.dev+"/unit", map[string]any{"Slug": "api", "ToolchainType": configdata.AppConfigEnv, "ChangeSetID": cs.ChangeSetID}).
		Expect(http.StatusOK).JSON(&api2)
	apiPath := f.dev + "/unit/" + api2.Unit.UnitID.String()
	c.Put(apiPath+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("B=1\n")}).Expect(http.StatusOK)
	require.Equal(t, []bool{false}, revisionTags(t, c, apiPath, start.TagID))

	// db is not in the set but records a Revision with it (change_set_id): the Revision before gets the
	// start Tag, once.
	var db api.UnitCreateOrUpdateResponse
	c.Post(f.dev+"/unit", map[string]any{"Slug": "db", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&db)
	dbPath := f.dev + "/unit/" + db.Unit.UnitID.String()
	c.Put(dbPath+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("C=1\n")}).Expect(http.StatusOK)
	inSet := "?change_set_id=" + cs.ChangeSetID.String()
	c.Put(dbPath+"/data"+inSet, apitest.Raw{ContentType: "text/plain", Data: []byte("C=2\n")}).Expect(http.StatusOK)
	c.Put(dbPath+"/data"+inSet, apitest.Raw{ContentType: "text/plain", Data: []byte("C=3\n")}).Expect(http.StatusOK)
	require.Equal(t, []bool{true, false, false}, revisionTags(t, c, dbPath, start.TagID))

	// An untouched Unit of the Space gets no Tag.
	var idle api.UnitCreateOrUpdateResponse
	c.Post(f.dev+"/unit", map[string]any{"Slug": "idle", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&idle)
	idlePath := f.dev + "/unit/" + idle.Unit.UnitID.String()
	c.Put(idlePath+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("D=1\n")}).Expect(http.StatusOK)

	// Close: the end Tag, on every head that recorded Revisions with the ChangeSet.
	path := f.dev + "/change_set/" + cs.ChangeSetID.String()
	var closed api.ChangeSet
	c.Patch(path, map[string]any{"State": "Closed"}).Expect(http.StatusOK).JSON(&closed)
	require.NotNil(t, closed.EndTagID)
	require.Equal(t, cs.StartTagID, closed.StartTagID)
	var ext api.ExtendedChangeSet
	c.Get(path + "?include=StartTagID,EndTagID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "raise-start", ext.StartTag.Slug)
	require.Equal(t, "raise-end", ext.EndTag.Slug)
	require.Equal(t, cs.ChangeSetID, *ext.EndTag.ChangeSetID)
	end := *closed.EndTagID
	require.Equal(t, []bool{false, false, false, true}, revisionTags(t, c, f.unit, end))
	require.Equal(t, []bool{true}, revisionTags(t, c, apiPath, end))
	require.Equal(t, []bool{false, false, true}, revisionTags(t, c, dbPath, end))
	require.Equal(t, []bool{false}, revisionTags(t, c, idlePath, end))

	// The boundaries select Revisions: Tag:raise-start is what web was before the change.
	var tg api.Tag
	c.Post(f.dev+"/tag", map[string]any{"Slug": "before"}).Expect(http.StatusOK).JSON(&tg)
	c.Post("/api/unit/tag?"+where("Slug = 'web'").Encode(), map[string]any{"TagID": tg.TagID, "Revision": "Tag:raise-start"}).Expect(http.StatusOK)
	require.Equal(t, []bool{false, true, false, false}, revisionTags(t, c, f.unit, tg.TagID))

	// Reopen, change, close again: the same end Tag goes on the new head too.
	c.Patch(path, map[string]any{"State": "Open"}).Expect(http.StatusOK)
	c.Put(apiPath+"/data"+inSet, apitest.Raw{ContentType: "text/plain", Data: []byte("B=2\n")}).Expect(http.StatusOK)
	c.Patch(path, map[string]any{"State": "Closed"}).Expect(http.StatusOK).JSON(&closed)
	require.Equal(t, end, *closed.EndTagID)
	require.Equal(t, []bool{true, true}, revisionTags(t, c, apiPath, end))
	c.Get(f.dev + "/tag?" + where("ChangeSetID = '"+cs.ChangeSetID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&tags)
	require.Len(t, tags, 2)

	// Abandoning makes no end Tag.
	other := f.create(t, f.dev, map[string]any{"Slug": "dropped"})
	var abandoned api.ChangeSet
	c.Patch(f.dev+"/change_set/"+other.ChangeSetID.String(), map[string]any{"State": "Abandoned"}).Expect(http.StatusOK).JSON(&abandoned)
	require.Nil(t, abandoned.EndTagID)

	// A ChangeSet whose Tag Slug is taken gets the next free one (-2, -3...); a long Slug gets a shortened Tag.
	c.Post(f.dev+"/tag", map[string]any{"Slug": "taken-start"}).Expect(http.StatusOK)
	taken := f.create(t, f.dev, map[string]any{"Slug": "taken"})
	require.Equal(t, "taken-start-2", getTag(t, c, f.dev, *taken.StartTagID).Slug)
	long := f.create(t, f.dev, map[string]any{"Slug": strings.Repeat("x", 128)})
	longStart := getTag(t, c, f.dev, *long.StartTagID)
	require.Equal(t, strings.Repeat("x", 118)+"-start", longStart.Slug)

	// A copy of a ChangeSet makes its own start Tag in its Space.
	var copies []api.ChangeSetCreateOrUpdateResponse
	c.Post("/api/change_set?"+url.Values{"where": {"Slug = 'dropped'"}, "where_space": {"Slug = 'prod'"}}.Encode(), map[string]any{}).
		Expect(http.StatusOK).JSON(&copies)
	require.Len(t, copies, 1)
	copyStart := getTag(t, c, f.prod, *copies[0].ChangeSet.StartTagID)
	require.Equal(t, "dropped-start", copyStart.Slug)
	require.Equal(t, copies[0].ChangeSet.ChangeSetID, *copyStart.ChangeSetID)
}

// TestMoveUnitInScopedChangeSet: a move rechecks the moved Unit's ChangeSet: a destination its
// InScopeSpaceIDs leave out refuses that Unit (400 naming ChangeSetID) while the others move; a ChangeSet
// without InScopeSpaceIDs takes Units of any Space.
func TestMoveUnitInScopedChangeSet(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	c := f.admin
	staging := createSpace(t, c, map[string]any{"Slug": "staging"}).SpaceID
	scoped := f.create(t, f.dev, map[string]any{"Slug": "scoped", "InScopeSpaceIDs": []uuid.UUID{f.devID, staging}})
	c.Patch(f.unit, map[string]any{"ChangeSetID": scoped.ChangeSetID}).Expect(http.StatusOK)
	var free api.UnitCreateOrUpdateResponse
	c.Post(f.dev+"/unit", map[string]any{"Slug": "free", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&free)

	// To prod, out of scope: web is refused naming ChangeSetID, free moves.
	var moved []api.UnitMoveResponse
	both := "/api/unit/move?" + where("Slug IN ('web', 'free')").Encode()
	c.Post(both, map[string]any{"ToSpaceID": f.prodID}).Expect(http.StatusMultiStatus).JSON(&moved)
	require.Len(t, moved, 2)
	for _, m := range moved {
		if m.Slug == "free" {
			require.True(t, m.Moved)
			continue
		}
		require.False(t, m.Moved)
		require.Equal(t, api.ErrorTypeValidation, m.Error.Type)
		require.Equal(t, "ChangeSetID", m.Error.ErrorMetadata.Items[0].Item)
		require.Contains(t, m.Error.Message, "InScopeSpaceIDs")
	}
	c.Get(f.unit).Expect(http.StatusOK)

	// To staging, in scope: web moves and stays in the ChangeSet.
	c.Post("/api/unit/move?"+where("Slug = 'web'").Encode(), map[string]any{"ToSpaceID": staging}).Expect(http.StatusOK).JSON(&moved)
	require.True(t, moved[0].Moved)
	var u api.ExtendedUnit
	c.Get("/api/space/" + staging.String() + "/unit/" + f.unitID.String()).Expect(http.StatusOK).JSON(&u)
	require.Equal(t, scoped.ChangeSetID, *u.Unit.ChangeSetID)

	// A ChangeSet without InScopeSpaceIDs: any Space.
	open := f.create(t, f.dev, map[string]any{"Slug": "open"})
	c.Patch("/api/space/"+staging.String()+"/unit/"+f.unitID.String(), map[string]any{"ChangeSetID": open.ChangeSetID}).Expect(http.StatusOK)
	c.Post("/api/unit/move?"+where("Slug = 'web'").Encode(), map[string]any{"ToSpaceID": f.prodID}).Expect(http.StatusOK).JSON(&moved)
	require.True(t, moved[0].Moved)
}
