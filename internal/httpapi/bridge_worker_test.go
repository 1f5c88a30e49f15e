package httpapi_test

import (
	"net/http"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

func TestBridgeWorkers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "ops"})
	workers := "/api/space/" + sp.SpaceID.String() + "/bridge_worker"

	// The Secret is shown once, in the create response; the bot User is a viewer by default (a leaked Secret cannot write).
	var w api.BridgeWorker
	c.Post(workers, map[string]any{"Slug": "k8s", "DisplayName": "Kubernetes", "Labels": map[string]string{"env": "prod"}}).Expect(http.StatusOK).JSON(&w)
	require.NotEmpty(t, w.Secret)
	require.Equal(t, api.OrgRole("viewer"), w.OrgRole)
	// Its bot User's membership is the worker's: it is not removed on its own.
	c.Delete("/api/organization/"+w.OrganizationID.String()+"/organization_member/"+w.UserID.String()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Equal(t, "Disconnected", w.Condition)
	require.Nil(t, w.LastSeenAt)
	require.NotEqual(t, uuid.Nil, w.UserID)
	require.Equal(t, "BridgeWorker", w.EntityType)
	c.Post(workers, map[string]any{"Slug": "k8s"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	var again api.BridgeWorker
	c.Post(workers+"?allow_exists=true", map[string]any{"Slug": "k8s"}).Expect(http.StatusOK).JSON(&again)
	require.Equal(t, w.BridgeWorkerID, again.BridgeWorkerID)
	require.Empty(t, again.Secret, "an existing worker's Secret is never shown again")
	var dry api.BridgeWorker
	c.Post(workers+"?dry_run=true", map[string]any{"Slug": "ghost"}).Expect(http.StatusOK).JSON(&dry)
	c.Get(workers+"/ghost").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Get by ID or Slug: no Secret; GET -> edit -> PUT; PATCH.
	var got api.ExtendedBridgeWorker
	c.Get(workers + "/k8s?include=SpaceID,UserID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, w.BridgeWorkerID, got.BridgeWorker.BridgeWorkerID)
	require.Empty(t, got.BridgeWorker.Secret)
	require.Equal(t, "ops", got.Space.Slug)
	require.Equal(t, w.UserID, got.User.UserID)
	got.BridgeWorker.DisplayName = "K8s"
	var upd api.BridgeWorker
	c.Put(workers+"/"+w.BridgeWorkerID.String(), got.BridgeWorker).Expect(http.StatusOK).JSON(&upd)
	require.Equal(t, "K8s", upd.DisplayName)
	require.Empty(t, upd.Secret)
	c.Put(workers+"/k8s", got.BridgeWorker).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Put(workers+"/k8s", map[string]any{"Slug": "k8s"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	var patched api.BridgeWorker
	c.Patch(workers+"/k8s", map[string]any{"Labels": map[string]any{"env": nil, "team": "infra"}, "OrgRole": "viewer"}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, map[string]string{"team": "infra"}, map[string]string(patched.Labels))
	require.Equal(t, api.OrgRole("viewer"), patched.OrgRole)

	// Lists: all, by Space, filtered.
	var list []api.ExtendedBridgeWorker
	c.Get("/api/bridge_worker").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Empty(t, list[0].BridgeWorker.Secret)
	c.Get(workers + "?" + where("OrgRole = 'viewer' AND Labels.team = 'infra'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get(workers + "?" + where("DisplayName = 'nope'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	c.Get(workers + "?order_by=Slug&select=Slug").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)

	// Permissions: viewers read only; members create but neither grant stronger roles nor set Permissions.
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Get(workers + "/k8s").Expect(http.StatusOK)
	viewer.Patch(workers+"/k8s", map[string]any{"DisplayName": "x"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Post(workers, map[string]any{"Slug": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	viewer.Delete(workers+"/k8s").ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member := env.Client(env.Token("acme", "mo", auth.RoleMember))
	member.Post(workers, map[string]any{"Slug": "strong", "OrgRole": "admin"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Post(workers, map[string]any{"Slug": "granted", "Permissions": map[string]any{"View": map[string]any{"UserIDs": map[string]bool{uuid.NewString(): true}}}}).
		ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	member.Post(workers, map[string]any{"Slug": "mine"}).Expect(http.StatusOK)
	member.Patch(workers+"/k8s", map[string]any{"Permissions": map[string]any{"Edit": map[string]any{"UserIDs": map[string]bool{uuid.NewString(): true}}}}).
		ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	c.Post(workers, map[string]any{"Slug": "bad", "OrgRole": "root"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Other organizations see nothing.
	other := env.Client(env.Token("other", "bob", auth.RoleAdmin))
	other.Get(workers+"/k8s").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Get("/api/bridge_worker").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)

	// DeleteGates hold a delete; deleting takes the bot User (and so its tokens) with it.
	tok := workerToken(t, env, w.BridgeWorkerID, w.Secret)
	c.Patch(workers+"/k8s", map[string]any{"DeleteGates": map[string]bool{"keep": true}}).Expect(http.StatusOK)
	c.Delete(workers+"/k8s").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(workers+"/k8s", map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(workers + "/k8s").Expect(http.StatusOK)
	c.Get(workers+"/k8s").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	env.Client(tok).Get("/api/me").ExpectError(http.StatusUnauthorized, api.ErrorTypeAuthentication)
	status, _ := workerSignIn(t, env, map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": w.Secret})
	require.Equal(t, http.StatusUnauthorized, status)
}

// workerSignIn posts credentials to /auth/worker as JSON.
func workerSignIn(t testing.TB, env *apitest.Env, body map[string]string) (int, map[string]any) {
	t.Helper()
	resp := env.Anonymous().Post("/auth/worker", body)
	return resp.Status, resp.Map()
}

func workerToken(t testing.TB, env *apitest.Env, id uuid.UUID, secret string) string {
	t.Helper()
	status, body := workerSignIn(t, env, map[string]string{"WorkerID": id.String(), "Secret": secret})
	require.Equal(t, http.StatusOK, status, body)
	return body["access_token"].(string)
}

func TestWorkerSignIn(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	var w api.BridgeWorker
	admin.Post("/api/space/"+sp.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "k8s"}).Expect(http.StatusOK).JSON(&w)

	status, body := workerSignIn(t, env, map[string]string{"WorkerID": w.BridgeWorkerID.String(), "Secret": w.Secret})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "Bearer", body["token_type"])
	require.Equal(t, w.OrganizationID.String(), body["organization_id"])
	require.Equal(t, "urn:ietf:params:oauth:token-type:access_token", body["issued_token_type"])
	require.InDelta(t, 600, body["expires_in"], 5, "worker tokens are short-lived")
	var me api.OrganizationMember
	env.Client(body["access_token"].(string)).Get("/api/me").Expect(http.StatusOK).JSON(&me)
	require.Equal(t, w.UserID, me.UserID)

	// Form-encoded works too.
	form := url.Values{"WorkerID": {w.BridgeWorkerID.String()}, "Secret": {w.Secret}}
	resp := env.Anonymous().Post("/auth/worker", apitest.Raw{ContentType: "application/x-www-form-urlencoded", Data: []byte(form.Encode())})
	require.Equal(t, http.StatusOK, resp.Status)

	// The reference client's names work as well, as JSON and as a form.
	status, _ = workerSignIn(t, env, map[string]string{"worker_id": w.BridgeWorkerID.String(), "worker_secret": w.Secret})
	require.Equal(t, http.StatusOK, status)
	form = url.Values{"worker_id": {w.BridgeWorkerID.String()}, "worker_secret": {w.Secret}}
	resp = env.Anonymous().Post("/auth/worker", apitest.Raw{ContentType: "application/x-www-form-urlencoded", Data: []byte(form.Encode())})
	require.Equal(t, http.StatusOK, resp.Status)

	// Wrong secret and unknown worker are the same invalid_client 401; malformed bodies are invalid_request.
	for _, creds := range []map[string]string{
		{"WorkerID": w.BridgeWorkerID.String(), "Secret": w.Secret + "x"},
		{"WorkerID": uuid.NewString(), "Secret": w.Secret},
	} {
		status, body = workerSignIn(t, env, creds)
		require.Equal(t, http.StatusUnauthorized, status)
		require.Equal(t, "invalid_client", body["error"])
		require.NotEmpty(t, body["error_description"])
	}
	for _, creds := range []map[string]string{{"WorkerID": "not-a-uuid", "Secret": "s"}, {"WorkerID": w.BridgeWorkerID.String()}} {
		status, body = workerSignIn(t, env, creds)
		require.Equal(t, http.StatusBadRequest, status)
		require.Equal(t, "invalid_request", body["error"])
	}
	resp = env.Anonymous().Post("/auth/worker", apitest.Raw{ContentType: "application/json", Data: []byte("{")})
	require.Equal(t, http.StatusBadRequest, resp.Status)
	require.Equal(t, "invalid_request", resp.Map()["error"])
}

// workerFixture is a Space with a BridgeWorker, a client holding the worker's /auth/worker token, and an
// admin who makes events.
type workerFixture struct {
	env    *apitest.Env
	admin  *apitest.Client
	worker *apitest.Client
	space  api.Space
	bw     api.BridgeWorker
	base   string // /api/space/{space}/bridge_worker/{worker}
	token  string // the worker's
}

func newWorkerFixture(t *testing.T, env *apitest.Env) *workerFixture {
	t.Helper()
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	var w api.BridgeWorker
	admin.Post("/api/space/"+sp.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "consumer"}).Expect(http.StatusOK).JSON(&w)
	token := workerToken(t, env, w.BridgeWorkerID, w.Secret)
	return &workerFixture{env: env, admin: admin, worker: env.Client(token), space: sp, bw: w, token: token,
		base: "/api/space/" + sp.SpaceID.String() + "/bridge_worker/" + w.BridgeWorkerID.String()}
}

func (f *workerFixture) poll(t *testing.T, c *apitest.Client, name string, body map[string]any) []api.EventLogEntry {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	if _, ok := body["TimeoutSeconds"]; !ok {
		body["TimeoutSeconds"] = 0
	}
	var out []api.EventLogEntry
	c.Post(f.base+"/event_cursor/"+name+"/poll", body).Expect(http.StatusOK).JSON(&out)
	return out
}

func (f *workerFixture) newSpace(t *testing.T, slug string) api.Space {
	t.Helper()
	return createSpace(t, f.admin, map[string]any{"Slug": slug})
}

func eventTypes(es []api.EventLogEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.EventType
	}
	return out
}

func TestWorkerEventCursor(t *testing.T) { inEachLongPollMode(t, testWorkerEventCursor) }

func testWorkerEventCursor(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newWorkerFixture(t, env)

	// A new Name starts at the log's tail: what happened before its first poll is not delivered.
	before := f.newSpace(t, "before")
	require.Empty(t, f.poll(t, f.worker, "main", map[string]any{"Name": "main"}))
	first := f.newSpace(t, "first")
	second := f.newSpace(t, "second")
	got := f.poll(t, f.worker, "main", map[string]any{"Name": "main", "EventTypes": []string{"space.created"}})
	require.Len(t, got, 2)
	require.Equal(t, first.SpaceID, *got[0].SpaceID)
	require.Equal(t, second.SpaceID, *got[1].SpaceID)
	require.Less(t, got[0].CursorID, got[1].CursorID)
	require.Equal(t, "first", got[0].Payload.(map[string]any)["Slug"])
	require.Empty(t, f.poll(t, f.worker, "main", nil), "at most once")

	// The worker's token reads; it cannot write (viewer by default).
	f.worker.Post("/api/space", map[string]any{"Slug": "by-worker"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Polling makes the worker Ready.
	var ext api.ExtendedBridgeWorker
	f.admin.Get(f.base).Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "Ready", ext.BridgeWorker.Condition)
	require.NotNil(t, ext.BridgeWorker.LastSeenAt)

	// FromCursor places a new Name; once the Name has a cursor FromCursor is ignored (a restart resumes,
	// and pollers sending different FromCursors cannot move each other back). Past the tail is refused.
	replay := f.poll(t, f.worker, "replay", map[string]any{"FromCursor": got[0].CursorID - 1, "EventTypes": []string{"space.created"}})
	require.Equal(t, []uuid.UUID{first.SpaceID, second.SpaceID}, []uuid.UUID{*replay[0].SpaceID, *replay[1].SpaceID})
	require.Empty(t, f.poll(t, f.worker, "replay", map[string]any{"FromCursor": got[0].CursorID - 1, "EventTypes": []string{"space.created"}}))
	require.Empty(t, f.poll(t, f.worker, "replay", map[string]any{"FromCursor": 0, "EventTypes": []string{"space.created"}}))
	require.Empty(t, f.poll(t, f.worker, "main", map[string]any{"FromCursor": got[0].CursorID - 1, "EventTypes": []string{"space.created"}}))
	f.worker.Post(f.base+"/event_cursor/fresh/poll", map[string]any{"Name": "fresh", "FromCursor": got[1].CursorID + 1_000_000, "TimeoutSeconds": 0}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	all := f.poll(t, f.worker, "all", map[string]any{"FromCursor": 0})
	require.Contains(t, eventTypes(all), "bridge_worker.created")
	require.NotContains(t, func() []uuid.UUID {
		var ids []uuid.UUID
		for _, e := range all {
			ids = append(ids, e.SubjectEntityID)
		}
		return ids
	}(), uuid.Nil)
	_ = before

	// EventTypes and SpaceID filter; events filtered out are passed, not kept for later.
	require.Empty(t, f.poll(t, f.worker, "units", map[string]any{"EventTypes": []string{"unit.created"}, "SpaceID": f.space.SpaceID}))
	f.admin.Post("/api/space/"+first.SpaceID.String()+"/unit", map[string]any{"Slug": "elsewhere", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/unit", map[string]any{"Slug": "here", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	f.newSpace(t, "third")
	got = f.poll(t, f.worker, "units", map[string]any{"EventTypes": []string{"unit.created"}, "SpaceID": f.space.SpaceID})
	require.Len(t, got, 1)
	require.Equal(t, "here", got[0].Payload.(map[string]any)["Slug"])
	require.Empty(t, f.poll(t, f.worker, "units", map[string]any{"EventTypes": []string{"unit.created"}}))

	// The path decides the Name; bounds are checked.
	f.worker.Post(f.base+"/event_cursor/main/poll", map[string]any{"Name": "other", "TimeoutSeconds": 0}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.worker.Post(f.base+"/event_cursor/main/poll", map[string]any{"TimeoutSeconds": 61}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.worker.Post(f.base+"/event_cursor/main/poll", map[string]any{"MaxEvents": 0}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// A timeout answers 200 [].
	start := time.Now()
	require.Empty(t, f.poll(t, f.worker, "quiet", map[string]any{"TimeoutSeconds": 1}))
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)

	// Who may poll: the worker itself and holders of Edit on it; no one of another organization.
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Post(f.base+"/event_cursor/main/poll", map[string]any{"TimeoutSeconds": 0}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	require.Empty(t, f.poll(t, f.admin, "admin", nil))
	other := env.Client(env.Token("other", "eve", auth.RoleAdmin))
	other.Post(f.base+"/event_cursor/main/poll", map[string]any{"TimeoutSeconds": 0}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var w2 api.BridgeWorker
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "second", "OrgRole": "viewer"}).Expect(http.StatusOK).JSON(&w2)
	otherWorker := env.Client(workerToken(t, env, w2.BridgeWorkerID, w2.Secret))
	otherWorker.Post(f.base+"/event_cursor/main/poll", map[string]any{"TimeoutSeconds": 0}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}

// TestWorkerSharedCursor: pollers with the same Name share the cursor; each event goes to one of them,
// whether they poll through one replica (sharing its reads) or two (each claiming in its own read).
func TestWorkerSharedCursor(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newWorkerFixture(t, env)
	other := apitest.New(t, apitest.Options{DatabaseURL: env.DBURL})
	pollers := []*apitest.Client{f.worker, f.worker, other.Client(workerToken(t, other, f.bw.BridgeWorkerID, f.bw.Secret))}
	require.Empty(t, f.poll(t, f.worker, "shared", nil))
	const n = 12
	want := map[uuid.UUID]bool{}
	for i := 0; i < n; i++ {
		want[f.newSpace(t, "s"+uuid.NewString()[:8]).SpaceID] = true
	}

	var mu sync.Mutex
	var seen []int64
	got := map[uuid.UUID]int{}
	var wg sync.WaitGroup
	for _, c := range pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				es := f.poll(t, c, "shared", map[string]any{"MaxEvents": 2, "EventTypes": []string{"space.created"}})
				if len(es) == 0 {
					return
				}
				mu.Lock()
				for _, e := range es {
					seen = append(seen, e.CursorID)
					got[*e.SpaceID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, n, "every event delivered exactly once across the pollers")
	sort.Slice(seen, func(i, j int) bool { return seen[i] < seen[j] })
	for i := 1; i < len(seen); i++ {
		require.NotEqual(t, seen[i-1], seen[i], "no event delivered twice")
	}
	for id := range want {
		require.Equal(t, 1, got[id])
	}
}

// TestWorkerPollAcrossReplicas: a worker poll held on one replica wakes when an event commits on another.
func TestWorkerPollAcrossReplicas(t *testing.T) { inEachLongPollMode(t, testWorkerPollAcrossReplicas) }

func testWorkerPollAcrossReplicas(t *testing.T, opts apitest.Options) {
	t.Parallel()
	envA := apitest.New(t, opts)
	envB := apitest.New(t, onDatabase(opts, envA.DBURL))
	f := newWorkerFixture(t, envA)
	workerB := envB.Client(workerToken(t, envB, f.bw.BridgeWorkerID, f.bw.Secret))
	require.Empty(t, f.poll(t, workerB, "main", nil))

	const timeout = 50
	type polled struct {
		events  []api.EventLogEntry
		elapsed time.Duration
	}
	done := make(chan polled, 1)
	go func() {
		start := time.Now()
		es := f.poll(t, workerB, "main", map[string]any{"TimeoutSeconds": timeout, "EventTypes": []string{"space.created"}})
		done <- polled{es, time.Since(start)}
	}()
	waitPolls(t, envB, 1, 1) // the event arrives while the poll waits rather than before
	sp := f.newSpace(t, "late")
	got := <-done
	require.Len(t, got.events, 1)
	require.Equal(t, sp.SpaceID, *got.events[0].SpaceID)
	require.Less(t, got.elapsed, timeout*time.Second/2, "woken by the commit, not by the timeout")
}

// TestBridgeWorkerClaimTTLAndInfo: a worker holds an operation for ClaimTTLSeconds (600 unless set, 30 to
// 86400), and records what it supports (ProvidedInfo): both kept through writes and refused out of bounds.
func TestBridgeWorkerClaimTTLAndInfo(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	c := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	sp := createSpace(t, c, map[string]any{"Slug": "ops"})
	workers := "/api/space/" + sp.SpaceID.String() + "/bridge_worker"

	var w api.BridgeWorker
	c.Post(workers, map[string]any{"Slug": "files"}).Expect(http.StatusOK).JSON(&w)
	require.Equal(t, int64(600), w.ClaimTTLSeconds)
	require.Empty(t, w.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes)

	info := map[string]any{"BridgeWorkerInfo": map[string]any{"SupportedConfigTypes": []map[string]any{
		{"ToolchainType": "AppConfig/YAML", "ProviderType": "Directory"}, {"ToolchainType": "Kubernetes/YAML", "ProviderType": "Directory", "LiveStateType": "File"}}}}
	var patched api.BridgeWorker
	c.Patch(workers+"/files", map[string]any{"ClaimTTLSeconds": 120, "ProvidedInfo": info}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, int64(120), patched.ClaimTTLSeconds)
	require.Equal(t, []api.SupportedConfigType{{ToolchainType: "AppConfig/YAML", ProviderType: "Directory"},
		{ToolchainType: "Kubernetes/YAML", ProviderType: "Directory", LiveStateType: "File"}}, patched.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes)
	var listed []api.ExtendedBridgeWorker
	c.Get(workers + "?where=" + url.QueryEscape("ClaimTTLSeconds = 120")).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)
	// A patch that leaves them out keeps them.
	c.Patch(workers+"/files", map[string]any{"DisplayName": "Files"}).Expect(http.StatusOK).JSON(&patched)
	require.Equal(t, int64(120), patched.ClaimTTLSeconds)
	require.Len(t, patched.ProvidedInfo.BridgeWorkerInfo.SupportedConfigTypes, 2)

	e := c.Patch(workers+"/files", map[string]any{"ClaimTTLSeconds": 10}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ClaimTTLSeconds", e.Error.ErrorMetadata.Items[0].Item, e.Error.Message)
	// A config type without its ProviderType does not match the document.
	e = c.Patch(workers+"/files", map[string]any{"ProvidedInfo": map[string]any{"BridgeWorkerInfo": map[string]any{
		"SupportedConfigTypes": []map[string]any{{"ToolchainType": "AppConfig/YAML"}}}}}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, "ProvidedInfo", e.Error.ErrorMetadata.Items[0].Item, e.Error.Message)
	require.Equal(t, int64(120), readWorker(t, c, workers+"/files").ClaimTTLSeconds, "a refused write changes nothing")
}

func readWorker(t *testing.T, c *apitest.Client, path string) api.BridgeWorker {
	t.Helper()
	var got api.ExtendedBridgeWorker
	c.Get(path).Expect(http.StatusOK).JSON(&got)
	return got.BridgeWorker
}
