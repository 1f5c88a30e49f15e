package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// upgradeFixture is an upstream Unit in Space dev and its clone in Space prod.
type upgradeFixture struct {
	functionFixture
	prod            api.Space
	upstream, clone api.Unit
}

const upgradeBase = "replicas: 1\nimage: v1\nname: web\nregion: us\nextra: x\nextra2: y\n"

func newUpgradeFixture(t *testing.T) upgradeFixture {
	t.Helper()
	f := upgradeFixture{functionFixture: newFunctionFixture(t)}
	f.prod = createSpace(t, f.c, map[string]any{"Slug": "prod"})
	f.upstream = f.unitWithData(t, "app", configdata.AppConfigYAML, upgradeBase)
	f.c.Post("/api/unit?"+url.Values{"where": {"Slug = 'app'"}, "where_space": {"Slug = 'prod'"}}.Encode(), map[string]any{}).Expect(http.StatusOK)
	var units []api.ExtendedUnit
	f.c.Get("/api/space/" + f.prod.SpaceID.String() + "/unit").Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
	f.clone = units[0].Unit
	require.Equal(t, f.upstream.UnitID, *f.clone.UpstreamUnitID)
	require.Equal(t, int64(1), f.clone.UpstreamRevisionNum)
	return f
}

func (f upgradeFixture) clonePath() string {
	return "/api/space/" + f.prod.SpaceID.String() + "/unit/" + f.clone.UnitID.String()
}

// putUp writes the upstream's data.
func (f upgradeFixture) putUp(t *testing.T, data string) {
	t.Helper()
	f.put(t, f.upstream, "text/plain", data).Expect(http.StatusOK)
}

func (f upgradeFixture) putClone(t *testing.T, data string, query ...string) {
	t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(query); i += 2 {
		q.Set(query[i], query[i+1])
	}
	f.c.Do(http.MethodPut, f.clonePath()+"/data?"+q.Encode(), apitest.Raw{ContentType: "text/plain", Data: []byte(data)}).Expect(http.StatusOK)
}

// upgrade PATCHes the clone with upgrade=true and the query given.
func (f upgradeFixture) upgrade(t *testing.T, query ...string) api.UnitWriteResponse {
	t.Helper()
	q := url.Values{"upgrade": {"true"}, "include": {"ConfigData"}}
	for i := 0; i+1 < len(query); i += 2 {
		q.Set(query[i], query[i+1])
	}
	var out api.UnitWriteResponse
	f.c.Patch(f.clonePath()+"?"+q.Encode(), map[string]any{}).Expect(http.StatusOK).JSON(&out)
	return out
}

func (f upgradeFixture) cloneNow(t *testing.T) api.Unit {
	t.Helper()
	var got api.ExtendedUnit
	f.c.Get(f.clonePath()).Expect(http.StatusOK).JSON(&got)
	return got.Unit
}

func (f upgradeFixture) cloneData(t *testing.T) map[string]any {
	t.Helper()
	data := f.c.Get(f.clonePath() + "/data").Expect(http.StatusOK).Body
	return leavesOf(t, data)
}

func leavesOf(t *testing.T, data []byte) map[string]any {
	t.Helper()
	doc, err := configdata.Parse(configdata.AppConfigYAML, data)
	require.NoError(t, err)
	out := map[string]any{}
	for _, l := range doc.Leaves() {
		out[l.Path] = l.Value
	}
	return out
}

func (f upgradeFixture) headRevision(t *testing.T) api.Revision {
	t.Helper()
	var revs []api.ExtendedRevision
	f.c.Get(f.clonePath() + "/revision?" + url.Values{"order_by": {"DESC:RevisionNum"}, "limit": {"1"}}.Encode()).Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 1)
	return revs[0].Revision
}

func (f upgradeFixture) resolve(t *testing.T, status int, body map[string]any, query ...string) api.UnitConflictsResponse {
	t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(query); i += 2 {
		q.Set(query[i], query[i+1])
	}
	var out api.UnitConflictsResponse
	resp := f.c.Post(f.clonePath()+"/conflicts?"+q.Encode(), body).Expect(status)
	if status == http.StatusOK {
		resp.JSON(&out)
	}
	return out
}

func reasons(cs []api.MutationConflict) map[string]api.MutationConflictReason {
	out := map[string]api.MutationConflictReason{}
	for _, c := range cs {
		out[c.Path] = c.Reason
	}
	return out
}

// TestUpgradeMergesUpstream: an upstream change lands in the clone, a downstream override survives, a
// change on both sides is an UnresolvedPath conflict on the Unit and the Revision (the local value kept);
// the Mutation records the merge; conflicts are applied and dismissed (dry runs and selections too);
// upgrading again starts from the new base and leaves no stale conflicts.
func TestUpgradeMergesUpstream(t *testing.T) {
	t.Parallel()
	f := newUpgradeFixture(t)
	f.putClone(t, "replicas: 5\nimage: v1\nname: local\nregion: eu\nextra: x\nextra2: y\n")
	f.putUp(t, "replicas: 1\nimage: v2\nname: upstream\nregion: ap\nextra: x\nextra2: y\n")

	// A dry run answers the merge and stores nothing.
	dry := f.upgrade(t, "dry_run", "true")
	require.Contains(t, *dry.ConfigData, "image: v2")
	require.Len(t, dry.Unit.Conflicts, 2)
	require.Equal(t, int64(2), f.cloneNow(t).HeadRevisionNum)
	require.Empty(t, f.cloneNow(t).Conflicts)

	res := f.upgrade(t)
	require.Equal(t, int64(3), res.Unit.HeadRevisionNum)
	require.Equal(t, int64(2), res.Unit.UpstreamRevisionNum)
	data := f.cloneData(t)
	require.Equal(t, "v2", data["image"], "the upstream change lands")
	require.Equal(t, int64(5), data["replicas"], "the downstream override survives")
	require.Equal(t, "local", data["name"])
	require.Equal(t, "eu", data["region"])
	require.Equal(t, map[string]api.MutationConflictReason{"name": api.UnresolvedPath, "region": api.UnresolvedPath}, reasons(res.Unit.Conflicts))
	for _, c := range res.Unit.Conflicts {
		require.Equal(t, f.clone.UnitID, c.UnitID)
		require.Equal(t, f.upstream.UnitID, *c.MergeSourceID)
		require.Nil(t, c.LinkID)
		require.Equal(t, int64(2), c.MergeEndRevisionNum)
		if c.Path == "name" {
			require.Equal(t, `"web"`, *c.BaseValue)
			require.Equal(t, `"upstream"`, *c.UpstreamValue)
			require.Equal(t, `"local"`, *c.LocalValue)
		}
	}
	rev := f.headRevision(t)
	require.Equal(t, "Upgrade", rev.Source)
	require.Len(t, rev.Conflicts, 2)

	// The Mutation records the merge, and include=MergeSourceID expands the upstream Unit.
	var muts []api.ExtendedMutation
	f.c.Get(f.clonePath() + "/mutation?" + url.Values{"where": {"RevisionNum = 3"}, "include": {"MergeSourceID"}}.Encode()).
		Expect(http.StatusOK).JSON(&muts)
	require.Len(t, muts, 1)
	require.Equal(t, f.upstream.UnitID, *muts[0].Mutation.MergeSourceID)
	require.Equal(t, int64(1), muts[0].Mutation.MergeBaseRevisionNum)
	require.Equal(t, int64(2), muts[0].Mutation.MergeEndRevisionNum)
	require.Nil(t, muts[0].Mutation.LinkID)
	require.NotNil(t, muts[0].MergeSource)
	require.Equal(t, f.upstream.UnitID, muts[0].MergeSource.UnitID)

	// Select must pick something; Action must be known.
	e := f.c.Post(f.clonePath()+"/conflicts", map[string]any{"Action": "Apply", "Select": []any{map[string]any{"Path": "nope"}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "Select", e.Error.ErrorMetadata.Items[0].Item)
	f.c.Post(f.clonePath()+"/conflicts", map[string]any{"Action": "Merge"}).Expect(http.StatusBadRequest)

	// A dry-run Apply answers and stores nothing.
	out := f.resolve(t, http.StatusOK, map[string]any{"Action": "Apply", "DryRun": true, "Select": []any{map[string]any{"Path": "region"}}})
	require.Equal(t, 1, out.Applied)
	require.Equal(t, []string{"name"}, paths(out.Conflicts))
	require.Equal(t, "eu", f.cloneData(t)["region"])
	require.Len(t, f.cloneNow(t).Conflicts, 2)

	// Apply by Path and Reason: the upstream value is written as a new Revision.
	out = f.resolve(t, http.StatusOK, map[string]any{"Action": "Apply", "Select": []any{map[string]any{"Path": "region", "Reason": "UnresolvedPath"}}})
	require.Equal(t, 1, out.Applied)
	require.Equal(t, []string{"name"}, paths(out.Conflicts))
	require.Equal(t, int64(4), out.Unit.HeadRevisionNum)
	require.Equal(t, "ap", f.cloneData(t)["region"])
	require.Equal(t, "ConflictApply", f.headRevision(t).Source)

	// Dismiss keeps the local value: a new Version, no Revision.
	before := f.cloneNow(t)
	out = f.resolve(t, http.StatusOK, map[string]any{"Action": "Dismiss"})
	require.Equal(t, 1, out.Dismissed)
	require.Empty(t, out.Conflicts)
	require.Equal(t, before.HeadRevisionNum, out.Unit.HeadRevisionNum)
	require.Equal(t, before.Version+1, out.Unit.Version)
	require.Equal(t, "local", f.cloneData(t)["name"])

	// Upgrading again starts from the new base: only the new upstream change lands, nothing conflicts.
	f.putUp(t, "replicas: 1\nimage: v3\nname: upstream\nregion: ap\nextra: x\nextra2: y\n")
	res = f.upgrade(t)
	require.Equal(t, int64(3), res.Unit.UpstreamRevisionNum)
	require.Empty(t, res.Unit.Conflicts)
	require.Equal(t, "v3", f.cloneData(t)["image"])
	require.Equal(t, "local", f.cloneData(t)["name"])

	// An upgrade with nothing new upstream makes no Revision.
	head := f.cloneNow(t).HeadRevisionNum
	res = f.upgrade(t)
	require.Equal(t, head, res.Unit.HeadRevisionNum)
	require.Contains(t, *res.ConfigData, "image: v3", "include answers the data also when the upgrade changed none")

	// A later upgrade of the same source replaces its outstanding conflicts: none stay stale.
	f.putUp(t, "replicas: 1\nimage: v3\nname: again\nregion: ap\nextra: x\nextra2: y\n")
	res = f.upgrade(t)
	require.Equal(t, []string{"name"}, paths(res.Unit.Conflicts))
	f.putUp(t, "replicas: 1\nimage: v4\nname: again\nregion: ap\nextra: x\nextra2: y\n")
	res = f.upgrade(t)
	require.Empty(t, res.Unit.Conflicts)
	require.Equal(t, int64(5), res.Unit.UpstreamRevisionNum)
}

func paths(cs []api.MutationConflict) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

// TestUpgradeProtectionGuardsAndSubtraction: a protected path survives an upgrade (ProtectedPath); a guarded
// one is withheld (Guarded) unless the clearance clears it, and its conflict is applied only with clearance;
// deletions upstream are Subtracted conflicts unless subtraction is enabled.
func TestUpgradeProtectionGuardsAndSubtraction(t *testing.T) {
	t.Parallel()
	f := newUpgradeFixture(t)
	f.c.Post(f.clonePath()+"/protection", map[string]any{"ResourceProtection": []any{map[string]any{"Protected": map[string]bool{"image": true}}}}).
		Expect(http.StatusOK)
	f.c.Post(f.clonePath()+"/guard", map[string]any{"ResourceGuards": []any{map[string]any{"Set": map[string]any{"replicas": map[string]string{"owner": "sre"}}}}}).
		Expect(http.StatusOK)
	f.putUp(t, "replicas: 2\nimage: v2\nname: web2\nregion: us\nextra2: y\n")
	res := f.upgrade(t)
	data := f.cloneData(t)
	require.Equal(t, "v1", data["image"], "a protected path is never overwritten")
	require.Equal(t, int64(1), data["replicas"], "a guarded path is withheld")
	require.Equal(t, "web2", data["name"])
	require.Equal(t, "x", data["extra"], "no subtraction without merge_enable_subtraction")
	require.Equal(t, map[string]api.MutationConflictReason{"image": api.ProtectedPath, "replicas": api.Guarded, "extra": api.Subtracted},
		reasons(res.Unit.Conflicts))
	for _, c := range res.Unit.Conflicts {
		if c.Path == "replicas" {
			require.Equal(t, map[string]string{"owner": "sre"}, c.Guards)
		}
		if c.Path == "extra" {
			require.Nil(t, c.UpstreamValue)
		}
	}

	// Applying the Guarded conflict needs the clearance: without it, it stays outstanding.
	out := f.resolve(t, http.StatusOK, map[string]any{"Action": "Apply", "Select": []any{map[string]any{"Reason": "Guarded"}}})
	require.Zero(t, out.Applied)
	require.Contains(t, paths(out.Conflicts), "replicas")
	clearance := `[{"Key": "owner", "Operator": "In", "Values": ["sre"]}]`
	out = f.resolve(t, http.StatusOK, map[string]any{"Action": "Apply", "Select": []any{map[string]any{"Reason": "Guarded"}}}, "clearance", clearance)
	require.Equal(t, 1, out.Applied)
	require.NotContains(t, paths(out.Conflicts), "replicas")
	require.Equal(t, int64(2), f.cloneData(t)["replicas"])
	// Applying a Subtracted conflict deletes the path.
	f.resolve(t, http.StatusOK, map[string]any{"Action": "Apply", "Select": []any{map[string]any{"Path": "extra"}}})
	require.NotContains(t, f.cloneData(t), "extra")

	// With the clearance an upgrade writes the guarded path; with subtraction it deletes.
	f.putUp(t, "replicas: 3\nimage: v2\nname: web2\nregion: us\n")
	res = f.upgrade(t, "clearance", clearance, "merge_enable_subtraction", "true")
	data = f.cloneData(t)
	require.Equal(t, int64(3), data["replicas"])
	require.NotContains(t, data, "extra2")
	require.Equal(t, map[string]api.MutationConflictReason{}, reasons(res.Unit.Conflicts))
}

// TestUpgradeRefusals: not a clone, restore with upgrade, a viewer, another organization; bulk upgrades pick
// Units by where (a Unit that is not a clone fails alone: 207).
func TestUpgradeRefusals(t *testing.T) {
	t.Parallel()
	f := newUpgradeFixture(t)
	e := f.c.Patch(f.path(f.upstream)+"?upgrade=true", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "upgrade", e.Error.ErrorMetadata.Items[0].Item)
	e = f.c.Patch(f.clonePath()+"?upgrade=true&restore=1", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "upgrade", e.Error.ErrorMetadata.Items[0].Item)
	viewer := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	viewer.Patch(f.clonePath()+"?upgrade=true", map[string]any{}).Expect(http.StatusForbidden)
	viewer.Post(f.clonePath()+"/conflicts", map[string]any{"Action": "Dismiss"}).Expect(http.StatusForbidden)
	// A guest who may edit the clone but not view its upstream cannot upgrade it.
	gus := f.env.Principal("acme", "gus", auth.RoleGuest).UserID.String()
	grant := map[string]any{"UserIDs": map[string]bool{gus: true}}
	f.c.Patch("/api/space/"+f.prod.SpaceID.String(), map[string]any{"Permissions": map[string]any{"View": grant, "Edit": grant}}).Expect(http.StatusOK)
	guest := f.env.Client(f.env.Token("acme", "gus", auth.RoleGuest))
	guest.Get(f.clonePath()).Expect(http.StatusOK)
	e = guest.Patch(f.clonePath()+"?upgrade=true", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "upgrade", e.Error.ErrorMetadata.Items[0].Item)
	other := f.env.Client(f.env.Token("globex", "gina", auth.RoleAdmin))
	other.Patch(f.clonePath()+"?upgrade=true", map[string]any{}).Expect(http.StatusNotFound)
	other.Post(f.clonePath()+"/conflicts", map[string]any{"Action": "Dismiss"}).Expect(http.StatusNotFound)

	// PUT with upgrade: the field change and the upgrade are one write.
	f.putUp(t, "replicas: 1\nimage: v2\nname: web\nregion: us\nextra: x\nextra2: y\n")
	cur := f.cloneNow(t)
	var put api.UnitWriteResponse
	f.c.Put(f.clonePath()+"?upgrade=true", map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigYAML, "DisplayName": "App",
		"Version": cur.Version}).Expect(http.StatusOK).JSON(&put)
	require.Equal(t, "App", put.Unit.DisplayName)
	require.Equal(t, cur.Version+1, put.Unit.Version)
	require.Equal(t, "v2", f.cloneData(t)["image"])

	// Bulk: the clone is upgraded, the upstream (no clone) fails alone.
	f.putUp(t, "replicas: 1\nimage: v3\nname: web\nregion: us\nextra: x\nextra2: y\n")
	var items []api.UnitCreateOrUpdateResponse
	f.c.Patch("/api/unit?"+url.Values{"upgrade": {"true"}, "where": {"Slug = 'app'"}}.Encode(), map[string]any{}).
		Expect(http.StatusMultiStatus).JSON(&items)
	require.Len(t, items, 2)
	require.Equal(t, "v3", f.cloneData(t)["image"])
	f.putUp(t, "replicas: 1\nimage: v4\nname: web\nregion: us\nextra: x\nextra2: y\n")
	f.c.Patch("/api/unit?"+url.Values{"upgrade": {"true"}, "where": {"Slug = 'app' AND SpaceID = '" + f.prod.SpaceID.String() + "'"}}.Encode(),
		map[string]any{}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Equal(t, int64(4), items[0].Unit.UpstreamRevisionNum)
	require.Equal(t, "v4", f.cloneData(t)["image"])
}

// TestDataWriteProtectAndGuards: a data PUT with protect and guards records them on the paths it changes,
// as mutation_sources shows; a PATCH with restore does too.
func TestDataWriteProtectAndGuards(t *testing.T) {
	t.Parallel()
	f := newUpgradeFixture(t)
	f.putClone(t, "replicas: 7\nimage: v1\nname: web\nregion: us\nextra: x\nextra2: y\n", "protect", "true", "guards", `{"team": "a"}`)
	var sources api.MutationSourcesResponse
	f.c.Get(f.clonePath() + "/mutation_sources").Expect(http.StatusOK).JSON(&sources)
	by := map[string]api.MutationSource{}
	for _, s := range sources.Sources {
		by[s.Path] = s
	}
	require.True(t, by["replicas"].Protected)
	require.Equal(t, map[string]string{"team": "a"}, by["replicas"].Guards)
	require.False(t, by["image"].Protected)
	require.Empty(t, by["image"].Guards)
	f.c.Do(http.MethodPut, f.clonePath()+"/data?guards=nope", apitest.Raw{ContentType: "text/plain", Data: []byte("a: 1\n")}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// An invocation with protect alone (no guards) records protection too.
	f.invoke(t, url.Values{"where": {"Slug = 'app'"}, "protect": {"true"}}, http.StatusOK, invocation("set-value", "region", "eu"))
	f.c.Get(f.path(f.upstream) + "/mutation_sources").Expect(http.StatusOK).JSON(&sources)
	protected := map[string]bool{}
	for _, s := range sources.Sources {
		protected[s.Path] = s.Protected
	}
	require.Equal(t, map[string]bool{"replicas": false, "image": false, "name": false, "region": true, "extra": false, "extra2": false}, protected)

	// The protected path survives an upgrade: changed on both sides, it is a ProtectedPath conflict.
	f.putUp(t, "replicas: 2\nimage: v2\nname: web\nregion: us\nextra: x\nextra2: y\n")
	res := f.upgrade(t)
	require.Equal(t, map[string]api.MutationConflictReason{"replicas": api.ProtectedPath}, reasons(res.Unit.Conflicts))

	// A restore with protect protects what it changes.
	f.c.Patch(f.clonePath()+"?restore=1&protect=true&clearance="+url.QueryEscape(`[{"Key": "team", "Operator": "Exists"}]`), map[string]any{}).
		Expect(http.StatusOK)
	f.c.Get(f.clonePath() + "/mutation_sources").Expect(http.StatusOK).JSON(&sources)
	for _, s := range sources.Sources {
		if s.Path == "image" {
			require.True(t, s.Protected)
		}
	}
}

// TestUpgradeDeleteShadowed: a path the clone deleted stays deleted when upstream changes it
// (DeleteShadowed), and applying the conflict writes it back.
func TestUpgradeDeleteShadowed(t *testing.T) {
	t.Parallel()
	f := newUpgradeFixture(t)
	f.putClone(t, "replicas: 1\nimage: v1\nname: web\nregion: us\nextra: x\n")
	f.putUp(t, "replicas: 1\nimage: v1\nname: web\nregion: us\nextra: x\nextra2: z\nadded: new\n")
	res := f.upgrade(t)
	require.Equal(t, map[string]api.MutationConflictReason{"extra2": api.DeleteShadowed}, reasons(res.Unit.Conflicts))
	c := res.Unit.Conflicts[0]
	require.Nil(t, c.LocalValue)
	require.Equal(t, `"y"`, *c.BaseValue)
	data := f.cloneData(t)
	require.NotContains(t, data, "extra2")
	require.Equal(t, "new", data["added"])
	out := f.resolve(t, http.StatusOK, map[string]any{"Action": "Apply"})
	require.Equal(t, 1, out.Applied)
	require.Equal(t, "z", f.cloneData(t)["extra2"])
	require.Empty(t, f.cloneNow(t).Conflicts)
}
