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

// changeSetFixture is an organization (acme) with two Spaces and a Unit in dev, and another organization
// (globex) with a ChangeSet of its own.
type changeSetFixture struct {
	env        *apitest.Env
	admin      *apitest.Client
	me         api.OrganizationMember
	dev, prod  string // /api/space/<id>
	devID      uuid.UUID
	prodID     uuid.UUID
	unit       string // the dev Unit's path
	unitID     uuid.UUID
	foreignSet api.ChangeSet
}

func newChangeSetFixture(t *testing.T) changeSetFixture {
	t.Helper()
	env := apitest.New(t)
	f := changeSetFixture{env: env, admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin))}
	f.admin.Get("/api/me").Expect(http.StatusOK).JSON(&f.me)
	f.devID = createSpace(t, f.admin, map[string]any{"Slug": "dev"}).SpaceID
	f.prodID = createSpace(t, f.admin, map[string]any{"Slug": "prod"}).SpaceID
	f.dev, f.prod = "/api/space/"+f.devID.String(), "/api/space/"+f.prodID.String()
	var u api.UnitCreateOrUpdateResponse
	f.admin.Post(f.dev+"/unit", map[string]any{"Slug": "web", "ToolchainType": configdata.AppConfigEnv}).Expect(http.StatusOK).JSON(&u)
	f.unitID = u.Unit.UnitID
	f.unit = f.dev + "/unit/" + f.unitID.String()
	other := env.Client(env.Token("globex", "gina", auth.RoleAdmin))
	sp := createSpace(t, other, map[string]any{"Slug": "theirs"})
	other.Post("/api/space/"+sp.SpaceID.String()+"/change_set", map[string]any{"Slug": "theirs"}).Expect(http.StatusOK).JSON(&f.foreignSet)
	return f
}

func (f changeSetFixture) create(t *testing.T, space string, body map[string]any) api.ChangeSet {
	t.Helper()
	var cs api.ChangeSet
	f.admin.Post(space+"/change_set", body).Expect(http.StatusOK).JSON(&cs)
	return cs
}

func (f changeSetFixture) putData(data string, query url.Values) *apitest.Response {
	path := f.unit + "/data"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return f.admin.Put(path, apitest.Raw{ContentType: "text/plain", Data: []byte(data)})
}

// TestChangeSets: every operation of the family: create (Open, the creator recorded), get with include,
// list and list-all with order_by on every order field, PUT, PATCH, documents, clone, bulk patch, move,
// delete and bulk delete, DeleteGates, and a random ChangeWorkflowID refused (TestChangeSetWorkflow has the rest).
func TestChangeSets(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	c := f.admin

	cs := f.create(t, f.dev, map[string]any{"Slug": "raise", "DisplayName": "Raise replicas", "Description": "more web",
		"Labels": map[string]string{"team": "web"}, "State": "Closed"})
	require.Equal(t, api.ChangeSetState("Open"), cs.State, "a ChangeSet is created Open")
	require.Equal(t, f.me.UserID, cs.UserID)
	require.Equal(t, "ChangeSet", cs.EntityType)
	require.NotNil(t, cs.StartTagID, "a ChangeSet makes its start Tag")
	require.True(t, cs.StartTagIsPriorRevision)
	require.Nil(t, cs.EndTagID, "the end Tag comes with the first close")
	require.Nil(t, cs.ChangeWorkflowID)
	require.Empty(t, cs.ReviewRequests)
	path := f.dev + "/change_set/" + cs.ChangeSetID.String()

	c.Post(f.dev+"/change_set", map[string]any{"Slug": "raise"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var same api.ChangeSet
	c.Post(f.dev+"/change_set?allow_exists=true", map[string]any{"Slug": "raise"}).Expect(http.StatusOK).JSON(&same)
	require.Equal(t, cs.ChangeSetID, same.ChangeSetID)
	c.Post(f.dev+"/change_set", map[string]any{"Slug": "bad", "State": "Merged"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	e := c.Post(f.dev+"/change_set", map[string]any{"Slug": "wf", "ChangeWorkflowID": uuid.New()}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ChangeWorkflowID", e.Error.ErrorMetadata.Items[0].Item)

	var got api.ExtendedChangeSet
	c.Get(path + "?include=SpaceID,OrganizationID,StartTagID,EndTagID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, cs, got.ChangeSet)
	require.Equal(t, "dev", got.Space.Slug)
	require.NotNil(t, got.Organization)
	require.Equal(t, "raise-start", got.StartTag.Slug)
	require.Equal(t, cs.ChangeSetID, *got.StartTag.ChangeSetID)
	require.Equal(t, cs.SpaceID, got.StartTag.SpaceID)
	require.Nil(t, got.EndTag)
	c.Get(f.prod+"/change_set/"+cs.ChangeSetID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	second := f.create(t, f.prod, map[string]any{"Slug": "lower", "Description": "fewer"})
	var list []api.ExtendedChangeSet
	c.Get(f.dev + "/change_set").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	for _, field := range []string{"ChangeSetID", "ChangeWorkflowID", "CreatedAt", "Description", "DisplayName", "EndTagID", "HiddenReason",
		"OrganizationID", "Slug", "SpaceID", "StartTagID", "StartTagIsPriorRevision", "State", "UpdatedAt", "UserID"} {
		c.Get("/api/change_set?include=SpaceID&order_by=" + field).Expect(http.StatusOK).JSON(&list)
		require.Len(t, list, 2, field)
	}
	c.Get("/api/change_set?order_by=Slug").Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"lower", "raise"}, []string{list[0].ChangeSet.Slug, list[1].ChangeSet.Slug})
	c.Get("/api/change_set?" + where("State = 'Open' AND Labels.team = 'web'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get("/api/change_set?contains=fewer").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, second.ChangeSetID, list[0].ChangeSet.ChangeSetID)

	// PUT replaces the settable fields.
	put := cs
	put.DisplayName = "Raise"
	var updated api.ChangeSet
	c.Put(path, put).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "Raise", updated.DisplayName)
	require.Equal(t, api.ChangeSetState("Open"), updated.State)
	c.Put(path, put).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"Description": "much more web", "DeleteGates": map[string]bool{"keep": true}}).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "much more web", updated.Description)

	var doc api.EntityDocument
	c.Get(path + "/document").Expect(http.StatusOK).JSON(&doc)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(doc.Document, &fields))
	require.NotContains(t, fields, "Permissions")
	fields["DisplayName"] = "From the document"
	edited := doc
	edited.Document, _ = json.Marshal(fields)
	c.Post(path+"/document", map[string]any{"Base": doc, "Document": edited}).Expect(http.StatusOK)
	c.Get(path).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "From the document", got.ChangeSet.DisplayName)

	// Clone into prod with a prefix: the copy is Open.
	var cloned []api.ChangeSetCreateOrUpdateResponse
	c.Post("/api/change_set?"+where("Slug = 'raise'").Encode()+"&name_prefixes=copy-&"+url.Values{"where_space": {"Slug = 'prod'"}}.Encode(),
		map[string]any{"DisplayName": "Copy"}).Expect(http.StatusOK).JSON(&cloned)
	require.Len(t, cloned, 1)
	require.Equal(t, "copy-raise", cloned[0].ChangeSet.Slug)
	require.Equal(t, f.prodID, cloned[0].ChangeSet.SpaceID)
	require.Equal(t, api.ChangeSetState("Open"), cloned[0].ChangeSet.State)

	var patched []api.ChangeSetCreateOrUpdateResponse
	c.Patch("/api/change_set?"+where("SpaceID = '"+f.prodID.String()+"'").Encode(), map[string]any{"Labels": map[string]string{"bulk": "yes"}}).
		Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched, 2)
	require.Equal(t, "yes", patched[0].ChangeSet.Labels["bulk"])

	var moved []api.ChangeSetCreateOrUpdateResponse
	c.Post("/api/change_set/move?"+where("Slug = 'lower'").Encode(), map[string]any{"ToSpaceID": f.devID}).Expect(http.StatusOK).JSON(&moved)
	require.Len(t, moved, 1)
	require.Equal(t, f.devID, moved[0].ChangeSet.SpaceID)
	c.Get(f.dev + "/change_set/" + second.ChangeSetID.String()).Expect(http.StatusOK)

	// DeleteGates hold it; delete and bulk delete.
	c.Delete(path).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(path + "?dry_run=true").Expect(http.StatusOK)
	c.Delete(path).Expect(http.StatusOK)
	c.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var removed []api.DeleteResponse
	// The copy kept the source's DeleteGates: it stays, the other goes (207).
	c.Delete("/api/change_set?" + where("Labels.bulk = 'yes'").Encode()).Expect(http.StatusMultiStatus).JSON(&removed)
	require.Len(t, removed, 2)
	c.Get("/api/change_set").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
}

// TestChangeSetStates: Open → Closed (once reviews are Approved, or with CloseOverride), Open → Abandoned,
// Closed/Abandoned → Open; Closed ↔ Abandoned is refused naming State; only the asked User sets a review's
// Status; reviewers must be Users of the organization.
func TestChangeSetStates(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	c := f.admin
	bob := f.env.Client(f.env.Token("acme", "bob", auth.RoleMember))
	var bobMe api.OrganizationMember
	bob.Get("/api/me").Expect(http.StatusOK).JSON(&bobMe)
	gina := f.env.Principal("globex", "gina", auth.RoleAdmin)

	cs := f.create(t, f.dev, map[string]any{"Slug": "cs", "ReviewRequests": []map[string]any{{"UserID": bobMe.UserID, "Status": "Approved"}}})
	require.Equal(t, []api.ChangeSetReviewRequest{{UserID: bobMe.UserID, Status: "Pending"}}, cs.ReviewRequests, "a new review is Pending")
	path := f.dev + "/change_set/" + cs.ChangeSetID.String()
	e := c.Patch(path, map[string]any{"ReviewRequests": []map[string]any{{"UserID": bobMe.UserID}, {"UserID": gina.UserID}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ReviewRequests", e.Error.ErrorMetadata.Items[0].Item)
	c.Patch(path, map[string]any{"ReviewRequests": []map[string]any{{"UserID": bobMe.UserID}, {"UserID": bobMe.UserID}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Closing waits for the review.
	e = c.Patch(path, map[string]any{"State": "Closed"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "State", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "Open to Closed")
	// Alice cannot approve for Bob; Bob can.
	c.Patch(path, map[string]any{"ReviewRequests": []map[string]any{{"UserID": bobMe.UserID, "Status": "Approved"}}}).
		ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var got api.ChangeSet
	bob.Patch(path, map[string]any{"ReviewRequests": []map[string]any{{"UserID": bobMe.UserID, "Status": "Approved"}}}).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.ChangeSetReviewStatus("Approved"), got.ReviewRequests[0].Status)
	c.Patch(path, map[string]any{"State": "Closed"}).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.ChangeSetState("Closed"), got.State)

	// Closed → Abandoned is refused; Closed → Open reopens; Open → Abandoned; Abandoned → Closed refused;
	// Abandoned → Open.
	e = c.Patch(path, map[string]any{"State": "Abandoned"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "Closed to Abandoned")
	c.Patch(path, map[string]any{"State": "Open"}).Expect(http.StatusOK)
	c.Patch(path, map[string]any{"State": "Abandoned"}).Expect(http.StatusOK)
	e = c.Patch(path, map[string]any{"State": "Closed"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "Abandoned to Closed")
	c.Patch(path, map[string]any{"State": "Open"}).Expect(http.StatusOK)
	c.Patch(path, map[string]any{"State": "Shipped"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Bob asks for changes: CloseOverride closes anyway (PUT writes State too).
	bob.Patch(path, map[string]any{"ReviewRequests": []map[string]any{{"UserID": bobMe.UserID, "Status": "ChangesRequested"}}}).Expect(http.StatusOK).JSON(&got)
	c.Patch(path, map[string]any{"State": "Closed"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	got.State, got.CloseOverride = "Closed", true
	c.Put(path, got).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, api.ChangeSetState("Closed"), got.State)

	// A bulk patch checks each transition.
	f.create(t, f.dev, map[string]any{"Slug": "other"})
	var items []api.ChangeSetCreateOrUpdateResponse
	c.Patch("/api/change_set?"+where("Slug != 'none'").Encode(), map[string]any{"State": "Abandoned"}).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
}

// TestChangeSetUnits: Units join an Open ChangeSet by ChangeSetID (PATCH, PUT, bulk patch), Revisions
// written then record it (change_set_id must match), ChangeSet:<id> selects a Unit's newest Revision in it,
// include=ChangeSetID expands it on Units and Revisions, a ChangeSet not Open or out of scope takes no
// Unit, closing lets the Units go, and deleting one Units are in needs detach.
func TestChangeSetUnits(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	c := f.admin
	cs := f.create(t, f.dev, map[string]any{"Slug": "cs"})

	// A guest who may edit the Unit but not view the ChangeSet cannot join it: it does not exist for them.
	guest := f.env.Principal("acme", "gil", auth.RoleGuest)
	grant := map[string]any{"UserIDs": map[string]bool{guest.UserID.String(): true}}
	c.Patch(f.unit, map[string]any{"Permissions": map[string]any{"View": grant, "Edit": grant}}).Expect(http.StatusOK)
	gil := f.env.Client(f.env.Token("acme", "gil", auth.RoleGuest))
	e := gil.Patch(f.unit, map[string]any{"ChangeSetID": cs.ChangeSetID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ChangeSetID", e.Error.ErrorMetadata.Items[0].Item)
	c.Patch(f.unit, map[string]any{"Permissions": map[string]any{}}).Expect(http.StatusOK)
	other := f.create(t, f.dev, map[string]any{"Slug": "other"})
	path := f.dev + "/change_set/" + cs.ChangeSetID.String()
	id := cs.ChangeSetID.String()

	f.putData("A=1\n", nil).Expect(http.StatusOK)
	// change_set_id on a Unit not in it: refused while it is not the Unit's... the Unit has none, so an
	// Open ChangeSet is fine only once the Unit joins; join by PATCH.
	var res api.UnitCreateOrUpdateResponse
	c.Patch(f.unit, map[string]any{"ChangeSetID": cs.ChangeSetID}).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, cs.ChangeSetID, *res.Unit.ChangeSetID)
	f.putData("A=2\n", nil).Expect(http.StatusOK)
	f.putData("A=3\n", url.Values{"change_set_id": {id}}).Expect(http.StatusOK)
	e = f.putData("A=4\n", url.Values{"change_set_id": {other.ChangeSetID.String()}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "change_set_id", e.Error.ErrorMetadata.Items[0].Item)

	var revs []api.ExtendedRevision
	c.Get(f.unit + "/revision?order_by=RevisionNum&include=ChangeSetID").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 3)
	require.Nil(t, revs[0].Revision.ChangeSetID)
	require.Nil(t, revs[0].ChangeSet)
	for _, r := range revs[1:] {
		require.Equal(t, cs.ChangeSetID, *r.Revision.ChangeSetID)
		require.Equal(t, "cs", r.ChangeSet.Slug)
	}
	var ext api.ExtendedUnit
	c.Get(f.unit + "?include=ChangeSetID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "cs", ext.ChangeSet.Slug)
	var units []api.ExtendedUnit
	c.Get("/api/unit?include=ChangeSetID&" + where("ChangeSetID = '"+id+"'").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
	require.Equal(t, cs.ChangeSetID, units[0].ChangeSet.ChangeSetID)

	// ChangeSet:<id> tags the newest Revision recorded with it; Before: the one before.
	var tg api.Tag
	c.Post(f.dev+"/tag", map[string]any{"Slug": "reviewed"}).Expect(http.StatusOK).JSON(&tg)
	onWeb := where("Slug = 'web'").Encode()
	c.Post("/api/unit/tag?"+onWeb, map[string]any{"TagID": tg.TagID, "Revision": "ChangeSet:" + id}).Expect(http.StatusOK)
	c.Get(f.unit + "/revision?order_by=RevisionNum").Expect(http.StatusOK).JSON(&revs)
	require.Contains(t, revs[2].Revision.Tags, tg.TagID.String())
	require.NotContains(t, revs[1].Revision.Tags, tg.TagID.String())
	e = c.Post("/api/unit/tag?"+onWeb, map[string]any{"TagID": tg.TagID, "Revision": "ChangeSet:" + other.ChangeSetID.String()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "recorded with ChangeSet")
	e2 := c.Post("/api/unit/tag?"+onWeb, map[string]any{"TagID": tg.TagID, "Revision": "ChangeSet:" + f.foreignSet.ChangeSetID.String()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, e.Error.ErrorMetadata.Items, e2.Error.ErrorMetadata.Items)

	// Deleting a ChangeSet Units are in: 409 without detach.
	c.Delete(path).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Delete("/api/change_set?"+where("Slug = 'cs'").Encode()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// Closing lets the Unit go; the Revisions keep the ID; a closed ChangeSet takes no Unit and no write.
	c.Patch(path, map[string]any{"State": "Closed"}).Expect(http.StatusOK)
	c.Get(f.unit).Expect(http.StatusOK).JSON(&ext)
	require.Nil(t, ext.Unit.ChangeSetID)
	var letGo int
	require.NoError(t, f.env.App.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM event_log
		WHERE subject_entity_id = $1 AND event_type = 'unit.updated' AND (payload->>'Version')::bigint = $2`,
		f.unitID, ext.Unit.Version).Scan(&letGo))
	require.Equal(t, 1, letGo, "a Unit let go by its ChangeSet's close has its unit.updated event")
	c.Get(f.unit + "/revision?order_by=RevisionNum").Expect(http.StatusOK).JSON(&revs)
	require.Equal(t, cs.ChangeSetID, *revs[2].Revision.ChangeSetID)
	e = c.Patch(f.unit, map[string]any{"ChangeSetID": cs.ChangeSetID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ChangeSetID", e.Error.ErrorMetadata.Items[0].Item)
	require.Contains(t, e.Error.Message, "Closed")
	e = f.putData("A=5\n", url.Values{"change_set_id": {id}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "change_set_id", e.Error.ErrorMetadata.Items[0].Item)
	c.Delete(path).Expect(http.StatusOK)

	// PUT and bulk patch join too; detach lets the Unit go on delete.
	c.Get(f.unit).Expect(http.StatusOK).JSON(&ext)
	u := ext.Unit
	u.ChangeSetID = &other.ChangeSetID
	c.Put(f.unit, u).Expect(http.StatusOK)
	c.Patch("/api/unit?"+onWeb, map[string]any{"ChangeSetID": nil}).Expect(http.StatusOK)
	c.Patch("/api/unit?"+onWeb, map[string]any{"ChangeSetID": other.ChangeSetID}).Expect(http.StatusOK)
	otherPath := f.dev + "/change_set/" + other.ChangeSetID.String()
	c.Delete(otherPath + "?detach=true&dry_run=true").Expect(http.StatusOK)
	c.Get(f.unit).Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, other.ChangeSetID, *ext.Unit.ChangeSetID, "a dry run changes nothing")
	c.Delete(otherPath + "?detach=true").Expect(http.StatusOK)
	c.Get(f.unit).Expect(http.StatusOK).JSON(&ext)
	require.Nil(t, ext.Unit.ChangeSetID)

	// InScopeSpaceIDs: a ChangeSet scoped to prod takes no dev Unit; a Space of another organization is
	// refused as a random one.
	scoped := f.create(t, f.dev, map[string]any{"Slug": "scoped", "InScopeSpaceIDs": []uuid.UUID{f.prodID, f.prodID}})
	require.Equal(t, []uuid.UUID{f.prodID}, scoped.InScopeSpaceIDs)
	e = c.Patch(f.unit, map[string]any{"ChangeSetID": scoped.ChangeSetID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "InScopeSpaceIDs")
	requireNoSuchReference(t, "InScopeSpaceIDs", f.foreignSet.SpaceID, func(sp uuid.UUID) *apitest.Response {
		return c.Post(f.dev+"/change_set", map[string]any{"Slug": "s2", "InScopeSpaceIDs": []uuid.UUID{sp}})
	})
}

// TestChangeSetTenancy: another organization's ChangeSet is refused everywhere as a random ID is, and a
// User of two organizations sees and uses each organization's ChangeSets only with that organization's
// token.
func TestChangeSetTenancy(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	c := f.admin
	foreign := f.foreignSet.ChangeSetID
	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Patch(f.unit, map[string]any{"ChangeSetID": id})
	})
	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Post(f.dev+"/unit", map[string]any{"Slug": "new", "ToolchainType": configdata.AppConfigEnv, "ChangeSetID": id})
	})
	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Patch("/api/unit?"+where("Slug = 'web'").Encode(), map[string]any{"ChangeSetID": id})
	})
	requireNoSuchReference(t, "change_set_id", foreign, func(id uuid.UUID) *apitest.Response {
		return f.putData("A=1\n", url.Values{"change_set_id": {id.String()}})
	})
	c.Get("/api/space/"+f.foreignSet.SpaceID.String()+"/change_set/"+foreign.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Patch(f.dev+"/change_set/"+foreign.String(), map[string]any{"State": "Closed"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(f.dev+"/change_set/"+foreign.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var list []api.ExtendedChangeSet
	c.Get("/api/change_set").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	// Gina belongs to both organizations: with acme's token she sees acme's ChangeSets only, and cannot
	// put an acme Unit into globex's.
	mine := f.create(t, f.dev, map[string]any{"Slug": "mine"})
	gina := f.env.Client(f.env.Token("acme", "gina", auth.RoleAdmin))
	gina.Get("/api/change_set").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, mine.ChangeSetID, list[0].ChangeSet.ChangeSetID)
	gina.Patch(f.unit, map[string]any{"ChangeSetID": foreign}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	gina.Patch(f.unit, map[string]any{"ChangeSetID": mine.ChangeSetID}).Expect(http.StatusOK)
	ginaGlobex := f.env.Client(f.env.Token("globex", "gina", auth.RoleAdmin))
	ginaGlobex.Get("/api/change_set").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, foreign, list[0].ChangeSet.ChangeSetID)
	ginaGlobex.Delete(f.dev+"/change_set/"+mine.ChangeSetID.String()+"?detach=true").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestChangeSetRoles: a viewer reads ChangeSets but cannot create, change or delete one; a member can.
func TestChangeSetRoles(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	cs := f.create(t, f.dev, map[string]any{"Slug": "cs"})
	path := f.dev + "/change_set/" + cs.ChangeSetID.String()
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Get(path).Expect(http.StatusOK)
	viewer.Post(f.dev+"/change_set", map[string]any{"Slug": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Patch(path, map[string]any{"State": "Abandoned"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Delete(path).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member := f.env.Client(f.env.Token("acme", "mia", auth.RoleMember))
	var mine api.ChangeSet
	member.Post(f.dev+"/change_set", map[string]any{"Slug": "m"}).Expect(http.StatusOK).JSON(&mine)
	member.Patch(path, map[string]any{"State": "Abandoned"}).Expect(http.StatusOK)
	member.Delete(f.dev + "/change_set/" + mine.ChangeSetID.String()).Expect(http.StatusOK)
}

// TestChangeSetWorkflow: a ChangeSet made with a ChangeWorkflowID carries a copy of the workflow's content
// (of any Space of the organization), which later edits of the workflow leave alone; changing
// ChangeWorkflowID while Open copies the new one (null clears it); a copy copies the workflow again; another
// organization's ChangeWorkflow, and one the caller may not view, are refused as a random one; a Closed or
// Abandoned ChangeSet keeps its ChangeWorkflowID (400 naming it) until reopened.
func TestChangeSetWorkflow(t *testing.T) {
	t.Parallel()
	f := newChangeSetFixture(t)
	c := f.admin
	stages := []map[string]any{{"Name": "dev", "WhereSpace": "Slug = 'dev'"}, {"Name": "prod", "WhereSpace": "Slug = 'prod'", "Prerequisites": []string{"Promoted", "ok"}}}
	custom := []map[string]any{{"Name": "ok", "Expression": "cel:true", "Description": "always"}}
	var wf, foreignWF api.ChangeWorkflow
	c.Post(f.prod+"/change_workflow", map[string]any{"Slug": "dev-to-prod", "Stages": stages, "CustomPrerequisites": custom}).
		Expect(http.StatusOK).JSON(&wf)
	other := f.env.Client(f.env.Token("globex", "gina", auth.RoleAdmin))
	other.Post("/api/space/"+f.foreignSet.SpaceID.String()+"/change_workflow", map[string]any{"Slug": "theirs", "Stages": stages[:1]}).
		Expect(http.StatusOK).JSON(&foreignWF)

	cs := f.create(t, f.dev, map[string]any{"Slug": "wf", "ChangeWorkflowID": wf.ChangeWorkflowID,
		"ChangeWorkflow": map[string]any{"Stages": []any{map[string]any{"Name": "ignored"}}}})
	require.Equal(t, wf.ChangeWorkflowID, *cs.ChangeWorkflowID)
	require.NotNil(t, cs.ChangeWorkflow)
	require.Len(t, cs.ChangeWorkflow.Stages, 2)
	require.Equal(t, "prod", cs.ChangeWorkflow.Stages[1].Name)
	require.Equal(t, []string{"Promoted", "ok"}, cs.ChangeWorkflow.Stages[1].Prerequisites)
	require.Equal(t, "cel:true", cs.ChangeWorkflow.CustomPrerequisites[0].Expression)
	path := f.dev + "/change_set/" + cs.ChangeSetID.String()

	// Editing the workflow later does not change the copy.
	wfPath := f.prod + "/change_workflow/" + wf.ChangeWorkflowID.String()
	c.Patch(wfPath, map[string]any{"Stages": []map[string]any{{"Name": "only"}}, "CustomPrerequisites": nil}).Expect(http.StatusOK)
	var got api.ExtendedChangeSet
	c.Get(path).Expect(http.StatusOK).JSON(&got)
	require.Len(t, got.ChangeSet.ChangeWorkflow.Stages, 2)
	var list []api.ExtendedChangeSet
	c.Get(f.dev + "/change_set?where=" + url.QueryEscape("ChangeWorkflowID = '"+wf.ChangeWorkflowID.String()+"'")).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Len(t, list[0].ChangeSet.ChangeWorkflow.Stages, 2)

	// A write that leaves ChangeWorkflowID alone keeps the copy; null clears it; setting it again (while
	// Open) copies the workflow as it is now.
	var patched api.ChangeSet
	c.Patch(path, map[string]any{"Description": "d"}).Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched.ChangeWorkflow.Stages, 2)
	c.Patch(path, map[string]any{"ChangeWorkflowID": nil}).Expect(http.StatusOK).JSON(&patched)
	require.Nil(t, patched.ChangeWorkflowID)
	require.Nil(t, patched.ChangeWorkflow)
	c.Patch(path, map[string]any{"ChangeWorkflowID": wf.ChangeWorkflowID}).Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched.ChangeWorkflow.Stages, 1)
	require.Equal(t, "only", patched.ChangeWorkflow.Stages[0].Name)

	// A copy copies the workflow as it is now.
	c.Patch(wfPath, map[string]any{"Stages": []map[string]any{{"Name": "first"}, {"Name": "second"}, {"Name": "third"}}}).Expect(http.StatusOK)
	var cloned []api.ChangeSetCreateOrUpdateResponse
	c.Post("/api/change_set?"+where("Slug = 'wf'").Encode()+"&name_prefixes=copy-", map[string]any{}).Expect(http.StatusOK).JSON(&cloned)
	require.Len(t, cloned, 1)
	require.Len(t, cloned[0].ChangeSet.ChangeWorkflow.Stages, 3)
	c.Get(path).Expect(http.StatusOK).JSON(&got)
	require.Len(t, got.ChangeSet.ChangeWorkflow.Stages, 1)

	// Another organization's ChangeWorkflow is refused as a random ID, on create and on change.
	requireNoSuchReference(t, "ChangeWorkflowID", foreignWF.ChangeWorkflowID, func(id uuid.UUID) *apitest.Response {
		return c.Post(f.dev+"/change_set", map[string]any{"Slug": "foreign", "ChangeWorkflowID": id})
	})
	requireNoSuchReference(t, "ChangeWorkflowID", foreignWF.ChangeWorkflowID, func(id uuid.UUID) *apitest.Response {
		return c.Patch(path, map[string]any{"ChangeWorkflowID": id})
	})

	// Closed (and Abandoned), it keeps its ChangeWorkflowID, even the same write that closes it; reopened,
	// it changes again. A write naming the one it has passes.
	c.Patch(path, map[string]any{"State": "Closed"}).Expect(http.StatusOK)
	for _, id := range []any{nil, uuid.New(), foreignWF.ChangeWorkflowID} {
		e := c.Patch(path, map[string]any{"ChangeWorkflowID": id}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Equal(t, "ChangeWorkflowID", e.Error.ErrorMetadata.Items[0].Item)
		require.Contains(t, e.Error.Message, "Closed")
	}
	c.Patch(path, map[string]any{"ChangeWorkflowID": wf.ChangeWorkflowID, "Description": "closed"}).Expect(http.StatusOK)
	c.Patch(path, map[string]any{"State": "Open", "ChangeWorkflowID": nil}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	c.Patch(path, map[string]any{"State": "Open"}).Expect(http.StatusOK)
	c.Patch(path, map[string]any{"ChangeWorkflowID": nil}).Expect(http.StatusOK).JSON(&patched)
	require.Nil(t, patched.ChangeWorkflow)
	second := f.create(t, f.dev, map[string]any{"Slug": "abandon", "ChangeWorkflowID": wf.ChangeWorkflowID})
	secondPath := f.dev + "/change_set/" + second.ChangeSetID.String()
	c.Patch(secondPath, map[string]any{"State": "Abandoned"}).Expect(http.StatusOK)
	e := c.Patch(secondPath, map[string]any{"ChangeWorkflowID": nil}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ChangeWorkflowID", e.Error.ErrorMetadata.Items[0].Item)

	// A guest granted the ChangeSet's Space but not the workflow's is refused it as a random ID.
	guest := f.env.Principal("acme", "gil", auth.RoleGuest)
	grant := map[string]any{"UserIDs": map[string]bool{guest.UserID.String(): true}}
	c.Patch(f.dev, map[string]any{"Permissions": map[string]any{"View": grant, "CreateChildren": grant}}).Expect(http.StatusOK)
	gil := f.env.Client(f.env.Token("acme", "gil", auth.RoleGuest))
	gil.Post(f.dev+"/change_set", map[string]any{"Slug": "g"}).Expect(http.StatusOK)
	requireNoSuchReference(t, "ChangeWorkflowID", wf.ChangeWorkflowID, func(id uuid.UUID) *apitest.Response {
		return gil.Post(f.dev+"/change_set", map[string]any{"Slug": "g2", "ChangeWorkflowID": id})
	})
}
