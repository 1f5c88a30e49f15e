package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/configdata"
)

// promoteFixture is an organization (acme) with dev, staging and prod Spaces (Labels.env), a Unit app in
// dev cloned into staging, a ChangeWorkflow dev → staging (Promoted, Validated) → prod (Promoted,
// Approved) with a Final custom gate (gold), and another organization (globex).
type promoteFixture struct {
	env                *apitest.Env
	admin, bob, viewer *apitest.Client
	other              *apitest.Client
	dev, staging, prod api.Space
	devApp, stagingApp api.Unit
	workflow           api.ChangeWorkflow
}

func spacePath(s api.Space) string { return "/api/space/" + s.SpaceID.String() }

func newPromoteFixture(t *testing.T) promoteFixture {
	t.Helper()
	env := apitest.New(t)
	f := promoteFixture{env: env, admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin)),
		bob: env.Client(env.Token("acme", "bob", auth.RoleMember)), viewer: env.Client(env.Token("acme", "vera", auth.RoleViewer)),
		other: env.Client(env.Token("globex", "gina", auth.RoleAdmin))}
	f.dev = createSpace(t, f.admin, map[string]any{"Slug": "dev", "Labels": map[string]string{"env": "dev"}})
	f.staging = createSpace(t, f.admin, map[string]any{"Slug": "staging", "Labels": map[string]string{"env": "staging"}})
	f.prod = createSpace(t, f.admin, map[string]any{"Slug": "prod", "Labels": map[string]string{"env": "prod"}})
	var u api.UnitCreateOrUpdateResponse
	f.admin.Post(spacePath(f.dev)+"/unit", map[string]any{"Slug": "app", "ToolchainType": configdata.AppConfigYAML}).Expect(http.StatusOK).JSON(&u)
	f.devApp = *u.Unit
	f.putData(t, f.devApp, "image: web:1\nreplicas: 2\n")
	var clones []api.UnitCreateOrUpdateResponse
	f.admin.Post("/api/unit?"+where("Slug = 'app' AND SpaceID = '"+f.dev.SpaceID.String()+"'").Encode()+"&"+
		url.Values{"where_space": {"Labels.env = 'staging'"}}.Encode(), map[string]any{}).Expect(http.StatusOK).JSON(&clones)
	require.Len(t, clones, 1)
	f.stagingApp = *clones[0].Unit
	f.admin.Post(spacePath(f.dev)+"/change_workflow", map[string]any{"Slug": "ship",
		"Stages": []any{
			map[string]any{"Name": "dev", "WhereSpace": "Labels.env = 'dev'"},
			map[string]any{"Name": "staging", "WhereSpace": "Labels.env = 'staging'", "Prerequisites": []string{"Promoted", "Validated"}},
			map[string]any{"Name": "prod", "WhereSpace": "Labels.env = 'prod'", "Prerequisites": []string{"Promoted", "Approved"}},
		},
		"Final":               map[string]any{"Prerequisites": []string{"gold"}},
		"CustomPrerequisites": []any{map[string]any{"Name": "gold", "Expression": "cel:'tier' in unit.Labels && unit.Labels['tier'] == 'gold'"}},
	}).Expect(http.StatusOK).JSON(&f.workflow)
	return f
}

func (f promoteFixture) putData(t *testing.T, u api.Unit, data string) {
	t.Helper()
	f.admin.Put("/api/space/"+u.SpaceID.String()+"/unit/"+u.UnitID.String()+"/data", apitest.Raw{ContentType: "application/yaml", Data: []byte(data)}).
		Expect(http.StatusOK)
}

func (f promoteFixture) data(t *testing.T, spaceID, unitID uuid.UUID) string {
	t.Helper()
	return string(f.admin.Get("/api/space/" + spaceID.String() + "/unit/" + unitID.String() + "/data").Expect(http.StatusOK).Body)
}

func (f promoteFixture) changeOrder(t *testing.T, body map[string]any) api.ChangeOrder {
	t.Helper()
	var co api.ChangeOrder
	f.admin.Post(spacePath(f.dev)+"/change_order", body).Expect(http.StatusOK).JSON(&co)
	return co
}

func (f promoteFixture) readChangeOrder(t *testing.T, co api.ChangeOrder) api.ChangeOrder {
	t.Helper()
	var got api.ExtendedChangeOrder
	f.admin.Get(spacePath(f.dev) + "/change_order/" + co.ChangeOrderID.String()).Expect(http.StatusOK).JSON(&got)
	return got.ChangeOrder
}

func promote(t *testing.T, c *apitest.Client, query string, body map[string]any, status int) api.PromoteResult {
	t.Helper()
	var r api.PromoteResult
	c.Post("/api/promote"+query, body).Expect(status).JSON(&r)
	return r
}

// tagsByRevision are the TagIDs on each Revision of a Unit, by RevisionNum.
func tagsByRevision(t *testing.T, c *apitest.Client, u api.Unit) map[int64][]string {
	t.Helper()
	var revs []api.ExtendedRevision
	c.Get("/api/space/" + u.SpaceID.String() + "/unit/" + u.UnitID.String() + "/revision").Expect(http.StatusOK).JSON(&revs)
	out := map[int64][]string{}
	for _, r := range revs {
		for id := range r.Revision.Tags {
			out[r.Revision.RevisionNum] = append(out[r.Revision.RevisionNum], id)
		}
	}
	return out
}

// TestPromoteThroughStages walks a ChangeOrder dev → staging → prod → Final: marking dev, a preview and its
// plan, a stale plan (412), the upgrade of staging, a refusal by the Approved gate (409 with the gates),
// approval by another member, the clone into prod, the Final gate forced with a reason by an admin, and the
// Tags, progress and changeorder.promoted events it leaves.
func TestPromoteThroughStages(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	co := f.changeOrder(t, map[string]any{"Slug": "v2", "ChangeWorkflowID": f.workflow.ChangeWorkflowID, "WhereUnit": "Slug = 'app'"})
	require.Equal(t, api.ChangeOrderState("New"), co.State)
	require.NotNil(t, co.ChangeWorkflow, "the workflow is copied onto the ChangeOrder")
	require.NotNil(t, co.StartTagID)
	require.NotNil(t, co.EndTagID)
	body := map[string]any{"ChangeOrderID": co.ChangeOrderID}

	// The change, made in dev.
	f.putData(t, f.devApp, "image: web:2\nreplicas: 2\n")

	// Stage dev: the Unit has no upstream, so it is marked: its head gets the end Tag, nothing is written.
	r := promote(t, f.admin, "", body, http.StatusOK)
	require.Equal(t, "dev", r.Stage)
	require.True(t, r.Complete)
	require.Len(t, r.Spaces, 1)
	require.Equal(t, "dev", r.Spaces[0].SpaceSlug)
	require.Equal(t, api.SpacePromote, r.Spaces[0].Action)
	require.Len(t, r.Spaces[0].Units, 1)
	require.Equal(t, api.UnitMark, r.Spaces[0].Units[0].Action)
	require.Equal(t, int64(2), r.Spaces[0].Units[0].HeadRevisionNum)
	require.Contains(t, tagsByRevision(t, f.admin, f.devApp)[2], co.EndTagID.String())
	got := f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("InProgress"), got.State)
	require.Equal(t, "dev", *got.Stage)
	require.Equal(t, []uuid.UUID{f.dev.SpaceID}, got.ResolvedSpaceIDs)

	// A preview of staging: its clone would be upgraded; nothing is written.
	preview := promote(t, f.admin, "?dry_run=true", body, http.StatusOK)
	require.True(t, preview.DryRun)
	require.Equal(t, "staging", preview.Stage)
	require.True(t, strings.HasPrefix(preview.Plan, "sha256:"), preview.Plan)
	require.Len(t, preview.Spaces, 1)
	require.Equal(t, "staging", preview.Spaces[0].SpaceSlug)
	require.Equal(t, "dev", preview.Spaces[0].UpstreamSpaceSlug)
	require.Equal(t, api.UnitUpgrade, preview.Spaces[0].Units[0].Action)
	require.Equal(t, int64(2), preview.Spaces[0].Units[0].UpstreamRevisionNum)
	require.Len(t, preview.Stages, 1)
	require.Equal(t, "dev", preview.Stages[0].PreviousStage)
	for _, g := range preview.Stages[0].Gates {
		require.True(t, g.Satisfied, "%s: %s", g.Prerequisite, g.Message)
		require.Equal(t, "dev", g.SpaceSlug)
	}
	require.Equal(t, "image: web:1\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
	require.Equal(t, "dev", *f.readChangeOrder(t, co).Stage)
	again := promote(t, f.admin, "?dry_run=true", body, http.StatusOK)
	require.Equal(t, preview.Plan, again.Plan, "the plan of an unchanged promotion is stable")

	// dev moves on after the preview: the plan no longer matches.
	f.putData(t, f.devApp, "image: web:3\nreplicas: 2\n")
	e := f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID, "ExpectedPlan": preview.Plan}).
		ExpectError(http.StatusPreconditionFailed, api.ErrorTypePreconditionFailed)
	require.Contains(t, e.Error.Message, "preview")
	require.Equal(t, "image: web:1\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID), "a 412 writes nothing")

	// A viewer may not promote.
	f.viewer.Post("/api/promote", body).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Preview again, then promote with that plan: staging's clone is upgraded.
	preview = promote(t, f.admin, "?dry_run=true", body, http.StatusOK)
	r = promote(t, f.admin, "", map[string]any{"ChangeOrderID": co.ChangeOrderID, "ExpectedPlan": preview.Plan, "ChangeDescription": "ship web:3"}, http.StatusOK)
	require.Equal(t, preview.Plan, r.Plan)
	require.False(t, r.DryRun)
	u := r.Spaces[0].Units[0]
	require.Equal(t, api.UnitUpgrade, u.Action)
	require.Greater(t, u.HeadRevisionNum, u.PreviousHeadRevisionNum)
	require.Equal(t, "image: web:3\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
	tags := tagsByRevision(t, f.admin, f.stagingApp)
	require.Contains(t, tags[u.PreviousHeadRevisionNum], co.StartTagID.String(), "the start Tag is on the Revision before")
	require.Contains(t, tags[u.HeadRevisionNum], co.EndTagID.String(), "the end Tag is on the new head")
	var rev api.ExtendedRevision
	var revs []api.ExtendedRevision
	f.admin.Get("/api/space/" + f.staging.SpaceID.String() + "/unit/" + f.stagingApp.UnitID.String() + "/revision?" + where("RevisionNum = "+itoa(u.HeadRevisionNum)).Encode()).
		Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 1)
	rev = revs[0]
	require.Equal(t, "ship web:3", rev.Revision.Description)

	// prod: refused by Approved (nobody but its author approved staging's head); nothing is written.
	var refusal api.PromoteRefusal
	f.admin.Post("/api/promote", body).Expect(http.StatusConflict).JSON(&refusal)
	require.Equal(t, api.ErrorTypeConflict, refusal.Error.Type)
	require.Equal(t, http.StatusConflict, refusal.Error.Status)
	require.Contains(t, refusal.Error.Message, "Approved")
	require.Contains(t, refusal.Message, "Approved")
	require.Equal(t, "prod", refusal.Stage)
	require.Len(t, refusal.Stages, 1)
	gates := map[string]api.PromoteGateResult{}
	for _, g := range refusal.Stages[0].Gates {
		gates[g.Prerequisite] = g
		require.Equal(t, "staging", g.SpaceSlug)
	}
	require.True(t, gates["Promoted"].Satisfied)
	require.False(t, gates["Approved"].Satisfied)
	require.Contains(t, gates["Approved"].Message, "app")
	require.Len(t, refusal.Error.ErrorMetadata.Items, 1)
	var inProd []api.ExtendedUnit
	f.admin.Get(spacePath(f.prod) + "/unit").Expect(http.StatusOK).JSON(&inProd)
	require.Empty(t, inProd)
	got = f.readChangeOrder(t, co)
	require.Equal(t, "staging", *got.Stage)
	require.NotEmpty(t, got.PromotionFailures)
	require.Equal(t, "Approved", got.PromotionFailures[len(got.PromotionFailures)-1].Prerequisite)

	// Approvals: the author of staging's head may not approve it; bob may, and then the gate holds.
	stagingUnit := "/api/space/" + f.staging.SpaceID.String() + "/unit/" + f.stagingApp.UnitID.String()
	f.admin.Post(stagingUnit+"/approve", nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	f.bob.Post(stagingUnit+"/approve", nil).Expect(http.StatusOK)
	r = promote(t, f.admin, "", body, http.StatusOK)
	require.Equal(t, "prod", r.Stage)
	require.Equal(t, "staging", r.Spaces[0].UpstreamSpaceSlug)
	require.Equal(t, api.UnitClone, r.Spaces[0].Units[0].Action)
	require.NotNil(t, r.Spaces[0].Units[0].UnitID)
	prodApp := *r.Spaces[0].Units[0].UnitID
	require.Equal(t, "image: web:3\nreplicas: 2\n", f.data(t, f.prod.SpaceID, prodApp))
	got = f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("InProgress"), got.State, "the Final gates are still to pass")
	require.ElementsMatch(t, []uuid.UUID{f.dev.SpaceID, f.staging.SpaceID, f.prod.SpaceID}, got.ResolvedSpaceIDs)

	// Final: the custom gate (tier gold) does not hold in prod; forcing needs a reason and Manage.
	f.admin.Post("/api/promote", body).Expect(http.StatusConflict).JSON(&refusal)
	require.Equal(t, "Final", refusal.Stage)
	require.Equal(t, "gold", refusal.Stages[0].Gates[0].Prerequisite)
	require.Equal(t, "prod", refusal.Stages[0].Gates[0].SpaceSlug)
	e = f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID, "Force": true}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "ForceReason", e.Error.ErrorMetadata.Items[0].Item)
	forced := map[string]any{"ChangeOrderID": co.ChangeOrderID, "Force": true, "ForceReason": "hotfix approved by the CAB"}
	f.bob.Post("/api/promote", forced).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	r = promote(t, f.admin, "", forced, http.StatusOK)
	require.Equal(t, "Final", r.Stage)
	require.True(t, r.Stages[0].Forced)
	got = f.readChangeOrder(t, co)
	require.Equal(t, api.ChangeOrderState("Resolved"), got.State)
	require.Len(t, got.PromotionOverrides, 1)
	require.Equal(t, "Final", got.PromotionOverrides[0].Stage)
	require.Equal(t, []string{"gold"}, got.PromotionOverrides[0].Prerequisites)
	require.Equal(t, "hotfix approved by the CAB", got.PromotionOverrides[0].Reason)

	// A resolved ChangeOrder has no Stage left.
	f.admin.Post("/api/promote", body).ExpectError(http.StatusConflict, api.ErrorTypeConflict)

	// changeorder.promoted, one per promotion, with the Stage and the Spaces.
	var stages []string
	require.Eventually(t, func() bool {
		rows, err := f.env.App.Store.Pool.Query(context.Background(), `SELECT payload FROM event_log
			WHERE subject_entity_id = $1 AND event_type = 'changeorder.promoted' ORDER BY cursor_id`, co.ChangeOrderID)
		if err != nil {
			return false
		}
		defer rows.Close()
		stages = nil
		for rows.Next() {
			var p map[string]any
			if rows.Scan(&p) != nil {
				return false
			}
			require.Equal(t, "ChangeOrder", p["EntityType"])
			require.Equal(t, co.ChangeOrderID.String(), p["EntityID"])
			require.NotEmpty(t, p["SpaceIDs"])
			stages = append(stages, p["Stage"].(string))
		}
		return len(stages) == 4
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, []string{"dev", "staging", "prod", "Final"}, stages)
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestPromoteWithoutChangeOrder: the Spaces named by WhereSpace take their clones' upstream changes; a
// Space whose Units are at their upstream's head is Unchanged; no Spaces named is 400.
func TestPromoteWithoutChangeOrder(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	f.admin.Post("/api/promote", map[string]any{}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.admin.Post("/api/promote", map[string]any{"WhereSpace": "Labels.env ="}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.admin.Post("/api/promote", map[string]any{"WhereSpace": "Labels.env = 'staging'", "TargetStage": "prod"}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	r := promote(t, f.admin, "", map[string]any{"WhereSpace": "Labels.env = 'staging'"}, http.StatusOK)
	require.Nil(t, r.ChangeOrderID)
	require.Equal(t, api.SpaceUnchanged, r.Spaces[0].Action)
	require.Equal(t, api.UnitUnchanged, r.Spaces[0].Units[0].Action)

	f.putData(t, f.devApp, "image: web:9\nreplicas: 2\n")
	r = promote(t, f.admin, "", map[string]any{"WhereSpace": "Labels.env = 'staging'"}, http.StatusOK)
	require.Equal(t, api.UnitUpgrade, r.Spaces[0].Units[0].Action)
	require.Equal(t, "image: web:9\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
	require.Empty(t, r.Stages)

	// A new Unit of dev is cloned into staging with its Link, which reads staging's app, not dev's.
	var cache api.UnitCreateOrUpdateResponse
	f.admin.Post(spacePath(f.dev)+"/unit", map[string]any{"Slug": "cache", "ToolchainType": configdata.AppConfigYAML}).Expect(http.StatusOK).JSON(&cache)
	f.putData(t, *cache.Unit, "app:\n  image: none\n")
	var l api.Link
	f.admin.Post(spacePath(f.dev)+"/link", map[string]any{"Slug": "cache-reads-app", "FromUnitID": cache.Unit.UnitID, "ToUnitID": f.devApp.UnitID,
		"AutoUpdate": true, "UpstreamPaths": []any{map[string]any{"Path": "image"}}, "DownstreamPaths": []any{map[string]any{"Path": "app.image"}}}).
		Expect(http.StatusOK).JSON(&l)
	r = promote(t, f.admin, "", map[string]any{"WhereSpace": "Labels.env = 'staging'"}, http.StatusOK)
	require.Len(t, r.Spaces[0].Units, 2)
	clone := r.Spaces[0].Units[1]
	require.Equal(t, "cache", clone.Slug)
	require.Equal(t, api.UnitClone, clone.Action)
	require.Len(t, r.Spaces[0].Links, 1)
	link := r.Spaces[0].Links[0]
	require.Equal(t, api.LinkCreate, link.Action, link.Reason)
	require.Equal(t, l.LinkID, *link.UpstreamLinkID)
	require.Equal(t, "app", link.ToUnitSlug)
	var staged api.ExtendedLink
	f.admin.Get(spacePath(f.staging) + "/link/" + link.LinkID.String()).Expect(http.StatusOK).JSON(&staged)
	require.Equal(t, f.stagingApp.UnitID, staged.Link.ToUnitID)
	require.Equal(t, *clone.UnitID, staged.Link.FromUnitID)
	require.Contains(t, f.data(t, f.staging.SpaceID, *clone.UnitID), "image: web:9")
}

// TestPromoteErrors: tenancy (another organization's ChangeOrder and Filter), unknown Stages, aborted
// ChangeOrders and Invoke ChangeOrders through promote.
func TestPromoteErrors(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	co := f.changeOrder(t, map[string]any{"Slug": "v2", "ChangeWorkflowID": f.workflow.ChangeWorkflowID})

	f.other.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	// alice of acme is also a member of globex: with her globex token, acme's ChangeOrder does not exist.
	aliceGlobex := f.env.Client(f.env.Token("globex", "alice", auth.RoleAdmin))
	aliceGlobex.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	r := promote(t, aliceGlobex, "", map[string]any{"WhereSpace": "Labels.env = 'staging'"}, http.StatusOK)
	require.Empty(t, r.Spaces, "acme's Spaces are not globex's")
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": uuid.New()}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	var theirs api.Filter
	f.other.Post("/api/space/"+createSpace(t, f.other, map[string]any{"Slug": "x"}).SpaceID.String()+"/filter",
		map[string]any{"Slug": "spaces", "From": "Space", "Where": "Slug = 'x'"}).Expect(http.StatusOK).JSON(&theirs)
	f.admin.Post("/api/promote", map[string]any{"SpaceFilterID": theirs.FilterID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	e := f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID, "TargetStage": "qa"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "TargetStage", e.Error.ErrorMetadata.Items[0].Item)
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID, "TargetStage": "Final"}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID, "Bogus": 1, "Force": "yes"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)

	// Entering staging first skips dev: Promoted does not hold there.
	var refusal api.PromoteRefusal
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID, "TargetStage": "staging"}).Expect(http.StatusConflict).JSON(&refusal)
	require.Equal(t, "Promoted", refusal.Stages[0].Gates[0].Prerequisite)
	require.False(t, refusal.Stages[0].Gates[0].Satisfied)

	f.admin.Patch(spacePath(f.dev)+"/change_order/"+co.ChangeOrderID.String(), map[string]any{"AbortedReason": "superseded"}).Expect(http.StatusOK)
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
}

// TestPromoteComponentPolicy: a Variant of a Component that requires a ChangeWorkflow refuses a promotion
// without one (422 naming the Space), and one with a workflow the Component does not allow.
func TestPromoteComponentPolicy(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	var comp api.Component
	f.admin.Post("/api/component", map[string]any{"Slug": "web", "ChangeWorkflowRequired": true}).Expect(http.StatusOK).JSON(&comp)
	f.admin.Patch(spacePath(f.staging), map[string]any{"ComponentID": comp.ComponentID}).Expect(http.StatusOK)

	e := f.admin.Post("/api/promote", map[string]any{"WhereSpace": "Labels.env = 'staging'"}).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	require.Equal(t, "staging", e.Error.ErrorMetadata.Items[0].Item)

	// A workflow the Component does not allow is refused too; one it allows passes.
	var other api.ChangeWorkflow
	f.admin.Post(spacePath(f.dev)+"/change_workflow", map[string]any{"Slug": "other", "Stages": []any{map[string]any{"Name": "staging", "WhereSpace": "Labels.env = 'staging'"}}}).
		Expect(http.StatusOK).JSON(&other)
	f.admin.Patch("/api/component/"+comp.ComponentID.String(), map[string]any{"AllowedChangeWorkflowIDs": []uuid.UUID{f.workflow.ChangeWorkflowID}}).Expect(http.StatusOK)
	co := f.changeOrder(t, map[string]any{"Slug": "other", "ChangeWorkflowID": other.ChangeWorkflowID})
	f.admin.Post("/api/promote", map[string]any{"ChangeOrderID": co.ChangeOrderID}).ExpectError(http.StatusUnprocessableEntity, api.ErrorTypeUnprocessable)
	allowed := f.changeOrder(t, map[string]any{"Slug": "ship", "ChangeWorkflowID": f.workflow.ChangeWorkflowID})
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": allowed.ChangeOrderID}, http.StatusOK)
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": allowed.ChangeOrderID}, http.StatusOK)
}

// TestInvokeChangeOrder: function invoke with change_order runs the ChangeOrder's Invocation on the Units it
// covers that have not taken it, Tags them, and refuses a body that names functions.
func TestInvokeChangeOrder(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	var inv api.Invocation
	f.admin.Post(spacePath(f.dev)+"/invocation", map[string]any{"Slug": "debug", "ToolchainType": configdata.AppConfigYAML,
		"FunctionInvocations": []any{map[string]any{"FunctionName": "set-value", "Arguments": []any{map[string]any{"Value": "log"}, map[string]any{"Value": "debug"}}}}}).
		Expect(http.StatusOK).JSON(&inv)
	co := f.changeOrder(t, map[string]any{"Slug": "debug", "UpdateType": "Invoke", "InvocationID": inv.InvocationID, "WhereUnit": "Slug = 'app'",
		"InScopeSpaceIDs": []uuid.UUID{f.staging.SpaceID}})
	invoke := "/api/function/invoke?" + url.Values{"change_order": {co.ChangeOrderID.String()}, "where": {"Slug = 'app'"}}.Encode()

	f.admin.Post(invoke, map[string]any{"ToolchainType": configdata.AppConfigYAML,
		"FunctionInvocations": []any{map[string]any{"FunctionName": "set-value", "Arguments": []any{map[string]any{"Value": "a"}, map[string]any{"Value": "b"}}}}}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.admin.Post("/api/function/invoke?"+url.Values{"change_order": {uuid.NewString()}, "where": {"Slug = 'app'"}}.Encode(), map[string]any{}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.other.Post("/api/function/invoke?"+url.Values{"change_order": {co.ChangeOrderID.String()}, "where": {"Slug = 'app'"}}.Encode(), map[string]any{}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	// Only staging's app is covered (InScopeSpaceIDs): it runs there and gets both Tags.
	var items []api.FunctionInvocationsResponse
	f.admin.Post(invoke, map[string]any{}).Expect(http.StatusOK).JSON(&items)
	require.Len(t, items, 1)
	require.Equal(t, f.stagingApp.UnitID, items[0].UnitID)
	require.Contains(t, f.data(t, f.staging.SpaceID, f.stagingApp.UnitID), "log: debug")
	require.NotContains(t, f.data(t, f.dev.SpaceID, f.devApp.UnitID), "log: debug")
	tags := tagsByRevision(t, f.admin, f.stagingApp)
	var head int64
	for n := range tags {
		head = max(head, n)
	}
	require.Contains(t, tags[head], co.EndTagID.String())
	require.Contains(t, tags[head-1], co.StartTagID.String())

	// A second run skips the Unit that took it.
	f.admin.Post(invoke, map[string]any{}).Expect(http.StatusOK).JSON(&items)
	require.Empty(t, items)

	// An UpgradeUnit ChangeOrder is not run by invoke.
	up := f.changeOrder(t, map[string]any{"Slug": "up"})
	f.admin.Post("/api/function/invoke?"+url.Values{"change_order": {up.ChangeOrderID.String()}, "where": {"Slug = 'app'"}}.Encode(), map[string]any{}).
		ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
}

// TestPromoteGates: each built-in gate and custom CEL ones, failing and then holding: Validated (a
// validating Trigger's finding on the head), Released (a published Release of the Space bundles the head),
// Healthy (a Unit with a Target never applied), a CEL expression that holds and one whose evaluation fails.
func TestPromoteGates(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	dev := spacePath(f.dev)
	var target api.Target
	f.admin.Post(dev+"/target", map[string]any{"Slug": "cluster", "ToolchainType": configdata.AppConfigYAML, "ProviderType": "FluxOCI"}).
		Expect(http.StatusOK).JSON(&target)
	f.admin.Patch(dev+"/unit/"+f.devApp.UnitID.String(), map[string]any{"TargetID": target.TargetID}).Expect(http.StatusOK)
	f.admin.Post(dev+"/trigger", map[string]any{"Slug": "pinned", "Event": "Mutation", "ToolchainType": configdata.AppConfigYAML,
		"FunctionName": "value-matches", "Arguments": []any{arg("image"), map[string]any{"ParameterName": "pattern", "Value": `:2$`}}}).
		Expect(http.StatusOK)
	var wf api.ChangeWorkflow
	f.admin.Post(dev+"/change_workflow", map[string]any{"Slug": "gates",
		"Stages": []any{
			map[string]any{"Name": "dev", "WhereSpace": "Labels.env = 'dev'"},
			map[string]any{"Name": "staging", "WhereSpace": "Labels.env = 'staging'", "Prerequisites": []string{"Validated", "Released", "Healthy", "small", "broken"}},
		},
		"CustomPrerequisites": []any{
			map[string]any{"Name": "small", "Expression": "cel:revision.RevisionNum < 100 && space.Slug == 'dev'"},
			map[string]any{"Name": "broken", "Expression": "cel:unit.Labels['nope'] == 'x'"},
		}}).Expect(http.StatusOK).JSON(&wf)
	co := f.changeOrder(t, map[string]any{"Slug": "gated", "ChangeWorkflowID": wf.ChangeWorkflowID})
	f.putData(t, f.devApp, "image: web:3\nreplicas: 2\n") // the Trigger finds it wrong
	promote(t, f.admin, "", map[string]any{"ChangeOrderID": co.ChangeOrderID}, http.StatusOK)

	gates := func() map[string]api.PromoteGateResult {
		var refusal api.PromoteRefusal
		f.admin.Post("/api/promote?dry_run=true", map[string]any{"ChangeOrderID": co.ChangeOrderID}).Expect(http.StatusConflict).JSON(&refusal)
		require.True(t, refusal.DryRun)
		out := map[string]api.PromoteGateResult{}
		for _, g := range refusal.Stages[0].Gates {
			out[g.Prerequisite] = g
		}
		return out
	}
	g := gates()
	require.False(t, g["Validated"].Satisfied)
	require.Contains(t, g["Validated"].Message, "app has ValidationErrors")
	require.False(t, g["Released"].Satisfied)
	require.Contains(t, g["Released"].Message, "in no published Release")
	require.False(t, g["Healthy"].Satisfied)
	require.Contains(t, g["Healthy"].Message, "app was never applied")
	require.True(t, g["small"].Satisfied, g["small"].Message)
	require.False(t, g["broken"].Satisfied)
	require.Contains(t, g["broken"].Message, "nope")

	// A passing Revision and a Release of it satisfy Validated and Released.
	f.putData(t, f.devApp, "image: web:2\nreplicas: 2\n")
	f.admin.Post(dev+"/release", map[string]any{"TargetID": target.TargetID}).Expect(http.StatusOK)
	g = gates()
	require.True(t, g["Validated"].Satisfied, g["Validated"].Message)
	require.True(t, g["Released"].Satisfied, g["Released"].Message)
	require.False(t, g["Healthy"].Satisfied)
}

// TestPromoteAdoptsChangeSetEndTag: a ChangeOrder created with a closed ChangeSet's end Tag adopts it: the
// Units the change was made in took it already, the next Stage's clones are upgraded and get the Tag.
func TestPromoteAdoptsChangeSetEndTag(t *testing.T) {
	t.Parallel()
	f := newPromoteFixture(t)
	dev := spacePath(f.dev)
	var cs api.ChangeSet
	f.admin.Post(dev+"/change_set", map[string]any{"Slug": "bump"}).Expect(http.StatusOK).JSON(&cs)
	f.admin.Patch(dev+"/unit/"+f.devApp.UnitID.String(), map[string]any{"ChangeSetID": cs.ChangeSetID}).Expect(http.StatusOK)
	f.putData(t, f.devApp, "image: web:5\nreplicas: 2\n")
	f.admin.Patch(dev+"/change_set/"+cs.ChangeSetID.String(), map[string]any{"State": "Closed"}).Expect(http.StatusOK).JSON(&cs)
	require.NotNil(t, cs.EndTagID)

	var theirs api.Tag
	f.other.Post("/api/space/"+createSpace(t, f.other, map[string]any{"Slug": "x"}).SpaceID.String()+"/tag", map[string]any{"Slug": "t"}).
		Expect(http.StatusOK).JSON(&theirs)
	e := f.admin.Post(dev+"/change_order", map[string]any{"Slug": "adopt", "EndTagID": theirs.TagID}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, "EndTagID", e.Error.ErrorMetadata.Items[0].Item)

	co := f.changeOrder(t, map[string]any{"Slug": "adopt", "ChangeWorkflowID": f.workflow.ChangeWorkflowID, "EndTagID": cs.EndTagID})
	require.Equal(t, cs.EndTagID, co.EndTagID)
	require.Equal(t, cs.EndTagID, co.AdoptedEndTagID)
	body := map[string]any{"ChangeOrderID": co.ChangeOrderID}
	r := promote(t, f.admin, "", body, http.StatusOK)
	require.Equal(t, "dev", r.Stage)
	require.Equal(t, api.UnitSkip, r.Spaces[0].Units[0].Action)
	require.Equal(t, "AlreadyTaken", r.Spaces[0].Units[0].Reason)
	require.Equal(t, api.SpaceSkipped, r.Spaces[0].Action)
	r = promote(t, f.admin, "", body, http.StatusOK)
	require.Equal(t, "staging", r.Stage)
	u := r.Spaces[0].Units[0]
	require.Equal(t, api.UnitUpgrade, u.Action)
	require.Contains(t, tagsByRevision(t, f.admin, f.stagingApp)[u.HeadRevisionNum], cs.EndTagID.String())
	require.Equal(t, "image: web:5\nreplicas: 2\n", f.data(t, f.staging.SpaceID, f.stagingApp.UnitID))
}

// TestPromoteHealthyGate: Healthy holds once the latest Apply of every covered Unit with a Target Completed
// (reported by its BridgeWorker), and fails again when a later Apply Failed.
func TestPromoteHealthyGate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newActionFixture(t, env)
	f.setTarget(t, f.target.TargetID)
	ops := "/api/space/" + f.space.SpaceID.String()
	createSpace(t, f.admin, map[string]any{"Slug": "next"})
	var wf api.ChangeWorkflow
	f.admin.Post(ops+"/change_workflow", map[string]any{"Slug": "healthy", "Stages": []any{
		map[string]any{"Name": "ops", "WhereSpace": "Slug = 'ops'"},
		map[string]any{"Name": "next", "WhereSpace": "Slug = 'next'", "Prerequisites": []string{"Healthy"}},
	}}).Expect(http.StatusOK).JSON(&wf)
	var co api.ChangeOrder
	f.admin.Post(ops+"/change_order", map[string]any{"Slug": "ship", "ChangeWorkflowID": wf.ChangeWorkflowID}).Expect(http.StatusOK).JSON(&co)
	body := map[string]any{"ChangeOrderID": co.ChangeOrderID}
	promote(t, f.admin, "", body, http.StatusOK)

	healthy := func(status int) api.PromoteGateResult {
		t.Helper()
		var r api.PromoteRefusal
		f.admin.Post("/api/promote?dry_run=true", body).Expect(status).JSON(&r)
		require.Len(t, r.Stages, 1)
		require.Len(t, r.Stages[0].Gates, 1)
		return r.Stages[0].Gates[0]
	}
	g := healthy(http.StatusConflict)
	require.False(t, g.Satisfied)
	require.Contains(t, g.Message, "app was never applied")

	apply := func(result string) {
		t.Helper()
		op := f.start(t, "apply", map[string]any{})
		f.readQueue(t)
		f.report(t, op, map[string]any{"Status": result, "TerminatedAt": time.Now().UTC()})
	}
	apply("Completed")
	g = healthy(http.StatusOK)
	require.True(t, g.Satisfied, g.Message)
	apply("Failed")
	g = healthy(http.StatusConflict)
	require.Contains(t, g.Message, "its latest apply is Failed")
}
