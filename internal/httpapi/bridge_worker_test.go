package httpapi_test

import (
	"net/http"
	"testing"

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

	// The Secret is shown once, in the create response; the bot User is a member by default.
	var w api.BridgeWorker
	c.Post(workers, map[string]any{"Slug": "k8s", "DisplayName": "Kubernetes", "Labels": map[string]string{"env": "prod"}}).Expect(http.StatusOK).JSON(&w)
	require.NotEmpty(t, w.Secret)
	require.Equal(t, api.OrgRole("member"), w.OrgRole)
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

	// DeleteGates hold a delete; deleting takes the bot User with it.
	c.Patch(workers+"/k8s", map[string]any{"DeleteGates": map[string]bool{"keep": true}}).Expect(http.StatusOK)
	c.Delete(workers+"/k8s").ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Patch(workers+"/k8s", map[string]any{"DeleteGates": nil}).Expect(http.StatusOK)
	c.Delete(workers + "/k8s").Expect(http.StatusOK)
	c.Get(workers+"/k8s").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}
