package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// attestationFixture is an organization with two Spaces, each with a Unit of two Revisions.
type attestationFixture struct {
	admin          *apitest.Client
	me             api.OrganizationMember
	dev, prod      string // /api/space/<id>
	devRevs, prods []uuid.UUID
}

func newAttestationFixture(t *testing.T, env *apitest.Env) attestationFixture {
	t.Helper()
	f := attestationFixture{admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin))}
	f.admin.Get("/api/me").Expect(http.StatusOK).JSON(&f.me)
	revisions := func(space string) []uuid.UUID {
		var u api.UnitCreateOrUpdateResponse
		f.admin.Post(space+"/unit", map[string]any{"Slug": "app", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&u)
		unit := space + "/unit/" + u.Unit.UnitID.String()
		f.admin.Put(unit+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)
		f.admin.Put(unit+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=2\n")}).Expect(http.StatusOK)
		var revs []api.ExtendedRevision
		f.admin.Get(unit + "/revision?order_by=RevisionNum").Expect(http.StatusOK).JSON(&revs)
		out := make([]uuid.UUID, len(revs))
		for i, r := range revs {
			out[i] = r.Revision.RevisionID
		}
		return out
	}
	f.dev = "/api/space/" + createSpace(t, f.admin, map[string]any{"Slug": "dev"}).SpaceID.String()
	f.prod = "/api/space/" + createSpace(t, f.admin, map[string]any{"Slug": "prod"}).SpaceID.String()
	f.devRevs, f.prods = revisions(f.dev), revisions(f.prod)
	return f
}

// TestAttestations: an Attestation records who claimed what about Revisions of its Space, is read and
// listed like any entity, is returned by its Revisions' include=Attestations, and is never changed:
// withdrawing it is another Attestation naming it.
func TestAttestations(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newAttestationFixture(t, env)
	expires := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)

	var approval api.Attestation
	f.admin.Post(f.dev+"/attestation", map[string]any{"Type": "Approval", "Result": "Approved", "RevisionIDs": []uuid.UUID{f.devRevs[0]},
		"Claims": map[string]any{"ticket": "OPS-1", "reviewers": []string{"alice"}}, "Note": "looks good", "ExpiresAt": expires}).
		Expect(http.StatusOK).JSON(&approval)
	require.NotEqual(t, uuid.Nil, approval.AttestationID)
	require.Equal(t, f.me.UserID, approval.UserID, "the caller recorded it")
	require.Equal(t, "Attestation", approval.EntityType)
	require.Equal(t, []uuid.UUID{f.devRevs[0]}, approval.RevisionIDs)
	require.Equal(t, "OPS-1", approval.Claims["ticket"])
	require.True(t, expires.Equal(*approval.ExpiresAt))
	require.Empty(t, approval.EvidenceAttestationIDs)
	require.Nil(t, approval.RevokedAttestationID)

	var got api.ExtendedAttestation
	f.admin.Get(f.dev + "/attestation/" + approval.AttestationID.String() + "?include=SpaceID,OrganizationID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, approval, got.Attestation)
	require.Equal(t, "dev", got.Space.Slug)
	require.NotNil(t, got.Organization)

	// A check that rests on the approval, then a withdrawal of the approval.
	var check, withdrawal api.Attestation
	f.admin.Post(f.dev+"/attestation", map[string]any{"Type": "Check", "Result": "Passed", "RevisionIDs": f.devRevs,
		"EvidenceAttestationIDs": []uuid.UUID{approval.AttestationID}}).Expect(http.StatusOK).JSON(&check)
	f.admin.Post(f.dev+"/attestation", map[string]any{"Type": "Approval", "Result": "Withdrawn", "RevisionIDs": []uuid.UUID{f.devRevs[0]},
		"RevokedAttestationID": approval.AttestationID}).Expect(http.StatusOK).JSON(&withdrawal)
	require.Equal(t, approval.AttestationID, *withdrawal.RevokedAttestationID)

	// dry_run checks and records nothing.
	f.admin.Post(f.dev+"/attestation?dry_run=true", map[string]any{"Type": "Check", "RevisionIDs": f.devRevs}).Expect(http.StatusOK)

	ids := func(path string, q url.Values) []uuid.UUID {
		var list []api.ExtendedAttestation
		f.admin.Get(path + "?" + q.Encode()).Expect(http.StatusOK).JSON(&list)
		out := []uuid.UUID{}
		for _, a := range list {
			out = append(out, a.Attestation.AttestationID)
		}
		return out
	}
	byCreation := url.Values{"order_by": {"CreatedAt"}}
	require.Equal(t, []uuid.UUID{approval.AttestationID, check.AttestationID, withdrawal.AttestationID}, ids(f.dev+"/attestation", byCreation))
	require.Empty(t, ids(f.prod+"/attestation", nil))
	all := func(where string) []uuid.UUID {
		return ids("/api/attestation", url.Values{"where": {where}, "order_by": {"CreatedAt"}})
	}
	require.Equal(t, []uuid.UUID{approval.AttestationID, withdrawal.AttestationID}, all("Type = 'Approval'"))
	require.Equal(t, []uuid.UUID{check.AttestationID}, all("RevisionIDs ? '"+f.devRevs[1].String()+"'"))
	require.Equal(t, []uuid.UUID{withdrawal.AttestationID}, all("RevokedAttestationID = '"+approval.AttestationID.String()+"'"))
	require.Equal(t, []uuid.UUID{check.AttestationID}, all("EvidenceAttestationIDs ? '"+approval.AttestationID.String()+"'"))
	require.Equal(t, []uuid.UUID{approval.AttestationID}, all("ExpiresAt IS NOT NULL"))
	require.Equal(t, []uuid.UUID{approval.AttestationID}, ids("/api/attestation", url.Values{"contains": {"looks good"}}))
	var sel []map[string]map[string]any
	f.admin.Get("/api/attestation?select=Type&order_by=CreatedAt").Expect(http.StatusOK).JSON(&sel)
	require.Len(t, sel, 3)
	require.Equal(t, "Approval", sel[0]["Attestation"]["Type"])
	require.NotContains(t, sel[0]["Attestation"], "Note", "select returns the IDs and what it names")

	// A Revision's include=Attestations: those naming it, oldest first; null when not included.
	revisionsOf := func(include string) map[uuid.UUID][]uuid.UUID {
		var revs []api.ExtendedRevision
		f.admin.Get("/api/revision?distinct_on=Off&limit=10&include=" + include).Expect(http.StatusOK).JSON(&revs)
		out := map[uuid.UUID][]uuid.UUID{}
		for _, r := range revs {
			if r.Attestations == nil {
				out[r.Revision.RevisionID] = nil
				continue
			}
			out[r.Revision.RevisionID] = []uuid.UUID{}
			for _, a := range *r.Attestations {
				out[r.Revision.RevisionID] = append(out[r.Revision.RevisionID], a.AttestationID)
			}
		}
		return out
	}
	included := revisionsOf("Attestations")
	require.Equal(t, []uuid.UUID{approval.AttestationID, check.AttestationID, withdrawal.AttestationID}, included[f.devRevs[0]])
	require.Equal(t, []uuid.UUID{check.AttestationID}, included[f.devRevs[1]])
	require.Equal(t, []uuid.UUID{}, included[f.prods[0]])
	require.Nil(t, revisionsOf("UnitID")[f.devRevs[0]])

	// Never changed: no PUT, PATCH or DELETE.
	one := f.dev + "/attestation/" + approval.AttestationID.String()
	for _, r := range []*apitest.Response{
		f.admin.Put(one, map[string]any{"Type": "Approval", "RevisionIDs": f.devRevs}), f.admin.Patch(one, map[string]any{"Note": "x"}), f.admin.Delete(one),
	} {
		r.ExpectError(http.StatusMethodNotAllowed, api.ErrorTypeUserInput)
		require.Contains(t, r.Header.Get("Allow"), http.MethodGet)
	}
}

// TestAttestationRefusals: what an Attestation names must be of its Space and exist; every refusal
// records nothing; another organization sees nothing of it.
func TestAttestationRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newAttestationFixture(t, env)
	var prodClaim api.Attestation
	f.admin.Post(f.prod+"/attestation", map[string]any{"Type": "Check", "RevisionIDs": f.prods}).Expect(http.StatusOK).JSON(&prodClaim)

	create := f.dev + "/attestation"
	refused := func(body map[string]any, typ api.ErrorType, item string) {
		t.Helper()
		e := f.admin.Post(create, body).ExpectError(http.StatusBadRequest, typ)
		if item != "" {
			require.Contains(t, e.Error.Message, item)
		}
	}
	rev := []uuid.UUID{f.devRevs[0]}
	refused(map[string]any{"Type": "Check", "RevisionIDs": []uuid.UUID{f.devRevs[0], f.prods[0]}}, api.ErrorTypeValidation, "RevisionIDs")
	refused(map[string]any{"Type": "Check", "RevisionIDs": []uuid.UUID{uuid.New()}}, api.ErrorTypeValidation, "RevisionIDs")
	refused(map[string]any{"Type": "Check", "RevisionIDs": rev, "RevokedAttestationID": prodClaim.AttestationID}, api.ErrorTypeValidation, "RevokedAttestationID")
	refused(map[string]any{"Type": "Check", "RevisionIDs": rev, "EvidenceAttestationIDs": []uuid.UUID{uuid.New()}}, api.ErrorTypeValidation, "EvidenceAttestationIDs")
	refused(map[string]any{"Type": "Check", "RevisionIDs": rev, "ReleaseID": uuid.New()}, api.ErrorTypeValidation, "ReleaseID")
	refused(map[string]any{"Type": "Check", "RevisionIDs": rev, "ChangeOrderID": uuid.New()}, api.ErrorTypeValidation, "ChangeOrderID")
	refused(map[string]any{"Type": "Check", "RevisionIDs": rev, "ExpiresAt": time.Now().Add(-time.Hour)}, api.ErrorTypeValidation, "ExpiresAt")
	refused(map[string]any{"RevisionIDs": rev}, api.ErrorTypeUserInput, "")
	refused(map[string]any{"Type": "Check", "RevisionIDs": []uuid.UUID{}}, api.ErrorTypeUserInput, "")
	refused(map[string]any{"Type": "Check", "RevisionIDs": "all"}, api.ErrorTypeUserInput, "")
	var none []api.ExtendedAttestation
	f.admin.Get(create).Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none, "no refusal recorded anything")

	// Another organization: its Attestations, Spaces and Revisions are not there.
	other := env.Client(env.Token("globex", "gina", auth.RoleAdmin))
	other.Get(f.prod+"/attestation/"+prodClaim.AttestationID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Post(f.prod+"/attestation", map[string]any{"Type": "Check", "RevisionIDs": f.prods}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	otherSpace := "/api/space/" + createSpace(t, other, map[string]any{"Slug": "mine"}).SpaceID.String()
	other.Post(otherSpace+"/attestation", map[string]any{"Type": "Check", "RevisionIDs": f.prods}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	other.Get("/api/attestation").Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)

	// alice, acme's admin, is also a member of globex: her globex token reaches none of acme's Attestations.
	aliceInGlobex := env.Client(env.Token("globex", "alice", auth.RoleAdmin))
	aliceInGlobex.Get(f.prod+"/attestation/"+prodClaim.AttestationID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	aliceInGlobex.Get("/api/attestation").Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)
	var revs []api.ExtendedRevision
	aliceInGlobex.Get("/api/revision?include=Attestations").Expect(http.StatusOK).JSON(&revs)
	require.Empty(t, revs, "nor acme's Revisions and what names them")

	// A viewer may read but not record.
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Post(f.prod+"/attestation", map[string]any{"Type": "Check", "RevisionIDs": f.prods}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Get(f.prod + "/attestation/" + prodClaim.AttestationID.String()).Expect(http.StatusOK)
}
