package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// propagationFixture is a Space with AppConfig/YAML Units to link.
type propagationFixture struct{ functionFixture }

func newPropagationFixture(t *testing.T) propagationFixture {
	return propagationFixture{newFunctionFixture(t)}
}

// hostLink makes a Link from Unit from to Unit to that copies to's db.host into from's database.host.
func (f propagationFixture) hostLink(t *testing.T, slug string, from, to api.Unit, extra ...map[string]any) api.Link {
	t.Helper()
	body := map[string]any{"Slug": slug, "FromUnitID": from.UnitID, "ToUnitID": to.UnitID, "AutoUpdate": true,
		"UpstreamPaths": []map[string]any{{"Path": "db.host"}}, "DownstreamPaths": []map[string]any{{"Path": "database.host", "Required": true}}}
	for _, e := range extra {
		for k, v := range e {
			body[k] = v
		}
	}
	var l api.Link
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/link", body).Expect(http.StatusOK).JSON(&l)
	return l
}

func (f propagationFixture) linkNow(t *testing.T, l api.Link) api.Link {
	t.Helper()
	var got api.ExtendedLink
	f.c.Get(linkPath(l)).Expect(http.StatusOK).JSON(&got)
	return got.Link
}

func (f propagationFixture) mutations(t *testing.T, u api.Unit) []api.ExtendedMutation {
	t.Helper()
	var ms []api.ExtendedMutation
	f.c.Get(f.path(u) + "/mutation?include=LinkID,MergeSourceID&order_by=MutationNum").Expect(http.StatusOK).JSON(&ms)
	return ms
}

// TestLinkPropagation: creating a Link writes the upstream value into its From Unit as a Revision whose
// Mutation names the Link; every write of the To Unit propagates while AutoUpdate is on; nothing is
// recorded when nothing changes; the Unit shows what the Link found, what it needs and what it provides.
func TestLinkPropagation(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	db := f.unitWithData(t, "db", configdata.AppConfigYAML, "db:\n  host: db-1\n")
	app := f.unitWithData(t, "app", configdata.AppConfigYAML, "name: app # the app\n")
	l := f.hostLink(t, "app-db", app, db)
	require.Equal(t, int64(1), l.UpstreamLastMergedRevisionNum)
	require.Equal(t, int64(2), l.DownstreamLastMergedRevisionNum)
	require.False(t, l.Stale)
	require.Equal(t, "name: app # the app\ndatabase:\n  host: db-1\n", f.data(t, app))

	ms := f.mutations(t, app)
	require.Len(t, ms, 2)
	require.Equal(t, l.LinkID, *ms[1].Mutation.LinkID)
	require.Equal(t, "app-db", ms[1].Link.Slug)
	require.Equal(t, db.UnitID, *ms[1].Mutation.MergeSourceID)
	var rev api.ExtendedRevision
	f.c.Get(f.path(app) + "/revision/" + ms[1].Mutation.RevisionID.String()).Expect(http.StatusOK).JSON(&rev)
	require.Equal(t, "Link", rev.Revision.Source)
	require.Len(t, rev.Revision.LinkFindings, 1)

	// An upstream write propagates in its own transaction.
	f.put(t, db, "text/plain", "db:\n  host: db-2\n").Expect(http.StatusOK)
	require.Contains(t, f.data(t, app), "host: db-2")
	now := f.unitNow(t, app)
	require.Equal(t, int64(3), now.HeadRevisionNum)
	require.Len(t, now.LinkFindings, 1)
	require.Equal(t, api.Written, now.LinkFindings[0].Status)
	require.Equal(t, `"db-2"`, *now.LinkFindings[0].Value)
	require.Equal(t, []api.NeededPath{{LinkID: l.LinkID, Path: "database.host", Required: true, Satisfied: true}}, now.NeededPaths)
	require.Equal(t, []api.ProvidedPath{{LinkID: l.LinkID, FromUnitID: app.UnitID, Path: "db.host"}}, f.unitNow(t, db).ProvidedPaths)
	require.Equal(t, []string{l.LinkID.String()}, uuidStrings(now.FromLinkID))

	// A change elsewhere in the upstream writes nothing downstream.
	f.put(t, db, "text/plain", "db:\n  host: db-2\n  port: 5432\n").Expect(http.StatusOK)
	require.Equal(t, int64(3), f.unitNow(t, app).HeadRevisionNum)
	require.Equal(t, int64(3), f.linkNow(t, l).UpstreamLastMergedRevisionNum)

	// An upstream without the value: nothing is written, and the finding says why.
	f.put(t, db, "text/plain", "other: 1\n").Expect(http.StatusOK)
	now = f.unitNow(t, app)
	require.Equal(t, int64(3), now.HeadRevisionNum)
	require.Equal(t, api.NotProvided, now.LinkFindings[0].Status)
	require.False(t, now.NeededPaths[0].Satisfied)

	// A deleted Link propagates nothing more, and its findings leave the Unit.
	f.c.Delete(linkPath(l)).Expect(http.StatusOK)
	f.put(t, db, "text/plain", "db:\n  host: db-3\n").Expect(http.StatusOK)
	now = f.unitNow(t, app)
	require.Contains(t, f.data(t, app), "host: db-2")
	require.Empty(t, now.LinkFindings)
	require.Empty(t, f.unitNow(t, db).ProvidedPaths)
}

func uuidStrings[T fmt.Stringer](ids []T) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// TestLinkStaleAndUpgrade: without AutoUpdate a Link holds the downstream back and says it is Stale, until
// an upgrade of its From Unit applies it.
func TestLinkStaleAndUpgrade(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	db := f.unitWithData(t, "db", configdata.AppConfigYAML, "db:\n  host: db-1\n")
	app := f.unitWithData(t, "app", configdata.AppConfigYAML, "name: app\n")
	l := f.hostLink(t, "app-db", app, db, map[string]any{"AutoUpdate": false})
	require.Contains(t, f.data(t, app), "host: db-1", "creating a Link applies it")

	f.put(t, db, "text/plain", "db:\n  host: db-2\n").Expect(http.StatusOK)
	require.Contains(t, f.data(t, app), "host: db-1")
	held := f.linkNow(t, l)
	require.True(t, held.Stale)
	require.Equal(t, int64(1), held.UpstreamLastMergedRevisionNum)

	var res api.UnitWriteResponse
	f.c.Patch(f.path(app)+"?upgrade=true", map[string]any{}).Expect(http.StatusOK).JSON(&res)
	require.Contains(t, f.data(t, app), "host: db-2")
	merged := f.linkNow(t, l)
	require.False(t, merged.Stale)
	require.Equal(t, int64(2), merged.UpstreamLastMergedRevisionNum)
	require.Equal(t, res.Unit.HeadRevisionNum, merged.DownstreamLastMergedRevisionNum)

	// Turning AutoUpdate on catches up at once.
	f.put(t, db, "text/plain", "db:\n  host: db-3\n").Expect(http.StatusOK)
	require.True(t, f.linkNow(t, l).Stale)
	f.c.Patch(linkPath(l), map[string]any{"AutoUpdate": true}).Expect(http.StatusOK)
	require.Contains(t, f.data(t, app), "host: db-3")
	require.False(t, f.linkNow(t, l).Stale)

	// A Unit neither cloned nor written by a Link has nothing to upgrade from.
	var e api.StandardErrorResponse
	f.c.Patch(f.path(db)+"?upgrade=true", map[string]any{}).Expect(http.StatusBadRequest).JSON(&e)
	require.Equal(t, "upgrade", itemOf(t, e))
}

// TestLinkChain: A → B → C propagates in order within the upstream's one write.
func TestLinkChain(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	a := f.unitWithData(t, "a", configdata.AppConfigYAML, "db:\n  host: h1\n")
	b := f.unitWithData(t, "b", configdata.AppConfigYAML, "x: 1\n")
	c := f.unitWithData(t, "c", configdata.AppConfigYAML, "y: 1\n")
	f.hostLink(t, "b-a", b, a)
	// c reads b's database.host (which b got from a) into its own db.host.
	f.hostLink(t, "c-b", c, b, map[string]any{"UpstreamPaths": []map[string]any{{"Path": "database.host"}},
		"DownstreamPaths": []map[string]any{{"Path": "db.host"}}})
	require.Contains(t, f.data(t, c), "host: h1")

	f.put(t, a, "text/plain", "db:\n  host: h2\n").Expect(http.StatusOK)
	require.Contains(t, f.data(t, b), "host: h2")
	require.Contains(t, f.data(t, c), "host: h2")

	// A dry run of the upstream write propagates nothing either.
	f.c.Do(http.MethodPut, f.path(a)+"/data?dry_run=true", apitest.Raw{ContentType: "text/plain", Data: []byte("db:\n  host: h3\n")}).Expect(http.StatusOK)
	require.Contains(t, f.data(t, c), "host: h2")
}

// TestLinkProtectedAndGuarded: a Link never overwrites a protected path, and writes a guarded one only with a
// Clearance that clears its guards; what it holds back is a conflict of the Link on the Unit, applied or
// dismissed like a merge's.
func TestLinkProtectedAndGuarded(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	db := f.unitWithData(t, "db", configdata.AppConfigYAML, "db:\n  host: db-1\n  user: app\n")
	app := f.unitWithData(t, "app", configdata.AppConfigYAML, "database:\n  host: local\n  user: me\n")
	f.c.Post(f.path(app)+"/protection", map[string]any{"ResourceProtection": []map[string]any{{"Protected": map[string]bool{"database.host": true}}}}).
		Expect(http.StatusOK)
	f.c.Post(f.path(app)+"/guard", map[string]any{"ResourceGuards": []map[string]any{{"Set": map[string]any{"database.user": map[string]string{"owner": "dba"}}}}}).
		Expect(http.StatusOK)
	two := map[string]any{"UpstreamPaths": []map[string]any{{"Path": "db.host"}, {"Path": "db.user"}},
		"DownstreamPaths": []map[string]any{{"Path": "database.host"}, {"Path": "database.user"}}}
	l := f.hostLink(t, "app-db", app, db, two)
	require.Equal(t, "database:\n  host: local\n  user: me\n", f.data(t, app))
	now := f.unitNow(t, app)
	require.Len(t, now.Conflicts, 2)
	reasons := map[string]string{}
	for _, c := range now.Conflicts {
		reasons[c.Path] = string(c.Reason)
		require.Equal(t, l.LinkID, *c.LinkID)
	}
	require.Equal(t, map[string]string{"database.host": "ProtectedPath", "database.user": "Guarded"}, reasons)
	require.Equal(t, api.Withheld, now.LinkFindings[0].Status)

	// The Link's Clearance clears the guard: the guarded path is written, the protected one still is not, and
	// the Link's conflicts are replaced by those of its latest write.
	f.c.Patch(linkPath(l), map[string]any{"Clearance": []map[string]any{{"Key": "owner", "Operator": "In", "Values": []string{"dba"}}}}).Expect(http.StatusOK)
	require.Equal(t, "database:\n  host: local\n  user: app\n", f.data(t, app))
	now = f.unitNow(t, app)
	require.Len(t, now.Conflicts, 1)
	require.Equal(t, "database.host", now.Conflicts[0].Path)

	// A person takes the upstream value after all.
	var res api.UnitConflictsResponse
	f.c.Post(f.path(app)+"/conflicts", map[string]any{"Action": "Apply"}).Expect(http.StatusOK).JSON(&res)
	require.Empty(t, res.Conflicts)
	require.Contains(t, f.data(t, app), "host: db-1")
}

// TestLinkMergeUnits: a MergeUnits Link merges the To Unit's whole data three ways: the From Unit's own
// changes survive the upstream's.
func TestLinkMergeUnits(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	base := f.unitWithData(t, "base", configdata.AppConfigYAML, "image: v1\nreplicas: 1\nlog: info\n")
	app := f.unitWithData(t, "app", configdata.AppConfigYAML, "image: v0\n")
	var l api.Link
	f.c.Post("/api/space/"+f.space.SpaceID.String()+"/link", map[string]any{"Slug": "app-base", "FromUnitID": app.UnitID,
		"ToUnitID": base.UnitID, "UpdateType": "MergeUnits", "AutoUpdate": true}).Expect(http.StatusOK).JSON(&l)
	// A first merge has no base: what only upstream has is added, a value both hold differently conflicts.
	require.Equal(t, map[string]any{"image": "v0", "replicas": int64(1), "log": "info"}, leavesOf(t, []byte(f.data(t, app))))
	now := f.unitNow(t, app)
	require.Len(t, now.Conflicts, 1)
	require.Equal(t, "UnresolvedPath", string(now.Conflicts[0].Reason))
	f.c.Post(f.path(app)+"/conflicts", map[string]any{"Action": "Apply"}).Expect(http.StatusOK)

	f.put(t, app, "text/plain", "image: v1\nreplicas: 3\nlog: info\n").Expect(http.StatusOK)
	f.put(t, base, "text/plain", "image: v2\nreplicas: 1\nlog: debug\n").Expect(http.StatusOK)
	require.Equal(t, map[string]any{"image": "v2", "replicas": int64(3), "log": "debug"}, leavesOf(t, []byte(f.data(t, app))))
	require.Empty(t, f.unitNow(t, app).Conflicts)
}

// TestLinkPropagationRace: downstream edits racing upstream writes are serialized by the downstream's row
// lock: every one lands, none is lost.
func TestLinkPropagationRace(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	db := f.unitWithData(t, "db", configdata.AppConfigYAML, "db:\n  host: h0\n")
	app := f.unitWithData(t, "app", configdata.AppConfigYAML, "database:\n  host: none\n")
	f.hostLink(t, "app-db", app, db)
	const rounds = 8
	var wg sync.WaitGroup
	for i := 1; i <= rounds; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			f.c.Do(http.MethodPut, f.path(db)+"/data", apitest.Raw{ContentType: "text/plain", Data: fmt.Appendf(nil, "db:\n  host: h%d\n", i)}).Expect(http.StatusOK)
		}()
		go func() {
			defer wg.Done()
			f.invoke(t, url.Values{"where": {"Slug = 'app'"}}, http.StatusOK, invocation("set-value", fmt.Sprintf("local.k%d", i), "v"))
		}()
	}
	wg.Wait()
	data := f.data(t, app)
	for i := 1; i <= rounds; i++ {
		require.Contains(t, data, fmt.Sprintf("k%d: v", i), "a downstream edit was lost")
	}
	// The downstream holds the upstream's last value.
	up := leavesOf(t, []byte(f.data(t, db)))
	require.Equal(t, up["db.host"], leavesOf(t, []byte(data))["database.host"])
	// Every change is a Revision: the 1 it was created with, the first write, the Link's first write, then one per edit
	// and one per upstream write that changed the value.
	now := f.unitNow(t, app)
	require.GreaterOrEqual(t, now.HeadRevisionNum, int64(3+rounds))
}

// TestLinkPropagationReach: a Link carries its maker's authority: a writer of the upstream who may not view
// the downstream still propagates into it (and learns nothing of it), and a member without Edit on a Unit
// cannot make a Link write into it.
func TestLinkPropagationReach(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	db := f.unitWithData(t, "db", configdata.AppConfigYAML, "db:\n  host: h1\n")
	secret := f.unitWithData(t, "secret", configdata.AppConfigYAML, "x: 1\n")
	f.c.Patch(f.path(secret), map[string]any{"Permissions": map[string]any{"View": map[string]any{"Users": []string{}}}}).Expect(http.StatusOK)
	f.hostLink(t, "secret-db", secret, db)

	member := f.env.Client(f.env.Token("acme", "bob", auth.RoleMember))
	var res api.UnitWriteResponse
	member.Do(http.MethodPut, f.path(db)+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("db:\n  host: h2\n")}).Expect(http.StatusOK).JSON(&res)
	require.NotContains(t, strings.ToLower(fmt.Sprint(res)), "secret")
	require.Contains(t, f.data(t, secret), "host: h2")

	viewer := f.env.Client(f.env.Token("acme", "vera", auth.RoleViewer))
	viewer.Post("/api/space/"+f.space.SpaceID.String()+"/link", map[string]any{"Slug": "v", "FromUnitID": db.UnitID, "ToUnitID": secret.UnitID}).
		Expect(http.StatusForbidden)
}

// TestLinkPropagationWithinOneInvocation: one invocation over an upstream and its downstream writes both;
// the downstream's own change is made on top of what the upstream's propagated into it moments before, in
// the same transaction.
func TestLinkPropagationWithinOneInvocation(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	db := f.unitWithData(t, "db", configdata.AppConfigYAML, "db:\n  host: h1\n")
	app := f.unitWithData(t, "app", configdata.AppConfigYAML, "name: app\n")
	f.hostLink(t, "app-db", app, db)
	out := f.invoke(t, url.Values{"where": {"Slug IN ('db', 'app')"}, "order_by": {"Slug DESC"}}, http.StatusOK,
		invocation("set-value", "db.host", "h2"))
	require.Len(t, out, 2)
	data := leavesOf(t, []byte(f.data(t, app)))
	require.Equal(t, "h2", data["database.host"], "the upstream's change reached the downstream")
	require.Equal(t, "h2", data["db.host"], "the downstream's own change was made too")
}

// TestUnitWriteAnswersShowLinks: the answers of an upgrade and of a conflicts resolution show the Unit's
// Links as its reads do.
func TestUnitWriteAnswersShowLinks(t *testing.T) {
	t.Parallel()
	f := newPropagationFixture(t)
	db := f.unitWithData(t, "db", configdata.AppConfigYAML, "db:\n  host: h1\n")
	app := f.unitWithData(t, "app", configdata.AppConfigYAML, "database:\n  host: mine\n")
	f.c.Post(f.path(app)+"/protection", map[string]any{"ResourceProtection": []map[string]any{{"Protected": map[string]bool{"database.host": true}}}}).
		Expect(http.StatusOK)
	l := f.hostLink(t, "app-db", app, db, map[string]any{"AutoUpdate": false})
	var up api.UnitWriteResponse
	f.c.Patch(f.path(app)+"?upgrade=true", map[string]any{}).Expect(http.StatusOK).JSON(&up)
	require.Equal(t, []string{l.LinkID.String()}, uuidStrings(up.Unit.FromLinkID))
	var res api.UnitConflictsResponse
	f.c.Post(f.path(app)+"/conflicts", map[string]any{"Action": "Dismiss"}).Expect(http.StatusOK).JSON(&res)
	require.Equal(t, 1, res.Dismissed)
	require.Equal(t, []string{l.LinkID.String()}, uuidStrings(res.Unit.FromLinkID))
}
