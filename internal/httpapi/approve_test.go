package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/attestation"
	"github.com/hubd/hubd/internal/auth"
)

// approveFixture is an organization whose Space dev holds app (two Revisions written by alice) and web
// (one Revision written by bob), with a client per role.
type approveFixture struct {
	env                  *apitest.Env
	alice, bob, mia, vic *apitest.Client
	gus                  *apitest.Client
	bobID, miaID         uuid.UUID
	dev, devID, app, web string
	appRevs              []uuid.UUID
	webRev               uuid.UUID
}

func newApproveFixture(t *testing.T, env *apitest.Env) *approveFixture {
	t.Helper()
	f := &approveFixture{env: env,
		alice: env.Client(env.Token("acme", "alice", auth.RoleAdmin)), bob: env.Client(env.Token("acme", "bob", auth.RoleMember)),
		mia: env.Client(env.Token("acme", "mia", auth.RoleManager)), vic: env.Client(env.Token("acme", "vic", auth.RoleViewer)),
		gus: env.Client(env.Token("acme", "gus", auth.RoleGuest)),
	}
	f.bobID = env.Principal("acme", "bob", auth.RoleMember).UserID
	f.miaID = env.Principal("acme", "mia", auth.RoleManager).UserID
	f.devID = createSpace(t, f.alice, map[string]any{"Slug": "dev"}).SpaceID.String()
	f.dev = "/api/space/" + f.devID
	unitWith := func(c *apitest.Client, slug string, data ...string) (string, []uuid.UUID) {
		var u api.UnitCreateOrUpdateResponse
		c.Post(f.dev+"/unit", map[string]any{"Slug": slug, "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&u)
		path := f.dev + "/unit/" + u.Unit.UnitID.String()
		for _, d := range data {
			c.Put(path+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte(d)}).Expect(http.StatusOK)
		}
		var revs []api.ExtendedRevision
		c.Get(path + "/revision?order_by=RevisionNum").Expect(http.StatusOK).JSON(&revs)
		ids := []uuid.UUID{}
		for _, r := range revs {
			ids = append(ids, r.Revision.RevisionID)
		}
		return path, ids
	}
	f.app, f.appRevs = unitWith(f.alice, "app", "A=1\n", "A=2\n")
	var webRevs []uuid.UUID
	f.web, webRevs = unitWith(f.bob, "web", "W=1\n")
	f.webRev = webRevs[0]
	return f
}

// approvals lists the Approval Attestations of dev, oldest first.
func (f *approveFixture) approvals(t *testing.T) []api.Attestation {
	t.Helper()
	var list []api.ExtendedAttestation
	f.alice.Get(f.dev + "/attestation?order_by=CreatedAt&where=" + url.QueryEscape("Type = 'Approval'")).Expect(http.StatusOK).JSON(&list)
	out := []api.Attestation{}
	for _, a := range list {
		out = append(out, a.Attestation)
	}
	return out
}

// TestApproveUnit: a member approves a Revision another wrote (an Attestation Approval/Approved by the
// caller, naming it, in the Unit's Space); the author is refused 403; approving again records nothing;
// revision selects the Revision; viewers are refused, guests and other organizations do not see the Unit.
func TestApproveUnit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newApproveFixture(t, env)

	var got api.ApproveResponse
	f.bob.Post(f.app+"/approve", nil).Expect(http.StatusOK).JSON(&got)
	require.Nil(t, got.Error)
	require.Equal(t, "app", got.Unit.Slug)
	require.Equal(t, "Revision 2 of Unit app approved", got.Message)
	list := f.approvals(t)
	require.Len(t, list, 1)
	require.Equal(t, f.bobID, list[0].UserID)
	require.Equal(t, "Approved", list[0].Result)
	require.Equal(t, []uuid.UUID{f.appRevs[1]}, list[0].RevisionIDs)
	require.Equal(t, f.devID, list[0].SpaceID.String())

	// Again: already approved, nothing recorded.
	f.bob.Post(f.app+"/approve?revision=HeadRevisionNum", nil).Expect(http.StatusOK).JSON(&got)
	require.Contains(t, got.Message, "already approved")
	require.Len(t, f.approvals(t), 1)

	// The author cannot approve their own change.
	e := f.alice.Post(f.app+"/approve", nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Contains(t, e.Error.Message, "an author cannot approve their own change")
	require.Len(t, f.approvals(t), 1)

	// revision selects: a RevisionNum, Before:, Revision:<ID>.
	f.bob.Post(f.app+"/approve?revision=1", nil).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "Revision 1 of Unit app approved", got.Message)
	f.bob.Post(f.app+"/approve?revision=Before:HeadRevisionNum", nil).Expect(http.StatusOK).JSON(&got)
	require.Contains(t, got.Message, "Revision 1 of Unit app is already approved")
	f.mia.Post(f.app+"/approve?revision=Revision:"+f.appRevs[0].String(), nil).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "Revision 1 of Unit app approved", got.Message)
	require.Len(t, f.approvals(t), 3)
	e = f.bob.Post(f.app+"/approve?revision=latest", nil).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "revision", e.Error.ErrorMetadata.Items[0].Item)
	e = f.bob.Post(f.app+"/approve?revision=9", nil).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "revision", e.Error.ErrorMetadata.Items[0].Item)
	var empty api.UnitCreateOrUpdateResponse
	f.alice.Post(f.dev+"/unit", map[string]any{"Slug": "empty", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&empty)
	e = f.bob.Post(f.dev+"/unit/"+empty.Unit.UnitID.String()+"/approve", nil).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "has no Revision yet")

	// The promotion engine's read: Revision → approving Users in force.
	ctx := context.Background()
	var me api.OrganizationMember
	f.alice.Get("/api/me").Expect(http.StatusOK).JSON(&me)
	approvals, err := attestation.ApprovalsOf(ctx, env.App.Store.Q(), me.OrganizationID, []uuid.UUID{f.appRevs[0], f.appRevs[1], f.webRev})
	require.NoError(t, err)
	require.ElementsMatch(t, []uuid.UUID{f.bobID, f.miaID}, approvals[f.appRevs[0]])
	require.Equal(t, []uuid.UUID{f.bobID}, approvals[f.appRevs[1]])
	require.NotContains(t, approvals, f.webRev)
	// Another organization's ID finds nothing.
	other, err := attestation.ApprovalsOf(ctx, env.App.Store.Q(), uuid.New(), []uuid.UUID{f.appRevs[1]})
	require.NoError(t, err)
	require.Empty(t, other)

	// A revoked approval is no longer in force: approving again records a new one.
	f.bob.Post(f.dev+"/attestation", map[string]any{"Type": "Approval", "Result": "Withdrawn", "RevisionIDs": []uuid.UUID{f.appRevs[1]},
		"RevokedAttestationID": list[0].AttestationID}).Expect(http.StatusOK)
	approvals, err = attestation.ApprovalsOf(ctx, env.App.Store.Q(), me.OrganizationID, []uuid.UUID{f.appRevs[1]})
	require.NoError(t, err)
	require.Empty(t, approvals)
	f.bob.Post(f.app+"/approve", nil).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "Revision 2 of Unit app approved", got.Message)
	approvals, err = attestation.ApprovalsOf(ctx, env.App.Store.Q(), me.OrganizationID, []uuid.UUID{f.appRevs[1]})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{f.bobID}, approvals[f.appRevs[1]])

	// A Revision's include=Attestations shows its approvals.
	var revs []api.ExtendedRevision
	f.alice.Get(f.app + "/revision?order_by=RevisionNum&include=Attestations").Expect(http.StatusOK).JSON(&revs)
	require.NotNil(t, revs[0].Attestations)
	require.Len(t, *revs[0].Attestations, 2)
	require.Equal(t, "Approval", (*revs[0].Attestations)[0].Type)

	// Roles: a viewer may not approve (403); a guest granted nothing does not see the Unit (404).
	f.vic.Post(f.app+"/approve", nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	f.gus.Post(f.app+"/approve", nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Tenancy: another organization's Unit is 404, also for a User of both organizations, and a bulk
	// approval there selects nothing of acme.
	bobInGlobex := env.Client(env.Token("globex", "bob", auth.RoleAdmin))
	bobInGlobex.Post(f.app+"/approve", nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	bobInGlobex.Post("/api/space/"+uuid.NewString()+"/unit/"+uuid.NewString()+"/approve", nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var items []api.ApproveResponse
	bobInGlobex.Post("/api/unit/approve?where="+url.QueryEscape("Slug = 'app'"), nil).Expect(http.StatusOK).JSON(&items)
	require.Empty(t, items)
	require.Len(t, f.approvals(t), 5)
}

// TestBulkApproveUnits: each selected Unit is approved or refused alone: 207 when some are refused (the
// caller's own Revision), 200 when none is.
func TestBulkApproveUnits(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newApproveFixture(t, env)
	both := "/api/unit/approve?where=" + url.QueryEscape("Slug IN ('app', 'web')")

	var items []api.ApproveResponse
	f.bob.Post(both, nil).Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
	byOutcome := map[string]api.ApproveResponse{}
	for _, it := range items {
		if it.Error != nil {
			byOutcome["refused"] = it
		} else {
			byOutcome[it.Unit.Slug] = it
		}
	}
	require.Equal(t, "Revision 2 of Unit app approved", byOutcome["app"].Message)
	refused := byOutcome["refused"]
	require.NotNil(t, refused.Error)
	require.Nil(t, refused.Unit)
	require.Equal(t, api.ErrorTypePermission, refused.Error.Type)
	require.Equal(t, http.StatusForbidden, refused.Error.Status)
	require.Equal(t, "web", refused.Error.ErrorMetadata.EntitySlug)
	require.True(t, strings.Contains(refused.Message, "an author cannot approve"))

	// A manager approves both: 200; bob's approval of app was already there, and stays one.
	f.mia.Post(both, nil).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	f.bob.Post(both+"&revision=HeadRevisionNum", nil).Expect(http.StatusMultiStatus).JSON(&items)
	list := f.approvals(t)
	require.Len(t, list, 3)
	byUser := map[uuid.UUID]int{}
	for _, a := range list {
		byUser[a.UserID]++
	}
	require.Equal(t, map[uuid.UUID]int{f.bobID: 1, f.miaID: 2}, byUser)

	// revision applies to every Unit: web has no Revision 2, so it fails alone (app is already approved).
	f.mia.Post(both+"&revision=2", nil).Expect(http.StatusMultiStatus).JSON(&items)
	// A malformed selector fails the whole request; so does a missing selection.
	f.mia.Post(both+"&revision=Tag:", nil).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.mia.Post("/api/unit/approve", nil).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// A viewer's items are refused 403 each.
	f.vic.Post(both, nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}
