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
)

// TestReviewComments: a ReviewComment is on a Revision of its Unit (named by ID or number), may answer
// another on the same Unit, is listed, read, changed (its Text, by its author) and deleted like any
// entity, and names nothing outside its Unit.
func TestReviewComments(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newAttestationFixture(t, env)
	c := f.admin
	var units []api.ExtendedUnit
	c.Get(f.dev + "/unit").Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
	web := f.dev + "/unit/" + units[0].Unit.UnitID.String()
	comments := web + "/review_comment"
	c.Get(f.prod + "/unit").Expect(http.StatusOK).JSON(&units)
	prodComments := f.prod + "/unit/" + units[0].Unit.UnitID.String() + "/review_comment"

	// By RevisionNum: RevisionID is filled in, and the author and client recorded.
	var first api.ReviewComment
	c.Post(comments, map[string]any{"RevisionNum": 1, "Path": "A", "Text": "why 1?"}, apitest.WithHeader("User-Agent", "review-test/1")).
		Expect(http.StatusOK).JSON(&first)
	require.Equal(t, f.devRevs[0], *first.RevisionID)
	require.Equal(t, int64(1), first.RevisionNum)
	require.Equal(t, f.me.UserID, first.UserID)
	require.Equal(t, "review-test/1", first.UserAgent)
	require.Equal(t, "ReviewComment", first.EntityType)
	// By RevisionID: RevisionNum is filled in; a reply names the first.
	var reply api.ReviewComment
	c.Post(comments, map[string]any{"RevisionID": f.devRevs[1], "Text": "because", "ReplyToID": first.ReviewCommentID}).Expect(http.StatusOK).JSON(&reply)
	require.Equal(t, int64(2), reply.RevisionNum)
	require.Equal(t, first.ReviewCommentID, *reply.ReplyToID)

	var got api.ExtendedReviewComment
	c.Get(comments + "/" + first.ReviewCommentID.String() + "?include=UnitID,RevisionID,SpaceID,OrganizationID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, first, got.ReviewComment)
	require.Equal(t, "app", got.Unit.Slug)
	require.Equal(t, int64(1), got.Revision.RevisionNum)
	require.Equal(t, "dev", got.Space.Slug)
	require.NotNil(t, got.Organization)
	var list []api.ExtendedReviewComment
	c.Get(comments + "?order_by=RevisionNum").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 2)
	c.Get(prodComments).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list, "another Unit's list holds none of them")
	c.Get("/api/review_comment?include=UnitID&" + url.Values{"where": {"ReplyToID = '" + first.ReviewCommentID.String() + "'"}}.Encode()).
		Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, reply.ReviewCommentID, list[0].ReviewComment.ReviewCommentID)
	require.Equal(t, "app", list[0].Unit.Slug)
	c.Get("/api/review_comment?contains=because").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	// Another Unit's path does not reach it.
	c.Get(prodComments+"/"+first.ReviewCommentID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Patch(prodComments+"/"+first.ReviewCommentID.String(), map[string]any{"Text": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(prodComments+"/"+first.ReviewCommentID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Refusals: no Text, no Revision, a Revision or reply of another Unit, a random one.
	c.Post(comments, map[string]any{"RevisionNum": 1}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post(comments, map[string]any{"RevisionNum": 1, "Text": ""}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post(comments, map[string]any{"RevisionNum": 1, "Text": string(make([]byte, 16385))}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post(comments, map[string]any{"Text": "on what?"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	for _, body := range []map[string]any{
		{"RevisionNum": 3, "Text": "x"},
		{"RevisionID": f.prods[0], "Text": "x"},
		{"RevisionID": uuid.New(), "Text": "x"},
		{"RevisionID": f.devRevs[0], "RevisionNum": 2, "Text": "x"},
	} {
		e := c.Post(comments, body).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message, "Revision")
	}
	var onProd api.ReviewComment
	c.Post(prodComments, map[string]any{"RevisionNum": 1, "Text": "prod"}).Expect(http.StatusOK).JSON(&onProd)
	for _, id := range []uuid.UUID{onProd.ReviewCommentID, uuid.New()} {
		e := c.Post(comments, map[string]any{"RevisionNum": 1, "Text": "x", "ReplyToID": id}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
		require.Contains(t, e.Error.Message, "ReplyToID")
	}
	c.Post(comments+"?dry_run=true", map[string]any{"RevisionNum": 1, "Text": "dry"}).Expect(http.StatusOK)
	c.Get(comments).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 2, "a dry run stores nothing")

	// Only the Text changes: PUT of what GET gave with a new Text, PATCH, a stale Version, another field.
	path := comments + "/" + first.ReviewCommentID.String()
	edited := first
	edited.Text = "why Revision 1?"
	var updated api.ReviewComment
	c.Put(path, edited).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "why Revision 1?", updated.Text)
	require.Equal(t, first.Version+1, updated.Version)
	require.Equal(t, first.Path, updated.Path)
	c.Put(path, edited).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(path, map[string]any{"Text": "patched"}).Expect(http.StatusOK).JSON(&updated)
	require.Equal(t, "patched", updated.Text)
	require.Equal(t, int64(1), updated.RevisionNum)
	for field, v := range map[string]any{"Path": "B", "RevisionNum": 2, "RevisionID": f.devRevs[1], "ReplyToID": reply.ReviewCommentID} {
		e := c.Patch(path, map[string]any{field: v}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
		require.Contains(t, e.Error.Message, field)
	}
	c.Patch(path, map[string]any{"Text": nil}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Bulk patch and delete by where; deleting a comment takes its replies.
	var patched []api.ReviewCommentCreateOrUpdateResponse
	c.Patch("/api/review_comment?"+url.Values{"where": {"Path = 'A'"}}.Encode(), map[string]any{"Text": "bulk"}).Expect(http.StatusOK).JSON(&patched)
	require.Len(t, patched, 1)
	require.Equal(t, "bulk", patched[0].ReviewComment.Text)
	var deleted []api.DeleteResponse
	c.Delete("/api/review_comment?" + url.Values{"where": {"ReviewCommentID = '" + onProd.ReviewCommentID.String() + "'"}}.Encode()).Expect(http.StatusOK).JSON(&deleted)
	require.Len(t, deleted, 1)
	c.Delete(path).Expect(http.StatusOK)
	c.Get(comments).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1, "the reply outlives the comment it answered")
	require.Nil(t, list[0].ReviewComment.ReplyToID)
	c.Get(path).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	c.Delete(comments + "/" + reply.ReviewCommentID.String()).Expect(http.StatusOK)

	// A bulk delete of a comment and its reply deletes both, in whichever order it meets them.
	var parent, child api.ReviewComment
	c.Post(comments, map[string]any{"RevisionNum": 1, "Text": "parent"}).Expect(http.StatusOK).JSON(&parent)
	c.Post(comments, map[string]any{"RevisionNum": 1, "Text": "child", "ReplyToID": parent.ReviewCommentID}).Expect(http.StatusOK).JSON(&child)
	c.Delete("/api/review_comment?" + url.Values{"where": {"UnitID = '" + parent.UnitID.String() + "'"}}.Encode()).Expect(http.StatusOK).JSON(&deleted)
	require.Len(t, deleted, 2)
	require.ElementsMatch(t, []string{"ReviewComment " + parent.ReviewCommentID.String() + " deleted", "ReviewComment " + child.ReviewCommentID.String() + " deleted"},
		[]string{deleted[0].Message, deleted[1].Message})
	c.Get(comments).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	// A moved Unit takes its comments to its new Space.
	var moving api.UnitCreateOrUpdateResponse
	c.Post(f.dev+"/unit", map[string]any{"Slug": "moving", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&moving)
	movingUnit := "/unit/" + moving.Unit.UnitID.String()
	c.Put(f.dev+movingUnit+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)
	var carried api.ReviewComment
	c.Post(f.dev+movingUnit+"/review_comment", map[string]any{"RevisionNum": 1, "Text": "moves along"}).Expect(http.StatusOK).JSON(&carried)
	c.Post("/api/unit/move?"+url.Values{"where": {"Slug = 'moving'"}}.Encode(), map[string]any{"ToSpaceID": onProd.SpaceID}).Expect(http.StatusOK)
	c.Get(f.prod + movingUnit + "/review_comment/" + carried.ReviewCommentID.String()).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, onProd.SpaceID, got.ReviewComment.SpaceID)
	c.Get(f.dev+movingUnit+"/review_comment").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// TestReviewCommentAuthorsAndRoles: a viewer may read but not comment (as for Attestations, commenting
// needs CreateChildren); only the author changes a comment; the author or a manager deletes it; another
// organization sees none of it and its Units and Revisions are as unknown as random IDs; a User of two
// organizations sees each organization's comments only with that organization's token.
func TestReviewCommentAuthorsAndRoles(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newAttestationFixture(t, env)
	var units []api.ExtendedUnit
	f.admin.Get(f.dev + "/unit").Expect(http.StatusOK).JSON(&units)
	comments := f.dev + "/unit/" + units[0].Unit.UnitID.String() + "/review_comment"

	viewer := env.Client(env.Token("acme", "vera", auth.RoleViewer))
	member := env.Client(env.Token("acme", "mark", auth.RoleMember))
	other := env.Client(env.Token("acme", "olga", auth.RoleMember))
	manager := env.Client(env.Token("acme", "mona", auth.RoleManager))

	var byAdmin, byMember api.ReviewComment
	f.admin.Post(comments, map[string]any{"RevisionNum": 2, "Text": "admin's"}).Expect(http.StatusOK).JSON(&byAdmin)
	viewer.Post(comments, map[string]any{"RevisionNum": 2, "Text": "viewer's"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var list []api.ExtendedReviewComment
	viewer.Get(comments).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1, "a viewer reads them")
	member.Post(comments, map[string]any{"RevisionNum": 1, "Text": "member's", "ReplyToID": byAdmin.ReviewCommentID}).Expect(http.StatusOK).JSON(&byMember)

	memberPath := comments + "/" + byMember.ReviewCommentID.String()
	adminPath := comments + "/" + byAdmin.ReviewCommentID.String()
	// Only the author rewords: not another member, not even an admin.
	member.Patch(memberPath, map[string]any{"Text": "edited"}).Expect(http.StatusOK)
	other.Patch(memberPath, map[string]any{"Text": "not mine"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	f.admin.Patch(memberPath, map[string]any{"Text": "not mine"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Patch(memberPath, map[string]any{"Text": "not mine"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Patch(adminPath, map[string]any{"Text": "not mine"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	var items []api.ReviewCommentCreateOrUpdateResponse
	member.Patch("/api/review_comment?"+url.Values{"where": {"RevisionNum > 0"}}.Encode(), map[string]any{"Text": "bulk"}).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2, "the bulk patch changes the caller's own and refuses the other")
	// The author or a manager deletes; another member does not.
	other.Delete(memberPath).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Delete(adminPath).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Delete(memberPath).Expect(http.StatusOK)
	manager.Delete(adminPath).Expect(http.StatusOK)

	// Another organization: its comments are 404 here, ours 404 there, its Units and Revisions 400 here.
	f.admin.Post(comments, map[string]any{"RevisionNum": 1, "Text": "ours"}).Expect(http.StatusOK)
	outsider := env.Client(env.Token("globex", "alice", auth.RoleAdmin))
	g := "/api/space/" + createSpace(t, outsider, map[string]any{"Slug": "dev"}).SpaceID.String()
	var u api.UnitCreateOrUpdateResponse
	outsider.Post(g+"/unit", map[string]any{"Slug": "app", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&u)
	theirUnit := g + "/unit/" + u.Unit.UnitID.String()
	outsider.Put(theirUnit+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)
	var theirRevs []api.ExtendedRevision
	outsider.Get(theirUnit + "/revision").Expect(http.StatusOK).JSON(&theirRevs)
	var theirs api.ReviewComment
	outsider.Post(theirUnit+"/review_comment", map[string]any{"RevisionNum": 1, "Text": "theirs"}).Expect(http.StatusOK).JSON(&theirs)

	outsider.Get("/api/review_comment").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "theirs", list[0].ReviewComment.Text)
	f.admin.Get("/api/review_comment").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "ours", list[0].ReviewComment.Text)
	f.admin.Get(theirUnit+"/review_comment").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.admin.Get(theirUnit+"/review_comment/"+theirs.ReviewCommentID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.admin.Get(comments+"/"+theirs.ReviewCommentID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.admin.Delete(comments+"/"+theirs.ReviewCommentID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.admin.Post(comments, map[string]any{"RevisionID": theirRevs[0].Revision.RevisionID, "Text": "x"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.admin.Post(comments, map[string]any{"RevisionNum": 1, "Text": "x", "ReplyToID": theirs.ReviewCommentID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	var none []api.ExtendedReviewComment
	var deleted []api.DeleteResponse
	f.admin.Delete("/api/review_comment?" + url.Values{"where": {"ReviewCommentID = '" + theirs.ReviewCommentID.String() + "'"}}.Encode()).Expect(http.StatusOK).JSON(&deleted)
	require.Empty(t, deleted)
	outsider.Get("/api/review_comment").Expect(http.StatusOK).JSON(&none)
	require.Len(t, none, 1, "theirs is untouched")
	// alice is a User of both organizations: each token sees only its organization's comments.
	require.Equal(t, "alice", f.me.Username)
}
