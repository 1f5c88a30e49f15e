package httpapi_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

func TestTargets(t *testing.T) {
	t.Parallel()
	f := newUnitFixture(t)
	c := f.c
	targets := "/api/space/" + f.space.SpaceID.String() + "/target"

	// ToolchainType and ProviderType are closed sets of the document: other values are schema violations.
	c.Post(targets, map[string]any{"Slug": "k", "ToolchainType": "Helm", "ProviderType": "Kubernetes"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post(targets, map[string]any{"Slug": "k", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "Teleport"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	c.Post(targets, map[string]any{"Slug": "k", "ToolchainType": configdata.KubernetesYAML}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	var k8s, env api.Target
	c.Post(targets, map[string]any{"Slug": "cluster", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "FluxOCI",
		"Options": map[string]string{"namespace": "prod"}}).Expect(http.StatusOK).JSON(&k8s)
	require.Equal(t, map[string]string{"namespace": "prod"}, map[string]string(k8s.Options))
	c.Post(targets, map[string]any{"Slug": "envs", "ToolchainType": configdata.AppConfigEnv, "ProviderType": "ArgoCDOCI"}).Expect(http.StatusOK).JSON(&env)
	c.Post(targets, map[string]any{"Slug": "cluster", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "FluxOCI"}).ExpectError(http.StatusConflict, api.ErrorTypeAlreadyExists)
	c.Post(targets+"?allow_exists=true", map[string]any{"Slug": "cluster", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "FluxOCI"}).Expect(http.StatusOK)
	c.Post(targets+"?dry_run=true", map[string]any{"Slug": "ghost", "ToolchainType": configdata.KubernetesYAML, "ProviderType": "FluxOCI"}).Expect(http.StatusOK)

	// A Unit's TargetID names a Target of its Space and ToolchainType.
	e := c.Post(f.unitsPath(), map[string]any{"Slug": "web", "ToolchainType": configdata.KubernetesYAML, "TargetID": env.TargetID.String()}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "TargetID", e.Error.ErrorMetadata.Items[0].Item)
	var res api.UnitCreateOrUpdateResponse
	c.Post(f.unitsPath(), map[string]any{"Slug": "web", "ToolchainType": configdata.KubernetesYAML, "TargetID": k8s.TargetID.String()}).Expect(http.StatusOK).JSON(&res)
	var ext api.ExtendedUnit
	c.Get(f.path(*res.Unit) + "?include=TargetID").Expect(http.StatusOK).JSON(&ext)
	require.Equal(t, "cluster", ext.Target.Slug)
	var units []api.ExtendedUnit
	c.Get("/api/unit?" + where("TargetID IS NOT NULL").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
	c.Get("/api/unit?" + where("HeadRevisionNum > LastReleasedRevisionNum AND TargetID IS NOT NULL").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Empty(t, units)
	f.put(t, *res.Unit, "application/yaml", deployment).Expect(http.StatusOK)
	c.Get("/api/unit?" + where("HeadRevisionNum > LastReleasedRevisionNum AND TargetID IS NOT NULL").Encode()).Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)

	// Get, GET -> edit -> PUT, patch, lists.
	tp := targets + "/" + k8s.TargetID.String()
	var got api.ExtendedTarget
	c.Get(tp + "?include=SpaceID").Expect(http.StatusOK).JSON(&got)
	require.Equal(t, "dev", got.Space.Slug)
	got.Target.DisplayName = "Prod cluster"
	var upd api.Target
	resp := c.Put(tp, got.Target).Expect(http.StatusOK)
	require.Empty(t, resp.Warnings())
	resp.JSON(&upd)
	require.Equal(t, "Prod cluster", upd.DisplayName)
	c.Put(tp, got.Target).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	// In use: its ToolchainType cannot change, and it cannot be deleted.
	c.Patch(tp, map[string]any{"ToolchainType": configdata.AppConfigEnv}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	c.Delete(tp).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var list []api.ExtendedTarget
	c.Get("/api/target?" + where("ProviderType = 'FluxOCI'").Encode()).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	c.Get(targets + "?" + url.Values{"order_by": {"DESC:Slug"}}.Encode()).Expect(http.StatusOK).JSON(&list)
	require.Equal(t, []string{"envs", "cluster"}, []string{list[0].Target.Slug, list[1].Target.Slug})

	// Bulk patch and delete.
	var items []api.TargetCreateOrUpdateResponse
	c.Patch("/api/target?"+where("Slug IN ('cluster', 'envs')").Encode(), map[string]any{"Labels": map[string]string{"team": "a"}}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 2)
	var dels []api.DeleteResponse
	c.Delete("/api/target?" + where("Labels.team = 'a'").Encode()).Expect(http.StatusMultiStatus).JSON(&dels)
	require.Len(t, dels, 2)
	c.Get(targets).Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, "cluster", list[0].Target.Slug)
	c.Delete("/api/target").ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Other organizations see none of it; viewers do not write.
	b := f.env.Client(f.env.Token("other", "bob", auth.RoleAdmin))
	b.Get(tp).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	b.Get("/api/target").Expect(http.StatusOK).JSON(&list)
	require.Empty(t, list)
	b.Delete(tp).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	v := f.env.Client(f.env.Token("acme", "vic", auth.RoleViewer))
	v.Patch(tp, map[string]any{"DisplayName": "v"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}
