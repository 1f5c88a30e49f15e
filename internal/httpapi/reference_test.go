package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// refFixture is two organizations, each with a Space holding a BridgeWorker and a Target. References are
// written from acme (dev and ops Spaces); other's entities are real IDs that acme must not tell apart
// from random ones.
type refFixture struct {
	env      *apitest.Env
	c        *apitest.Client
	dev, ops api.Space
	worker   api.BridgeWorker // in ops
	target   api.Target       // in ops
	other    struct {
		space  api.Space
		worker api.BridgeWorker
		target api.Target
		user   uuid.UUID // a User who is a member of other only
	}
}

func newRefFixture(t *testing.T) *refFixture {
	t.Helper()
	env := apitest.New(t)
	f := &refFixture{env: env, c: env.Client(env.Token("acme", "alice", auth.RoleAdmin))}
	f.dev = createSpace(t, f.c, map[string]any{"Slug": "dev"})
	f.ops = createSpace(t, f.c, map[string]any{"Slug": "ops"})
	f.worker, f.target = workerAndTarget(t, f.c, f.ops)
	other := env.Client(env.Token("other", "bob", auth.RoleAdmin))
	f.other.space = createSpace(t, other, map[string]any{"Slug": "ops"})
	f.other.worker, f.other.target = workerAndTarget(t, other, f.other.space)
	f.other.user = env.Principal("other", "bob", auth.RoleAdmin).UserID
	return f
}

func workerAndTarget(t *testing.T, c *apitest.Client, sp api.Space) (api.BridgeWorker, api.Target) {
	t.Helper()
	var w api.BridgeWorker
	c.Post("/api/space/"+sp.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "k8s"}).Expect(http.StatusOK).JSON(&w)
	var tg api.Target
	c.Post("/api/space/"+sp.SpaceID.String()+"/target", map[string]any{"Slug": "cluster", "ToolchainType": configdata.KubernetesYAML,
		"ProviderType": "Kubernetes", "BridgeWorkerID": w.BridgeWorkerID}).Expect(http.StatusOK).JSON(&tg)
	return w, tg
}

// requireNoSuchReference sends a write naming a random ID and then another organization's real one
// (otherID): both must be 400 Validation naming item ({id} stands for the ID sent), and the two answers
// must be identical apart from the ID the client sent itself. It returns the first answer.
func requireNoSuchReference(t *testing.T, item string, otherID uuid.UUID, send func(id uuid.UUID) *apitest.Response) api.StandardErrorResponse {
	t.Helper()
	random := uuid.New()
	a := send(random).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	b := send(otherID).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Len(t, a.Error.ErrorMetadata.Items, 1)
	require.Equal(t, strings.ReplaceAll(item, "{id}", random.String()), a.Error.ErrorMetadata.Items[0].Item)
	if !strings.Contains(item, "{id}") {
		require.NotContains(t, a.Error.Message, random.String(), "the message needs no ID: the item names the field")
	}
	require.Equal(t, withoutID(t, a, random), withoutID(t, b, otherID), "another organization's ID must look like a random one")
	return a
}

func withoutID(t *testing.T, e api.StandardErrorResponse, id uuid.UUID) string {
	t.Helper()
	b, err := json.Marshal(e)
	require.NoError(t, err)
	return strings.ReplaceAll(string(b), id.String(), "{id}")
}

// TestBridgeWorkerIDReference: a Target's BridgeWorkerID names a BridgeWorker of the organization, in
// any of its Spaces, on create, PUT, PATCH and bulk patch; a refused write changes nothing; a worker is
// not deleted while Targets name it; include=BridgeWorkerID expands it on gets and lists.
func TestBridgeWorkerIDReference(t *testing.T) {
	t.Parallel()
	f := newRefFixture(t)
	c := f.c
	targets := "/api/space/" + f.dev.SpaceID.String() + "/target"
	otherWorker := f.other.worker.BridgeWorkerID
	body := func(id any) map[string]any {
		return map[string]any{"Slug": "edge", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "Kubernetes", "BridgeWorkerID": id}
	}
	bySlug := "/api/target?" + where("Slug = 'edge'").Encode()

	// Create: refused, and nothing is created.
	requireNoSuchReference(t, "BridgeWorkerID", otherWorker, func(id uuid.UUID) *apitest.Response { return c.Post(targets, body(id)) })
	requireNoSuchReference(t, "BridgeWorkerID", otherWorker, func(id uuid.UUID) *apitest.Response { return c.Post(targets+"?dry_run=true", body(id)) })
	var list []api.ExtendedTarget
	c.Get(bySlug).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	// A worker of another Space of the organization is accepted.
	var edge api.Target
	c.Post(targets, body(f.worker.BridgeWorkerID)).Expect(http.StatusOK).JSON(&edge)
	require.Equal(t, f.worker.BridgeWorkerID, *edge.BridgeWorkerID)
	tp := targets + "/" + edge.TargetID.String()
	unchanged := func() {
		t.Helper()
		var got api.ExtendedTarget
		c.Get(tp).Expect(http.StatusOK).JSON(&got)
		require.Equal(t, f.worker.BridgeWorkerID, *got.Target.BridgeWorkerID)
		require.Equal(t, edge.Version, got.Target.Version)
	}

	// PUT, PATCH and bulk patch: refused the same way, and the Target is as it was.
	requireNoSuchReference(t, "BridgeWorkerID", otherWorker, func(id uuid.UUID) *apitest.Response {
		put := edge
		put.BridgeWorkerID = &id
		return c.Put(tp, put)
	})
	unchanged()
	requireNoSuchReference(t, "BridgeWorkerID", otherWorker, func(id uuid.UUID) *apitest.Response {
		return c.Patch(tp, map[string]any{"BridgeWorkerID": id})
	})
	unchanged()
	requireNoSuchReference(t, "BridgeWorkerID", otherWorker, func(id uuid.UUID) *apitest.Response {
		return c.Patch(bySlug, map[string]any{"BridgeWorkerID": id})
	})
	unchanged()

	// GET -> edit -> PUT keeps the worker; null clears it; a worker of the Target's own Space is fine too.
	var got api.ExtendedTarget
	c.Get(tp).Expect(http.StatusOK).JSON(&got)
	got.Target.DisplayName = "Edge"
	c.Put(tp, got.Target).Expect(http.StatusOK).JSON(&edge)
	require.Equal(t, f.worker.BridgeWorkerID, *edge.BridgeWorkerID)
	c.Patch(tp, map[string]any{"BridgeWorkerID": nil}).Expect(http.StatusOK).JSON(&edge)
	require.Nil(t, edge.BridgeWorkerID)
	var local api.BridgeWorker
	c.Post("/api/space/"+f.dev.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "local"}).Expect(http.StatusOK).JSON(&local)
	var items []api.TargetCreateOrUpdateResponse
	c.Patch(bySlug, map[string]any{"BridgeWorkerID": local.BridgeWorkerID}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Equal(t, local.BridgeWorkerID, *items[0].Target.BridgeWorkerID)

	// include=BridgeWorkerID: the worker on gets and lists (without its Secret), nothing without a worker.
	c.Post(targets, map[string]any{"Slug": "bare", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "Kubernetes"}).Expect(http.StatusOK)
	c.Get(tp + "?include=BridgeWorkerID").Expect(http.StatusOK).JSON(&got)
	require.NotNil(t, got.BridgeWorker)
	require.Equal(t, "local", got.BridgeWorker.Slug)
	require.Equal(t, local.BridgeWorkerID, got.BridgeWorker.BridgeWorkerID)
	require.Empty(t, got.BridgeWorker.Secret)
	c.Get(tp).Expect(http.StatusOK).JSON(&got)
	require.Nil(t, got.BridgeWorker, "only when included")
	c.Get("/api/target?include=BridgeWorkerID,SpaceID&order_by=Slug").Expect(http.StatusOK).JSON(&list)
	workers := map[string]string{}
	for _, e := range list {
		workers[e.Target.Slug] = ""
		if e.BridgeWorker != nil {
			workers[e.Target.Slug] = e.BridgeWorker.Slug + "@" + e.Space.Slug
		}
	}
	require.Equal(t, map[string]string{"bare": "", "cluster": "k8s@ops", "edge": "local@dev"}, workers)
	c.Get(targets + "?include=BridgeWorkerID").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 2)

	// A worker named by Targets is not deleted (409) until they name another.
	wp := "/api/space/" + f.dev.SpaceID.String() + "/bridge_worker/local"
	c.Delete(wp).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Get(wp).Expect(http.StatusOK)
	c.Patch(tp, map[string]any{"BridgeWorkerID": nil}).Expect(http.StatusOK)
	c.Delete(wp).Expect(http.StatusOK)
}

// TestSubscriptionTargetIDReference: each Subscription's TargetID names a Target of the organization, on
// create, PUT and PATCH, every bad one named by its dot path; a Target deleted since leaves its
// Subscription in place and the Channel editable.
func TestSubscriptionTargetIDReference(t *testing.T) {
	t.Parallel()
	f := newRefFixture(t)
	c := f.c
	chans := "/api/space/" + f.dev.SpaceID.String() + "/channel"
	otherTarget := f.other.target.TargetID
	subs := func(id any) []map[string]any {
		return []map[string]any{{"EventTypes": []string{"unit.updated"}}, {"EventTypes": []string{}, "TargetID": id}}
	}

	requireNoSuchReference(t, "Subscriptions.1.TargetID", otherTarget, func(id uuid.UUID) *apitest.Response {
		return c.Post(chans, map[string]any{"Slug": "bot", "Subscriptions": subs(id)})
	})
	c.Get(chans+"/bot").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// A Target of another Space of the organization is accepted.
	var ch api.Channel
	c.Post(chans, map[string]any{"Slug": "bot", "Subscriptions": subs(f.target.TargetID)}).Expect(http.StatusOK).JSON(&ch)
	require.Equal(t, f.target.TargetID, *ch.Subscriptions[1].TargetID)
	cp := chans + "/" + ch.ChannelID.String()
	unchanged := func() {
		t.Helper()
		var got api.ExtendedChannel
		c.Get(cp).Expect(http.StatusOK).JSON(&got)
		require.Equal(t, ch.Subscriptions, got.Channel.Subscriptions)
		require.Equal(t, ch.Version, got.Channel.Version)
	}

	requireNoSuchReference(t, "Subscriptions.1.TargetID", otherTarget, func(id uuid.UUID) *apitest.Response {
		put := ch
		put.Subscriptions = []api.ChannelSubscription{ch.Subscriptions[0], {EventTypes: []string{}, TargetID: &id}}
		return c.Put(cp, put)
	})
	unchanged()
	requireNoSuchReference(t, "Subscriptions.0.TargetID", otherTarget, func(id uuid.UUID) *apitest.Response {
		return c.Patch(cp, map[string]any{"Subscriptions": []map[string]any{{"EventTypes": []string{}, "TargetID": id}, {"EventTypes": []string{}, "TargetID": f.target.TargetID}}})
	})
	unchanged()
	// Every bad one is named at once.
	none := []string{}
	e := c.Patch(cp, map[string]any{"Subscriptions": []map[string]any{{"EventTypes": none, "TargetID": uuid.New()}, {"EventTypes": none}, {"EventTypes": none, "TargetID": otherTarget}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, []api.ErrorItem{{Item: "Subscriptions.0.TargetID", Description: "no such Target"}, {Item: "Subscriptions.2.TargetID", Description: "no such Target"}},
		e.Error.ErrorMetadata.Items)
	unchanged()

	// A Subscription to a Target deleted since stays, and the Channel can still be written (GET -> PUT, PATCH).
	var gone api.Target
	c.Post("/api/space/"+f.dev.SpaceID.String()+"/target", map[string]any{"Slug": "gone", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "Kubernetes"}).
		Expect(http.StatusOK).JSON(&gone)
	c.Patch(cp, map[string]any{"Subscriptions": subs(gone.TargetID)}).Expect(http.StatusOK)
	c.Delete("/api/space/" + f.dev.SpaceID.String() + "/target/" + gone.TargetID.String()).Expect(http.StatusOK)
	var got api.ExtendedChannel
	c.Get(cp).Expect(http.StatusOK).JSON(&got)
	got.Channel.DisplayName = "Bot"
	c.Put(cp, got.Channel).Expect(http.StatusOK).JSON(&ch)
	require.Equal(t, gone.TargetID, *ch.Subscriptions[1].TargetID)
	c.Patch(cp, map[string]any{"DisplayName": "Bot 2"}).Expect(http.StatusOK)
}

// TestChangeSetIDReference: a ChangeSetID (create, PUT, PATCH, bulk patch, clone) or change_set_id (data
// PUT) naming no ChangeSet of the organization is a reference to a missing entity, and nothing is written
// (TestChangeSetTenancy does this with another organization's real ChangeSet).
func TestChangeSetIDReference(t *testing.T) {
	t.Parallel()
	f := newRefFixture(t)
	c := f.c
	units := "/api/space/" + f.dev.SpaceID.String() + "/unit"
	// Another organization's Space ID: an ID of another family, as foreign as a random one.
	foreign := f.other.space.SpaceID
	bySlug := func(slug string) string { return "/api/unit?" + where("Slug = '"+slug+"'").Encode() }

	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Post(units, map[string]any{"Slug": "web", "ToolchainType": configdata.AppConfigEnv, "ChangeSetID": id})
	})
	var list []api.ExtendedUnit
	c.Get(bySlug("web")).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	var res api.UnitCreateOrUpdateResponse
	c.Post(units, map[string]any{"Slug": "web", "ToolchainType": configdata.AppConfigEnv, "ChangeSetID": nil}).Expect(http.StatusOK).JSON(&res)
	web := *res.Unit
	up := units + "/" + web.UnitID.String()
	unchanged := func() {
		t.Helper()
		var got api.ExtendedUnit
		c.Get(up).Expect(http.StatusOK).JSON(&got)
		require.Nil(t, got.Unit.ChangeSetID)
		require.Equal(t, web.Version, got.Unit.Version)
		require.Equal(t, web.HeadRevisionNum, got.Unit.HeadRevisionNum)
	}

	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		put := web
		put.ChangeSetID = &id
		return c.Put(up, put)
	})
	unchanged()
	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Patch(up, map[string]any{"ChangeSetID": id})
	})
	unchanged()
	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Patch(bySlug("web"), map[string]any{"ChangeSetID": id})
	})
	unchanged()
	requireNoSuchReference(t, "change_set_id", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Do(http.MethodPut, up+"/data?"+url.Values{"change_set_id": {id.String()}}.Encode(), apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")})
	})
	unchanged()
	clone := bySlug("web") + "&name_prefixes=copy-"
	requireNoSuchReference(t, "ChangeSetID", foreign, func(id uuid.UUID) *apitest.Response {
		return c.Post(clone, map[string]any{"ChangeSetID": id})
	})
	c.Get(bySlug("copy-web")).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	// Without a ChangeSet every write goes through.
	c.Patch(up, map[string]any{"ChangeSetID": nil, "DisplayName": "Web"}).Expect(http.StatusOK)
	c.Do(http.MethodPut, up+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("A=1\n")}).Expect(http.StatusOK)
	var items []api.UnitCreateOrUpdateResponse
	c.Post(clone, map[string]any{"ChangeSetID": nil}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Nil(t, items[0].Unit.ChangeSetID)
}

// TestUnitTargetIDAndMoveReferences: the existing Unit TargetID and move ToSpaceID checks answer another
// organization's ID exactly like a random one.
func TestUnitTargetIDAndMoveReferences(t *testing.T) {
	t.Parallel()
	f := newRefFixture(t)
	c := f.c
	units := "/api/space/" + f.ops.SpaceID.String() + "/unit"
	requireNoSuchReference(t, "TargetID", f.other.target.TargetID, func(id uuid.UUID) *apitest.Response {
		return c.Post(units, map[string]any{"Slug": "web", "ToolchainType": configdata.KubernetesYAML, "TargetID": id})
	})
	var res api.UnitCreateOrUpdateResponse
	c.Post(units, map[string]any{"Slug": "web", "ToolchainType": configdata.KubernetesYAML, "TargetID": f.target.TargetID}).Expect(http.StatusOK).JSON(&res)
	requireNoSuchReference(t, "TargetID", f.other.target.TargetID, func(id uuid.UUID) *apitest.Response {
		return c.Patch(units+"/"+res.Unit.UnitID.String(), map[string]any{"TargetID": id})
	})
	requireNoSuchReference(t, "ToSpaceID", f.other.space.SpaceID, func(id uuid.UUID) *apitest.Response {
		return c.Post("/api/unit/move?"+where("Slug = 'web'").Encode(), map[string]any{"ToSpaceID": id})
	})
	var got api.ExtendedUnit
	c.Get(units + "/" + res.Unit.UnitID.String()).Expect(http.StatusOK).JSON(&got)
	require.Equal(t, f.target.TargetID, *got.Unit.TargetID)
	require.Equal(t, f.ops.SpaceID, got.Unit.SpaceID)
}

// TestPermissionsGranteeReference: Permissions grant only to members of the organization (create, PUT,
// PATCH, across families); Users already granted pass again, even after leaving.
func TestPermissionsGranteeReference(t *testing.T) {
	t.Parallel()
	f := newRefFixture(t)
	c := f.c
	member := f.env.Principal("acme", "vic", auth.RoleViewer).UserID
	grant := func(id uuid.UUID) map[string]any {
		return map[string]any{"Edit": map[string]any{"UserIDs": map[string]bool{id.String(): true}}}
	}
	item := "Permissions.Edit.UserIDs.{id}"

	// Create, in each family that has Permissions; nothing is created.
	creates := map[string]map[string]any{
		"/api/space": {"Slug": "granted"},
		"/api/space/" + f.dev.SpaceID.String() + "/unit":          {"Slug": "granted", "ToolchainType": configdata.AppConfigEnv},
		"/api/space/" + f.dev.SpaceID.String() + "/target":        {"Slug": "granted", "ToolchainType": configdata.AppConfigEnv, "ProviderType": "Kubernetes"},
		"/api/space/" + f.dev.SpaceID.String() + "/channel":       {"Slug": "granted"},
		"/api/space/" + f.dev.SpaceID.String() + "/bridge_worker": {"Slug": "granted"},
		"/api/service_account":                                    {"Slug": "granted"},
	}
	for path, body := range creates {
		requireNoSuchReference(t, item, f.other.user, func(id uuid.UUID) *apitest.Response {
			b := map[string]any{"Permissions": grant(id)}
			for k, v := range body {
				b[k] = v
			}
			return c.Post(path, b)
		})
		var list []map[string]any
		c.Get(path + "?" + where("Slug = 'granted'").Encode()).Expect(http.StatusOK).JSON(&list)
		require.Empty(t, list, path)
		b := map[string]any{"Permissions": grant(member)}
		for k, v := range body {
			b[k] = v
		}
		c.Post(path, b).Expect(http.StatusOK)
	}

	// PUT and PATCH (a Space): refused and unchanged; members and Users already granted pass.
	sp := "/api/space/" + f.dev.SpaceID.String()
	var cur api.ExtendedSpace
	c.Get(sp).Expect(http.StatusOK).JSON(&cur)
	requireNoSuchReference(t, item, f.other.user, func(id uuid.UUID) *apitest.Response {
		put := cur.Space
		put.Permissions = api.Permissions{"Edit": {UserIDs: map[string]bool{id.String(): true}, GroupIDs: map[string]bool{}}}
		return c.Put(sp, put)
	})
	requireNoSuchReference(t, item, f.other.user, func(id uuid.UUID) *apitest.Response {
		return c.Patch(sp, map[string]any{"Permissions": grant(id)})
	})
	var after api.ExtendedSpace
	c.Get(sp).Expect(http.StatusOK).JSON(&after)
	require.Equal(t, cur.Space.Version, after.Space.Version)
	require.Empty(t, after.Space.Permissions)
	var upd api.Space
	c.Patch(sp, map[string]any{"Permissions": grant(member)}).Expect(http.StatusOK).JSON(&upd)
	require.True(t, upd.Permissions["Edit"].UserIDs[member.String()])

	// A member who leaves keeps a grant that grants nothing; the Space stays writable without touching it.
	c.Delete("/api/organization/" + cur.Space.OrganizationID.String() + "/organization_member/" + member.String()).Expect(http.StatusOK)
	c.Get(sp).Expect(http.StatusOK).JSON(&after)
	after.Space.DisplayName = "Dev"
	c.Put(sp, after.Space).Expect(http.StatusOK)
	c.Patch(sp, map[string]any{"Permissions": map[string]any{"View": map[string]any{"UserIDs": map[string]bool{member.String(): true}}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}
