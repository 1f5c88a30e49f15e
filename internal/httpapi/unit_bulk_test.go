package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

func TestTagsOnRevisions(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	tags := "/api/space/" + f.space.SpaceID.String() + "/tag"
	var rel api.Tag
	c.Post(tags, map[string]any{"Slug": "release-1", "DisplayName": "Release 1"}).Expect(http.StatusOK).JSON(&rel)
	c.Post(tags, map[string]any{"Slug": "release-1"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post(tags+"?allow_exists=true", map[string]any{"Slug": "release-1"}).Expect(http.StatusOK)
	c.Post(tags+"?dry_run=true", map[string]any{"Slug": "ghost"}).Expect(http.StatusOK)
	tp := tags + "/" + rel.TagID.String()
	var got api.ExtendedTag
	c.Get(tp + "?include=SpaceID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "dev", got.Space.Slug)
	got.Tag.DisplayName = "R1"
	c.Put(tp, got.Tag).Expect(http.StatusOK)
	c.Put(tp, got.Tag).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(tp, map[string]any{"Labels": map[string]string{"kind": "release"}}).Expect(http.StatusOK)
	var list []api.ExtendedTag
	c.Get("/api/tag?" + where("Labels.kind = 'release'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get(tags).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)

	web := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, web, "text/plain", "A=1\n").Expect(http.StatusOK)
	empty := f.create(t, "empty", configdata.AppConfigEnv)

	// Tag the head Revisions of the selected Units: a Unit without a Revision fails alone (207).
	var items []api.UnitTagResponse
	c.Post("/api/unit/tag?"+where("Slug IN ('web', 'empty')").Encode(), map[string]any{"TagID": rel.TagID}).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
	var revs []api.ExtendedRevision
	c.Get("/api/revision?distinct_on=Off&limit=10&" + where("Tags ? '"+rel.TagID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 1)
	require.Equal(t, web.UnitID, revs[0].Revision.UnitID)
	require.Contains(t, revs[0].Revision.Tags, rel.TagID.String())
	// include=Tags expands them; a Revision without Tags gets an empty list, and select reaches into them.
	c.Get(f.path(web) + "/revision?include=Tags").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 1)
	require.NotNil(t, revs[0].Tags)
	require.Equal(t, []string{"release-1"}, []string{(*revs[0].Tags)[0].Slug})
	var sparse []map[string]any
	c.Get(f.path(web) + "/revision?include=Tags&select=Tags.DisplayName").Expect(http.StatusOK).JSON(&sparse)
	require.Equal(t, []any{map[string]any{"DisplayName": "R1"}}, sparse[0]["Tags"])
	f.put(t, web, "text/plain", "A=2\n").Expect(http.StatusOK)
	c.Get(f.path(web) + "/revision?include=Tags&order_by=RevisionNum").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 2)
	require.NotNil(t, revs[1].Tags)
	require.Empty(t, *revs[1].Tags, "the new Revision has no Tags")
	c.Get(f.path(web) + "/revision?" + where("Tags ? '"+rel.TagID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Equal(t, []int64{1}, []int64{revs[0].Revision.RevisionNum}, "the tag stays on the Revision it was put on")
	c.Post("/api/unit/tag?"+where("Slug = 'empty'").Encode(), map[string]any{"TagID": rel.TagID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	c.Post("/api/unit/tag?"+where("Slug = 'web'").Encode(), map[string]any{"TagID": uuid.New()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	c.Post("/api/unit/tag", map[string]any{"TagID": rel.TagID}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Remove takes it off; deleting a Tag takes it off every Revision.
	c.Post("/api/unit/tag?"+where("Slug = 'web'").Encode(), map[string]any{"TagID": rel.TagID, "Revision": "Remove"}).Expect(http.StatusOK)
	c.Get("/api/revision?distinct_on=Off&limit=10&" + where("Tags ? '"+rel.TagID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Empty(t, revs)
	c.Post("/api/unit/tag?"+where("Slug = 'web'").Encode(), map[string]any{"TagID": rel.TagID}).Expect(http.StatusOK)
	c.Delete(tp).Expect(http.StatusOK)
	c.Get("/api/revision?distinct_on=Off&limit=10&" + where("Tags ? '"+rel.TagID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Empty(t, revs)
	c.Get(tp).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.env.Client(f.env.Token("other", "bob", auth.RoleAdmin)).Get(tags).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	_ = empty
}

func TestCloneMoveAndBulkUnits(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	web := f.create(t, "web", configdata.KubernetesYAML)
	f.put(t, web, "application/yaml", deployment).Expect(http.StatusOK)
	f.put(t, web, "application/yaml", stringsReplace(deployment, "replicas: 3", "replicas: 4")).Expect(http.StatusOK)
	staging := createSpace(t, c, map[string]any{"Slug": "staging", "Labels": map[string]string{"env": "nonprod"}})
	qa := createSpace(t, c, map[string]any{"Slug": "qa", "Labels": map[string]string{"env": "nonprod"}})

	// Clone into every nonprod Space, patching each clone.
	var items []api.UnitCreateOrUpdateResponse
	c.Post("/api/unit?"+where("Slug = 'web'").Encode()+"&"+url.Values{"where_space": {"Labels.env = 'nonprod'"}}.Encode(),
		map[string]any{"Labels": map[string]string{"cloned": "yes"}}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	for _, it := range items {
		require.Nil(t, it.Error)
		require.Equal(t, web.UnitID, *it.Unit.UpstreamUnitID)
		require.Equal(t, f.space.SpaceID, *it.Unit.UpstreamSpaceID)
		require.Equal(t, int64(2), it.Unit.UpstreamRevisionNum)
		require.Equal(t, int64(1), it.Unit.HeadRevisionNum)
		require.Equal(t, "yes", it.Unit.Labels["cloned"])
		require.Contains(t, []uuid.UUID{staging.SpaceID, qa.SpaceID}, it.Unit.SpaceID)
	}
	// The clone's data is the upstream's head, its Revision says where it came from.
	clone := *items[0].Unit
	clonePath := "/api/space/" + clone.SpaceID.String() + "/unit/" + clone.UnitID.String()
	resp := c.Get(clonePath + "/data").Expect(http.StatusOK)
	require.Contains(t, string(resp.Body), "replicas: 4")
	var revs []api.ExtendedRevision
	c.Get(clonePath + "/revision").Expect(http.StatusOK).JSON(&revs)
	require.Equal(t, "Clone", revs[0].Revision.Source)
	// Clones are found by UpstreamRevisionNum > 0, and their upstream expands.
	var units []api.ExtendedUnit
	c.Get("/api/unit?include=UpstreamUnitID,UpstreamSpaceID&" + where("UpstreamRevisionNum > 0").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 2)
	require.Equal(t, "web", units[0].UpstreamUnit.Slug)
	require.Equal(t, "dev", units[0].UpstreamSpace.Slug)
	c.Get("/api/unit?" + where("UpstreamUnitID = '"+web.UnitID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 2)

	// Again: the clones exist (409 shared), unless allow_exists; prefixes make more clones in the same Space.
	c.Post("/api/unit?"+where("Slug = 'web'").Encode()+"&"+url.Values{"where_space": {"Labels.env = 'nonprod'"}}.Encode(), map[string]any{}).
		ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post("/api/unit?allow_exists=true&"+where("Slug = 'web'").Encode()+"&"+url.Values{"where_space": {"Labels.env = 'nonprod'"}}.Encode(), map[string]any{}).Expect(http.StatusOK)
	devWeb := where("Slug = 'web' AND SpaceID = '" + f.space.SpaceID.String() + "'").Encode()
	c.Post("/api/unit?name_prefixes=a-,b-&"+devWeb, map[string]any{}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	slugs := []string{items[0].Unit.Slug, items[1].Unit.Slug}
	sort.Strings(slugs)
	require.Equal(t, []string{"a-web", "b-web"}, slugs)
	c.Post("/api/unit?dry_run=true&name_prefixes=c-&"+devWeb, map[string]any{}).Expect(http.StatusOK)
	c.Get(f.unitsPath() + "?" + where("Slug = 'c-web'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Empty(t, units)
	c.Post("/api/unit?"+url.Values{"where_space": {"Nope = 1"}}.Encode()+"&"+where("Slug = 'web'").Encode(), map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post("/api/unit", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Bulk patch and delete.
	var patched []api.UnitCreateOrUpdateResponse
	c.Patch("/api/unit?"+where("Slug LIKE '%-web'").Encode(), map[string]any{"DisplayName": "variant"}).Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched, 2)
	var dels []api.DeleteResponse
	c.Delete("/api/unit?" + where("Slug = 'b-web'").Encode()).Expect(http.StatusOK).JSON(&dels)
	require.Len(t, dels, 1)

	// Move a-web (with its history) to qa.
	var moved []api.UnitMoveResponse
	c.Post("/api/unit/move?"+where("Slug = 'a-web'").Encode(), map[string]any{"ToSpaceID": qa.SpaceID}).Expect(http.StatusOK).JSON(&moved)
	require.Len(t, moved, 1)
	require.True(t, moved[0].Moved)
	c.Get("/api/space/" + qa.SpaceID.String() + "/unit?" + where("Slug = 'a-web'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
	movedPath := "/api/space/" + qa.SpaceID.String() + "/unit/" + units[0].Unit.UnitID.String()
	c.Get(movedPath + "/revision").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 1)
	c.Get(f.unitsPath()+"/"+units[0].Unit.UnitID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	// Moving onto an existing Slug fails for that Unit alone.
	c.Post("/api/unit/move?"+devWeb, map[string]any{"ToSpaceID": qa.SpaceID}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post("/api/unit/move?"+devWeb, map[string]any{"ToSpaceID": uuid.New()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}

// TestCloneWithPermissionsNeedsManage: a clone whose patch sets Permissions is a grant in the destination
// Space, so it needs Manage there, as creating a Unit with Permissions does.
func TestCloneWithPermissionsNeedsManage(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	web := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, web, "text/plain", "A=1\n").Expect(http.StatusOK)
	moID := f.env.Principal("acme", "mo", auth.RoleMember).UserID
	member := f.env.Client(f.env.Token("acme", "mo", auth.RoleMember))
	grant := map[string]any{"Manage": map[string]any{"UserIDs": map[string]bool{moID.String(): true}}}
	clone := "/api/unit?name_prefixes=x-&" + where("Slug = 'web'").Encode()

	member.Post(clone, map[string]any{"Permissions": grant}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var units []api.ExtendedUnit
	f.c.Get(f.unitsPath() + "?" + where("Slug = 'x-web'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Empty(t, units, "a refused clone creates nothing")

	// Without Permissions in the patch the member may clone; an admin may clone with them.
	member.Post(clone, map[string]any{"DisplayName": "copy"}).Expect(http.StatusOK)
	var items []api.UnitCreateOrUpdateResponse
	f.c.Post("/api/unit?name_prefixes=y-&"+where("Slug = 'web'").Encode(), map[string]any{"Permissions": grant}).Expect(http.StatusOK).JSON(&items)
	require.True(t, items[0].Unit.Permissions["Manage"].UserIDs[moID.String()])
}

// TestCloneWhereSpaceSelectingNothing: a where_space that selects no Space is refused; the clone never
// falls back to the source's own Space (that is only for no where_space at all).
func TestCloneWhereSpaceSelectingNothing(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	f.create(t, "web", configdata.AppConfigEnv)
	sel := where("Slug = 'web'").Encode()
	e := f.c.Post("/api/unit?name_prefixes=x-&"+sel+"&"+url.Values{"where_space": {"Slug = 'nope'"}}.Encode(), map[string]any{}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "where_space", e.Error.ErrorMetadata.Items[0].Item)
	var units []api.ExtendedUnit
	f.c.Get("/api/unit?" + where("Slug = 'x-web'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Empty(t, units, "nothing cloned")
	// Without where_space the clone goes into the source's Space.
	f.c.Post("/api/unit?name_prefixes=x-&"+sel, map[string]any{}).Expect(http.StatusOK)
	f.c.Get(f.unitsPath() + "?" + where("Slug = 'x-web'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
}

// TestCloneWithTargetID: a clone patch may set TargetID, checked against the destination Space and the
// clone's ToolchainType like any Unit's.
func TestCloneWithTargetID(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	web := f.create(t, "web", configdata.AppConfigEnv)
	f.put(t, web, "text/plain", "A=1\n").Expect(http.StatusOK)
	staging := createSpace(t, c, map[string]any{"Slug": "staging"})
	newTarget := func(spaceID uuid.UUID, slug, toolchain string) api.Target {
		var tg api.Target
		c.Post("/api/space/"+spaceID.String()+"/target", map[string]any{"Slug": slug, "ToolchainType": toolchain, "ProviderType": "ArgoCDOCI"}).
			Expect(http.StatusOK).JSON(&tg)
		return tg
	}
	good := newTarget(staging.SpaceID, "envs", configdata.AppConfigEnv)
	wrongType := newTarget(staging.SpaceID, "cluster", configdata.KubernetesYAML)
	otherSpace := newTarget(f.space.SpaceID, "dev-envs", configdata.AppConfigEnv)
	clone := "/api/unit?" + where("Slug = 'web'").Encode() + "&" + url.Values{"where_space": {"Slug = 'staging'"}}.Encode()

	for _, bad := range []api.Target{wrongType, otherSpace} {
		e := c.Post(clone, map[string]any{"TargetID": bad.TargetID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, "TargetID", e.Error.ErrorMetadata.Items[0].Item)
	}
	var items []api.UnitCreateOrUpdateResponse
	c.Post(clone, map[string]any{"TargetID": good.TargetID}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Equal(t, good.TargetID, *items[0].Unit.TargetID)
	var got api.ExtendedUnit
	c.Get("/api/space/" + staging.SpaceID.String() + "/unit/" + items[0].Unit.UnitID.String() + "?include=TargetID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "envs", got.Target.Slug)
	require.Equal(t, int64(1), got.Unit.HeadRevisionNum)
}

// TestBulkTagRevisionSelectors puts a Tag on the Revision each selector form names, and refuses what
// names no Revision of the Unit (per Unit) or is no selector (the whole request).
func TestBulkTagRevisionSelectors(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	tags := "/api/space/" + f.space.SpaceID.String() + "/tag"
	var rel, mark api.Tag
	c.Post(tags, map[string]any{"Slug": "rel"}).Expect(http.StatusOK).JSON(&rel)
	c.Post(tags, map[string]any{"Slug": "mark"}).Expect(http.StatusOK).JSON(&mark)
	web := f.create(t, "web", configdata.AppConfigEnv)
	for _, d := range []string{"A=1\n", "A=2\n", "A=3\n"} {
		f.put(t, web, "text/plain", d).Expect(http.StatusOK)
	}
	other := f.create(t, "other", configdata.AppConfigEnv)
	f.put(t, other, "text/plain", "B=1\n").Expect(http.StatusOK)
	var revs []api.ExtendedRevision
	c.Get(f.path(web) + "/revision?order_by=RevisionNum").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 3)
	var otherRevs []api.ExtendedRevision
	c.Get(f.path(other) + "/revision").Expect(http.StatusOK).JSON(&otherRevs)
	require.Len(t, otherRevs, 1)

	onWeb := where("Slug = 'web'").Encode()
	tagged := func(tagID uuid.UUID) []int64 {
		var rs []api.ExtendedRevision
		c.Get(f.path(web) + "/revision?order_by=RevisionNum&" + where("Tags ? '"+tagID.String()+"'").Encode()).Expect(http.StatusOK).JSON(&rs)
		nums := []int64{}
		for _, r := range rs {
			nums = append(nums, r.Revision.RevisionNum)
		}
		return nums
	}
	tag := func(tagID uuid.UUID, selector string, wantNum int64) {
		t.Helper()
		c.Post("/api/unit/tag?"+where("Slug IN ('web', 'other')").Encode(), map[string]any{"TagID": tagID, "Revision": "Remove"}).Expect(http.StatusOK)
		var items []api.UnitTagResponse
		c.Post("/api/unit/tag?"+onWeb, map[string]any{"TagID": tagID, "Revision": selector}).Expect(http.StatusOK).JSON(&items)
		require.Len(t, items, 1)
		require.Equal(t, fmt.Sprintf("Unit web tagged Revision %d", wantNum), items[0].Message, selector)
		require.Equal(t, []int64{wantNum}, tagged(tagID), selector)
	}

	tag(mark.TagID, "1", 1)
	tag(rel.TagID, "", 3)
	tag(rel.TagID, "HeadRevisionNum", 3)
	tag(rel.TagID, "2", 2)
	tag(rel.TagID, "Tag:mark", 1)
	tag(rel.TagID, "Tag:"+mark.TagID.String(), 1)
	tag(rel.TagID, "Revision:"+revs[1].Revision.RevisionID.String(), 2)
	tag(rel.TagID, "Before:HeadRevisionNum", 2)
	tag(rel.TagID, "Before:Before:3", 1)
	tag(rel.TagID, "Before:Revision:"+revs[1].Revision.RevisionID.String(), 1)
	tag(mark.TagID, "3", 3)
	tag(rel.TagID, "Before:Tag:mark", 2)

	// What names no Revision of the Unit fails for that Unit alone: 400 when it is the only one, 207 beside
	// one that succeeds.
	refused := func(selector, want string) {
		t.Helper()
		e := c.Post("/api/unit/tag?"+onWeb, map[string]any{"TagID": rel.TagID, "Revision": selector}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message, want, selector)
	}
	refused("4", "has no Revision 4 (its head is 3)")
	refused("Before:1", "has no Revision before Revision 1")
	refused("LastReleasedRevisionNum", "never been released")
	refused("Before:LastReleasedRevisionNum", "never been released")
	refused("ChangeSet:"+uuid.NewString(), "recorded with ChangeSet")
	refused("Revision:"+otherRevs[0].Revision.RevisionID.String(), "is not a Revision of Unit web")
	refused("Revision:"+uuid.NewString(), "is not a Revision of Unit web")
	refused("Tag:nosuch", `no Tag "nosuch"`)
	refused("Tag:"+uuid.NewString(), "no Revision of Unit web carries Tag")
	var items []api.UnitTagResponse
	c.Post("/api/unit/tag?"+where("Slug IN ('web', 'other')").Encode(), map[string]any{"TagID": rel.TagID, "Revision": "2"}).
		Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
	errs := 0
	for _, it := range items {
		if it.Error != nil {
			errs++
			require.Contains(t, it.Error.Message, "Unit other has no Revision 2")
		}
	}
	require.Equal(t, 1, errs)

	// A selector that is none is refused before any Unit is touched, naming Revision.
	for _, bad := range []string{"Latest", "0", "-1", "Before:", "Revision:xyz", "ChangeSet:", "Tag:", "head"} {
		e := c.Post("/api/unit/tag?"+onWeb, map[string]any{"TagID": rel.TagID, "Revision": bad}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.True(t, strings.HasPrefix(e.Error.Message, "Revision "), e.Error.Message)
	}
	// Another organization's Tag or Revision is as unknown as a random ID.
	oc := f.env.Client(f.env.Token("other-org", "eve", auth.RoleAdmin))
	otherSpace := createSpace(t, oc, map[string]any{"Slug": "x"})
	var foreign api.Tag
	oc.Post("/api/space/"+otherSpace.SpaceID.String()+"/tag", map[string]any{"Slug": "mark"}).Expect(http.StatusOK).JSON(&foreign)
	refused("Tag:"+foreign.TagID.String(), "no Revision of Unit web carries Tag")
}
