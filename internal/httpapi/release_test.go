package httpapi_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
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

// releaseFixture is a Space with a Target and three Units assigned to it (web and db with data, empty
// without) and one Unit assigned to none.
type releaseFixture struct {
	admin   *apitest.Client
	me      api.OrganizationMember
	space   string // /api/space/<id>
	spaceID uuid.UUID
	target  api.Target
	units   map[string]string // Slug -> path
}

func newReleaseFixture(t *testing.T, env *apitest.Env) releaseFixture {
	t.Helper()
	f := releaseFixture{admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin)), units: map[string]string{}}
	f.admin.Get("/api/me").Expect(http.StatusOK).JSON(&f.me)
	sp := createSpace(t, f.admin, map[string]any{"Slug": "shop"})
	f.spaceID, f.space = sp.SpaceID, "/api/space/"+sp.SpaceID.String()
	f.admin.Post(f.space+"/target", map[string]any{"Slug": "envs", "ToolchainType": "AppConfig/Env", "ProviderType": "FluxOCI"}).
		Expect(http.StatusOK).JSON(&f.target)
	for slug, data := range map[string]string{"web": "PORT=8080\n", "db": "HOST=db\n", "empty": "", "loose": "X=1\n"} {
		body := map[string]any{"Slug": slug, "ToolchainType": "AppConfig/Env"}
		if slug != "loose" {
			body["TargetID"] = f.target.TargetID
		}
		var u api.UnitCreateOrUpdateResponse
		f.admin.Post(f.space+"/unit", body).Expect(http.StatusOK).JSON(&u)
		f.units[slug] = f.space + "/unit/" + u.Unit.UnitID.String()
		if data != "" {
			f.admin.Put(f.units[slug]+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte(data)}).Expect(http.StatusOK)
		}
	}
	return f
}

func (f releaseFixture) unit(t *testing.T, slug string) api.Unit {
	t.Helper()
	var u api.ExtendedUnit
	f.admin.Get(f.units[slug]).Expect(http.StatusOK).JSON(&u)
	return u.Unit
}

// untar reads a bundle's files.
func untar(t *testing.T, bundle []byte) (map[string]string, []string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(bundle))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	files, names := map[string]string{}, []string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, names
		}
		require.NoError(t, err)
		require.Equal(t, int64(0o644), h.Mode)
		require.Zero(t, h.ModTime.Unix())
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name], names = string(data), append(names, h.Name)
	}
}

// TestReleases: a publish bundles the Target's Units with data (heads, or a Tag's Revisions) into a
// reproducible tarball served with its Digest as ETag; the Release is listed and read like any entity,
// its content never changes, a withdraw keeps it readable, and DeleteGates hold its delete.
func TestReleases(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newReleaseFixture(t, env)

	var r1 api.Release
	f.admin.Post(f.space+"/release", map[string]any{"TargetID": f.target.TargetID, "Description": "first",
		"Labels": map[string]string{"env": "prod"}}).Expect(http.StatusOK).JSON(&r1)
	require.Equal(t, int64(1), r1.ReleaseNum)
	require.Equal(t, int64(2), r1.UnitCount)
	require.True(t, r1.Published)
	require.Nil(t, r1.ChangeOrderID)
	require.Nil(t, r1.TagID)
	require.Equal(t, f.spaceID.String(), r1.BundleBaseName, "the base name defaults to the Space's ID")
	require.Equal(t, f.me.UserID, r1.UserID)
	require.Equal(t, f.target.TargetID, r1.TargetID)
	require.Equal(t, []api.ReleaseSkippedUnit{{UnitID: f.unit(t, "empty").UnitID, Slug: "empty", Reason: "no data"}}, r1.SkippedUnits)
	require.Equal(t, "Release", r1.EntityType)
	require.Equal(t, api.Labels{"env": "prod"}, r1.Labels)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, r1.Digest)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, r1.ManifestDigest)
	require.Equal(t, f.unit(t, "web").HeadRevisionNum, f.unit(t, "web").LastReleasedRevisionNum)
	require.Zero(t, f.unit(t, "loose").LastReleasedRevisionNum, "a Unit of no Target is not released")
	var web, loose api.ExtendedUnit
	f.admin.Get(f.units["web"] + "?include=LastReleasedRevisionNum").Expect(http.StatusOK).JSON(&web)
	require.NotNil(t, web.LastReleasedRevision)
	require.Equal(t, web.Unit.LastReleasedRevisionNum, web.LastReleasedRevision.RevisionNum)
	require.Equal(t, web.Unit.UnitID, web.LastReleasedRevision.UnitID)
	f.admin.Get(f.units["loose"] + "?include=LastReleasedRevisionNum").Expect(http.StatusOK).JSON(&loose)
	require.Nil(t, loose.LastReleasedRevision)
	var listed []api.ExtendedUnit
	f.admin.Get(f.space + "/unit?include=LastReleasedRevisionNum&where=" + url.QueryEscape("Slug IN ('web', 'db', 'loose')")).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 3)
	for _, u := range listed {
		require.Equal(t, u.Unit.Slug != "loose", u.LastReleasedRevision != nil, u.Unit.Slug)
	}

	// release.published carries what a puller needs.
	var eventType string
	var payload map[string]any
	require.Eventually(t, func() bool {
		return env.App.Store.Pool.QueryRow(context.Background(), `SELECT event_type, payload FROM event_log
			WHERE subject_entity_id = $1 ORDER BY cursor_id LIMIT 1`, r1.ReleaseID).Scan(&eventType, &payload) == nil
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, "release.published", eventType)
	require.Equal(t, map[string]any{"EntityType": "Release", "EntityID": r1.ReleaseID.String(), "ReleaseID": r1.ReleaseID.String(),
		"ReleaseNum": float64(1), "SpaceID": f.spaceID.String(), "SpaceSlug": "shop", "Digest": r1.Digest,
		"BundleBaseName": r1.BundleBaseName}, payload)

	// The bundle: one file per Unit, byte for byte; its SHA-256 is the Digest and its ETag.
	one := f.space + "/release/" + r1.ReleaseID.String()
	resp := f.admin.Get(one + "/data").Expect(http.StatusOK)
	require.Equal(t, "application/gzip", resp.Header.Get("Content-Type"))
	require.Equal(t, `"`+r1.Digest+`"`, resp.Header.Get("ETag"))
	sum := sha256.Sum256(resp.Body)
	require.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), r1.Digest)
	require.Equal(t, int64(len(resp.Body)), r1.DataSize)
	files, names := untar(t, resp.Body)
	require.Equal(t, []string{"db.env", "web.env"}, names, "sorted entries")
	require.Equal(t, map[string]string{"web.env": "PORT=8080\n", "db.env": "HOST=db\n"}, files)
	f.admin.Get(one+"/data", apitest.WithHeader("If-None-Match", `"`+r1.Digest+`"`)).Expect(http.StatusNotModified)
	f.admin.Get(one+"/data", apitest.WithHeader("If-None-Match", `"sha256:00"`)).Expect(http.StatusOK)

	// Reproducible: the same Revisions give the same bytes.
	var r2 api.Release
	f.admin.Post(f.space+"/release", map[string]any{"TargetID": f.target.TargetID, "BundleBaseName": "shop-config"}).Expect(http.StatusOK).JSON(&r2)
	require.Equal(t, int64(2), r2.ReleaseNum)
	require.Equal(t, r1.Digest, r2.Digest)
	require.NotEqual(t, r1.ManifestDigest, r2.ManifestDigest, "the manifest titles the layer <BundleBaseName>.tar.gz")
	require.Equal(t, "shop-config", r2.BundleBaseName)

	// A Tag's Revisions instead of the heads: web as tagged, db (never tagged) skipped.
	var tg api.Tag
	f.admin.Post(f.space+"/tag", map[string]any{"Slug": "v1"}).Expect(http.StatusOK).JSON(&tg)
	f.admin.Post("/api/unit/tag?where=Slug%20%3D%20'web'", map[string]any{"TagID": tg.TagID}).Expect(http.StatusOK)
	f.admin.Put(f.units["web"]+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("PORT=9090\n")}).Expect(http.StatusOK)
	var r3 api.Release
	f.admin.Post(f.space+"/release", map[string]any{"TargetID": f.target.TargetID, "TagID": tg.TagID}).Expect(http.StatusOK).JSON(&r3)
	require.Equal(t, int64(1), r3.UnitCount)
	require.Equal(t, tg.TagID, *r3.TagID)
	require.Len(t, r3.SkippedUnits, 2)
	require.Equal(t, "no Revision carries the Tag", r3.SkippedUnits[0].Reason)
	files, _ = untar(t, f.admin.Get(f.space+"/release/"+r3.ReleaseID.String()+"/data").Expect(http.StatusOK).Body)
	require.Equal(t, map[string]string{"web.env": "PORT=8080\n"}, files)

	// A Revision's include=Releases: those that bundled it, oldest first.
	var dbRevs []api.ExtendedRevision
	f.admin.Get(f.units["db"] + "/revision?include=Releases").Expect(http.StatusOK).JSON(&dbRevs)
	require.Len(t, dbRevs, 1)
	require.NotNil(t, dbRevs[0].Releases)
	var bundledBy []int64
	for _, r := range *dbRevs[0].Releases {
		bundledBy = append(bundledBy, r.ReleaseNum)
	}
	require.Equal(t, []int64{1, 2}, bundledBy)

	// Lists, with includes and order fields.
	nums := func(path string) []int64 {
		var list []api.ExtendedRelease
		f.admin.Get(path).Expect(http.StatusOK).JSON(&list)
		out := []int64{}
		for _, x := range list {
			out = append(out, x.Release.ReleaseNum)
		}
		return out
	}
	require.Equal(t, []int64{1, 2, 3}, nums(f.space+"/release?order_by=ReleaseNum"))
	require.Equal(t, []int64{3}, nums("/api/release?where=TagID%20IS%20NOT%20NULL"))
	require.Equal(t, []int64{1}, nums("/api/release?where=Labels.env%20%3D%20'prod'"))
	require.Equal(t, []int64{1, 2}, nums("/api/release?where=UnitCount%20%3D%202&order_by=CreatedAt"))
	var ext api.ExtendedRelease
	f.admin.Get(f.space + "/release/" + r3.ReleaseID.String() + "?include=TagID,SpaceID,OrganizationID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "v1", ext.Tag.Slug)
	require.Equal(t, "shop", ext.Space.Slug)
	require.NotNil(t, ext.Organization)

	// Only Labels, Annotations, DeleteGates, LiveStatus (and Permissions) change.
	var patched api.Release
	f.admin.Patch(one, map[string]any{"LiveStatus": "Synced", "Annotations": map[string]string{"note": "ok"}}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, "Synced", patched.LiveStatus)
	require.Equal(t, r1.Digest, patched.Digest)
	e := f.admin.Patch(one, map[string]any{"Description": "rewritten"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "Description")
	var got api.ExtendedRelease
	f.admin.Get(one).Expect(http.StatusOK).JSON(&got)
	body := got.Release
	body.Labels = map[string]string{"env": "staging"}
	var put api.Release
	f.admin.Put(one, body).Expect(http.StatusOK).JSON(&put)
	require.Equal(t, api.Labels{"env": "staging"}, put.Labels)
	require.Equal(t, "first", put.Description)
	body = put
	body.Digest = r3.Digest
	e = f.admin.Put(one, body).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Contains(t, e.Error.Message, "Digest")
	f.admin.Put(one, map[string]any{"Version": put.Version, "LiveStatus": "Degraded"}).Expect(http.StatusOK).JSON(&put)
	require.Equal(t, "first", put.Description, "what a PUT leaves out of the content stays")
	require.Equal(t, r1.Digest, put.Digest)

	// Withdraw: out of service, still readable.
	var withdrawn api.Release
	f.admin.Post(one+"/withdraw", nil).Expect(http.StatusOK).JSON(&withdrawn)
	require.False(t, withdrawn.Published)
	// release.withdrawn, once: withdrawing again changes nothing.
	f.admin.Post(one+"/withdraw", nil).Expect(http.StatusOK)
	var withdrawals int
	require.Eventually(t, func() bool {
		return env.App.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM event_log
			WHERE subject_entity_id = $1 AND event_type = 'release.withdrawn'`, r1.ReleaseID).Scan(&withdrawals) == nil && withdrawals > 0
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, 1, withdrawals)
	f.admin.Get(one + "/data").Expect(http.StatusOK)
	require.Equal(t, []int64{2, 3}, nums("/api/release?where=Published%20%3D%20true&order_by=ReleaseNum"))

	// DeleteGates hold the delete.
	f.admin.Patch(one, map[string]any{"DeleteGates": map[string]bool{"audit": true}}).Expect(http.StatusOK)
	f.admin.Delete(one).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.admin.Patch(one, map[string]any{"DeleteGates": map[string]any{"audit": nil}}).Expect(http.StatusOK)
	f.admin.Delete(one).Expect(http.StatusOK)
	f.admin.Get(one).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// An Attestation may name a Release of its Space, and no other.
	revs := []uuid.UUID{*f.unit(t, "web").HeadRevisionID}
	f.admin.Post(f.space+"/attestation", map[string]any{"Type": "Approval", "RevisionIDs": revs, "ReleaseID": r2.ReleaseID}).Expect(http.StatusOK)
	other := createSpace(t, f.admin, map[string]any{"Slug": "other"})
	var otherUnit api.UnitCreateOrUpdateResponse
	f.admin.Post("/api/space/"+other.SpaceID.String()+"/unit", map[string]any{"Slug": "x", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK).JSON(&otherUnit)
	f.admin.Put("/api/space/"+other.SpaceID.String()+"/unit/"+otherUnit.Unit.UnitID.String()+"/data",
		apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK).JSON(&otherUnit)
	e = f.admin.Post("/api/space/"+other.SpaceID.String()+"/attestation", map[string]any{"Type": "Approval",
		"RevisionIDs": []uuid.UUID{*otherUnit.Unit.HeadRevisionID}, "ReleaseID": r2.ReleaseID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Contains(t, e.Error.Message, "ReleaseID")
}

// TestReleaseRefusals: gates refuse a publish and nothing is stored; references must be of the caller's
// organization; another organization sees nothing; viewers read, members publish.
func TestReleaseRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newReleaseFixture(t, env)
	publish := f.space + "/release"
	refused := func(body map[string]any, typ api.ErrorType, item string) {
		t.Helper()
		e := f.admin.Post(publish, body).ExpectError(http.StatusBadRequest, typ)
		require.Contains(t, e.Error.Message, item)
	}
	refused(map[string]any{"TargetID": uuid.New()}, api.ErrorTypeValidation, "TargetID")
	refused(map[string]any{"TargetID": f.target.TargetID, "TagID": uuid.New()}, api.ErrorTypeValidation, "TagID")
	refused(map[string]any{"TargetID": f.target.TargetID, "BundleBaseName": "Not Valid"}, api.ErrorTypeUserInput, "BundleBaseName")

	// Another organization's Target and Tag are as ones that do not exist.
	other := env.Client(env.Token("globex", "gina", auth.RoleAdmin))
	otherSpace := "/api/space/" + createSpace(t, other, map[string]any{"Slug": "mine"}).SpaceID.String()
	var otherTarget api.Target
	other.Post(otherSpace+"/target", map[string]any{"Slug": "t", "ToolchainType": "AppConfig/Env", "ProviderType": "FluxOCI"}).Expect(http.StatusOK).JSON(&otherTarget)
	var otherTag api.Tag
	other.Post(otherSpace+"/tag", map[string]any{"Slug": "v1"}).Expect(http.StatusOK).JSON(&otherTag)
	refused(map[string]any{"TargetID": otherTarget.TargetID}, api.ErrorTypeValidation, "TargetID")
	refused(map[string]any{"TargetID": f.target.TargetID, "TagID": otherTag.TagID}, api.ErrorTypeValidation, "TagID")

	// Gates: a bundled Unit with ApplyGates refuses the publish, and nothing is stored.
	f.admin.Post(f.space+"/trigger", map[string]any{"Slug": "needs-b", "Event": "Mutation", "ToolchainType": "AppConfig/Env",
		"FunctionName": "path-exists", "Arguments": []any{map[string]any{"Value": "B"}}}).Expect(http.StatusOK)
	f.admin.Put(f.units["web"]+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("PORT=1\n")}).Expect(http.StatusOK)
	require.NotEmpty(t, f.unit(t, "web").ApplyGates)
	var gated api.ReleasePublishResponse
	f.admin.Post(publish, map[string]any{"TargetID": f.target.TargetID}).Expect(http.StatusUnprocessableEntity).JSON(&gated)
	require.NotEmpty(t, gated.Gates)
	require.Equal(t, "web", gated.Gates[0].UnitSlug)
	require.True(t, gated.Gates[0].Blocking)
	require.Equal(t, api.ErrorTypeUnprocessable, gated.Error.Type)
	var none []api.ExtendedRelease
	f.admin.Get(publish).Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none, "no refusal stored a Release")
	require.Zero(t, f.unit(t, "db").LastReleasedRevisionNum)

	// With the gate gone (the Trigger deleted and the data written again), the publish goes through.
	var trig []api.ExtendedTrigger
	f.admin.Get(f.space + "/trigger").Expect(http.StatusOK).JSON(&trig)
	f.admin.Delete(f.space + "/trigger/" + trig[0].Trigger.TriggerID.String()).Expect(http.StatusOK)
	f.admin.Put(f.units["web"]+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("PORT=2\n")}).Expect(http.StatusOK)
	var rel api.Release
	member := env.Client(env.Token("acme", "mia", auth.RoleMember))
	member.Post(publish, map[string]any{"TargetID": f.target.TargetID}).Expect(http.StatusOK).JSON(&rel)
	one := publish + "/" + rel.ReleaseID.String()

	// Another organization: nothing of acme's Releases is there.
	other.Get(one).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get(one+"/data").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Post(one+"/withdraw", nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Post(publish, map[string]any{"TargetID": f.target.TargetID}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get("/api/release").Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)
	aliceInGlobex := env.Client(env.Token("globex", "alice", auth.RoleAdmin))
	aliceInGlobex.Get(one).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	aliceInGlobex.Patch(one, map[string]any{"LiveStatus": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	aliceInGlobex.Get("/api/release").Expect(http.StatusOK).JSON(&none)
	require.Empty(t, none)

	// A guest granted View and CreateChildren on the Space, and Edit on web only, may not ship db: 403,
	// nothing stored. Granted Edit on db too, it publishes.
	gus := env.Principal("acme", "gus", auth.RoleGuest).UserID
	guest := env.Client(env.Token("acme", "gus", auth.RoleGuest))
	grant := func(perms ...string) map[string]any {
		out := map[string]any{}
		for _, p := range perms {
			out[p] = map[string]any{"UserIDs": map[string]bool{gus.String(): true}}
		}
		return map[string]any{"Permissions": out}
	}
	f.admin.Patch(f.space, grant("View", "CreateChildren")).Expect(http.StatusOK)
	f.admin.Patch(f.units["web"], grant("Edit")).Expect(http.StatusOK)
	e := guest.Post(publish, map[string]any{"TargetID": f.target.TargetID}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Contains(t, e.Error.Message, "Edit")
	f.admin.Get(publish).Expect(http.StatusOK).JSON(&none)
	require.Len(t, none, 1)
	f.admin.Patch(f.units["db"], grant("Edit")).Expect(http.StatusOK)
	guest.Post(publish, map[string]any{"TargetID": f.target.TargetID}).Expect(http.StatusOK)

	// A viewer reads Releases and bundles but neither publishes, changes nor withdraws.
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Get(one).Expect(http.StatusOK)
	viewer.Get(one + "/data").Expect(http.StatusOK)
	viewer.Post(publish, map[string]any{"TargetID": f.target.TargetID}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Post(one+"/withdraw", nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Patch(one, map[string]any{"LiveStatus": "x"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Delete(one).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}
