package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// guestFixture: one organization with a Space granted to a guest ("granted", 25 Units) and one it is not
// ("hidden", over 1,000 Units whose Slugs sort before the granted ones, so a list that filtered after its
// LIMIT would answer empty first pages).
type guestFixture struct {
	env             *apitest.Env
	admin, guest    *apitest.Client
	guestID         uuid.UUID
	granted, hidden api.Space
	visible         []string // the granted Space's Unit Slugs, sorted
	hiddenUnit      api.UnitCreateOrUpdateResponse
}

const hiddenUnits = 1010

func newGuestFixture(t *testing.T) *guestFixture {
	t.Helper()
	env := apitest.New(t)
	f := &guestFixture{env: env, admin: env.Client(env.Token("acme", "alice", auth.RoleAdmin))}
	f.guestID = env.Principal("acme", "gus", auth.RoleGuest).UserID
	f.guest = env.Client(env.Token("acme", "gus", auth.RoleGuest))
	f.hidden = createSpace(t, f.admin, map[string]any{"Slug": "hidden"})
	f.granted = createSpace(t, f.admin, map[string]any{"Slug": "granted",
		"Permissions": map[string]any{"View": map[string]any{"UserIDs": map[string]bool{f.guestID.String(): true}}}})
	for i := 0; i < hiddenUnits; i++ {
		var u api.UnitCreateOrUpdateResponse
		f.admin.Post("/api/space/"+f.hidden.SpaceID.String()+"/unit", map[string]any{"Slug": fmt.Sprintf("a-%04d", i), "ToolchainType": "Kubernetes/YAML"}).
			Expect(http.StatusOK).JSON(&u)
		if i == 0 {
			f.hiddenUnit = u
		}
	}
	for i := 0; i < 25; i++ {
		slug := fmt.Sprintf("b-%02d", i)
		var u api.UnitCreateOrUpdateResponse
		units := "/api/space/" + f.granted.SpaceID.String() + "/unit"
		f.admin.Post(units, map[string]any{"Slug": slug, "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK).JSON(&u)
		f.admin.Do(http.MethodPut, units+"/"+u.Unit.UnitID.String()+"/data", apitest.Raw{ContentType: "text/plain", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")}).
			Expect(http.StatusOK)
		f.visible = append(f.visible, slug)
	}
	f.admin.Do(http.MethodPut, "/api/space/"+f.hidden.SpaceID.String()+"/unit/"+f.hiddenUnit.Unit.UnitID.String()+"/data",
		apitest.Raw{ContentType: "text/plain", Data: []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")}).Expect(http.StatusOK)
	return f
}

// TestGuestSeesOnlyWhatIsGranted: a guest holds nothing organization-wide; a View grant on a Space lets it
// see that Space and its Units, in full pages however many rows are withheld, and nothing else exists
// for it: hidden entities are 404 exactly as unknown ones are.
func TestGuestSeesOnlyWhatIsGranted(t *testing.T) {
	t.Parallel()
	f := newGuestFixture(t)

	// Lists: full pages of the granted Space's Units only, continued to the end.
	for _, path := range []string{"/api/unit", "/api/space/" + f.granted.SpaceID.String() + "/unit"} {
		got, pages := unitSlugPages(t, f.guest, path, 10)
		require.Equal(t, f.visible, got, path)
		require.Equal(t, 3, pages, "%s: pages of 10, 10 and 5", path)
	}
	// The admin sees everything.
	got, _ := unitSlugPages(t, f.admin, "/api/unit", 1000)
	require.Len(t, got, hiddenUnits+25)

	// Spaces: only the granted one.
	var spaces []api.ExtendedSpace
	f.guest.Get("/api/space").Expect(http.StatusOK).JSON(&spaces)
	require.Len(t, spaces, 1)
	require.Equal(t, f.granted.SpaceID, spaces[0].Space.SpaceID)

	// Hidden entities are 404, answered as an unknown ID is (no hint that they exist).
	hiddenUnit := "/api/space/" + f.hidden.SpaceID.String() + "/unit/" + f.hiddenUnit.Unit.UnitID.String()
	unknownUnit := "/api/space/" + f.hidden.SpaceID.String() + "/unit/" + uuid.NewString()
	e := f.guest.Get(hiddenUnit).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	u := f.guest.Get(unknownUnit).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	require.Equal(t, u.Error.ErrorMetadata.EntityType, e.Error.ErrorMetadata.EntityType)
	require.Equal(t, strings.ReplaceAll(u.Error.Message, unknownUnit[strings.LastIndex(unknownUnit, "/")+1:], "X"),
		strings.ReplaceAll(e.Error.Message, f.hiddenUnit.Unit.UnitID.String(), "X"))
	f.guest.Get("/api/space/"+f.hidden.SpaceID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.guest.Get("/api/space/"+f.hidden.SpaceID.String()+"/unit").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.guest.Patch(hiddenUnit, map[string]any{"DisplayName": "x"}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.guest.Delete(hiddenUnit).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.guest.Get(hiddenUnit+"/revision").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.guest.Post("/api/space/"+f.hidden.SpaceID.String()+"/unit", map[string]any{"Slug": "x", "ToolchainType": "Kubernetes/YAML"}).
		ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// View is not Edit: a visible Unit is read, not changed (403, as it exists for the guest).
	visible := "/api/space/" + f.granted.SpaceID.String() + "/unit/"
	var listed []api.ExtendedUnit
	f.guest.Get("/api/space/" + f.granted.SpaceID.String() + "/unit?where=" + url.QueryEscape("Slug = 'b-00'")).Expect(http.StatusOK).JSON(&listed)
	require.Len(t, listed, 1)
	var b00 api.ExtendedUnit
	f.guest.Get(visible + listed[0].Unit.UnitID.String()).Expect(http.StatusOK).JSON(&b00)
	require.Equal(t, "b-00", b00.Unit.Slug)
	f.guest.Patch(visible+b00.Unit.UnitID.String(), map[string]any{"DisplayName": "x"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Nothing organization-wide: members are refused, and the organization's record is, like everything it
	// may not view, not found.
	f.guest.Get("/api/organization/"+f.granted.OrganizationID.String()+"/organization_member").ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	f.guest.Get("/api/organization/"+f.granted.OrganizationID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.guest.Post("/api/space", map[string]any{"Slug": "mine"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// Revisions across the organization: the granted Space's only.
	var all []api.ExtendedRevision
	f.admin.Get("/api/revision?limit=1000").Expect(http.StatusOK).JSON(&all)
	require.Len(t, all, 26, "the admin sees the hidden Unit's Revision too")
	var revs []api.ExtendedRevision
	f.guest.Get("/api/revision?limit=100").Expect(http.StatusOK).JSON(&revs)
	require.Len(t, revs, 25)
	for _, r := range revs {
		require.Equal(t, f.granted.SpaceID, r.Revision.SpaceID)
	}
}

// TestGuestGrantOnOneUnit: a grant on one Unit (not its Space) shows that Unit alone; its Space stays
// unseen, so includes of it are left empty.
func TestGuestGrantOnOneUnit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	guestID := env.Principal("acme", "gus", auth.RoleGuest).UserID
	guest := env.Client(env.Token("acme", "gus", auth.RoleGuest))
	sp := createSpace(t, admin, map[string]any{"Slug": "s"})
	units := "/api/space/" + sp.SpaceID.String() + "/unit"
	var one api.UnitCreateOrUpdateResponse
	admin.Post(units, map[string]any{"Slug": "one", "ToolchainType": "Kubernetes/YAML",
		"Permissions": map[string]any{"View": map[string]any{"UserIDs": map[string]bool{guestID.String(): true}}}}).Expect(http.StatusOK).JSON(&one)
	admin.Post(units, map[string]any{"Slug": "two", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)

	var list []api.ExtendedUnit
	guest.Get("/api/unit?include=SpaceID").Expect(http.StatusOK).JSON(&list)
	require.Len(t, list, 1)
	require.Equal(t, one.Unit.UnitID, list[0].Unit.UnitID)
	require.Nil(t, list[0].Space, "the Space is not expanded: the guest may not view it")
	guest.Get(units + "/" + one.Unit.UnitID.String()).Expect(http.StatusOK)
	guest.Get(units).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	guest.Get("/api/space/"+sp.SpaceID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

// unitSlugPages pages through a Unit list ordered by Slug and returns the Slugs and the number of pages;
// every page but the last must be full.
func unitSlugPages(t *testing.T, c *apitest.Client, path string, limit int) ([]string, int) {
	t.Helper()
	return slugPages(t, c, path, url.Values{"order_by": {"Slug"}}, limit, func(e api.ExtendedUnit) string { return e.Unit.Slug })
}

// TestGuestServiceAccountBot: a bot whose ServiceAccount has the guest role, signed in with its key, is
// confined to the Space it is granted: its lists, includes and Channel events hold nothing of the others.
func TestGuestServiceAccountBot(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	var sa api.ServiceAccount
	admin.Post("/api/service_account", map[string]any{"Slug": "confined-bot", "OrgRole": "guest"}).Expect(http.StatusOK).JSON(&sa)
	require.Equal(t, api.OrgRole("guest"), sa.OrgRole)
	key := newSigner(t)
	admin.Post("/api/service_account/"+sa.ServiceAccountID.String()+"/key", map[string]any{"PublicJWK": key.jwk}).Expect(http.StatusOK)
	bot := env.Client(key.token(t, env, sa.ServiceAccountID.String(), ""))
	require.Equal(t, api.OrgRole("guest"), roleOf(t, bot))

	botUser := map[string]bool{sa.UserID.String(): true}
	granted := createSpace(t, admin, map[string]any{"Slug": "granted", "Permissions": map[string]any{"View": map[string]any{"UserIDs": botUser}}})
	hidden := createSpace(t, admin, map[string]any{"Slug": "hidden"})
	var ch api.Channel
	admin.Post("/api/space/"+granted.SpaceID.String()+"/channel", map[string]any{
		"Slug": "deployer", "Subscriptions": []map[string]any{{"EventTypes": []string{"unit.created"}}},
		"Permissions": map[string]any{"Claim": map[string]any{"UserIDs": botUser}},
	}).Expect(http.StatusOK).JSON(&ch)
	base := "/api/space/" + granted.SpaceID.String() + "/channel/" + ch.ChannelID.String()
	var l api.ChannelLease
	bot.Post(base+"/lease", nil).Expect(http.StatusOK).JSON(&l)

	// Units are created in both Spaces: only the granted Space's reach the bot, in lists and as events.
	for _, sp := range []api.Space{hidden, granted, hidden} {
		admin.Post("/api/space/"+sp.SpaceID.String()+"/unit", map[string]any{"Slug": "u-" + uuid.NewString()[:8], "ToolchainType": "AppConfig/Env"}).
			Expect(http.StatusOK)
	}
	var units []api.ExtendedUnit
	bot.Get("/api/unit?include=SpaceID,OrganizationID").Expect(http.StatusOK).JSON(&units)
	require.Len(t, units, 1)
	require.Equal(t, granted.SpaceID, units[0].Unit.SpaceID)
	require.NotNil(t, units[0].Space, "the granted Space is expanded")
	require.Nil(t, units[0].Organization, "the organization, which a guest may not view, is not")
	var spaces []api.ExtendedSpace
	bot.Get("/api/space").Expect(http.StatusOK).JSON(&spaces)
	require.Len(t, spaces, 1)
	bot.Get("/api/space/"+hidden.SpaceID.String()+"/unit").ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	var events []api.ChannelMessage
	for len(events) < 1 {
		r := bot.Post(base+"/poll", map[string]any{"ClaimToken": l.ClaimToken, "TimeoutSeconds": 5, "MaxRuns": 10})
		require.Equal(t, http.StatusOK, r.Status, "the granted Space's event arrives")
		var msgs []api.ChannelMessage
		r.JSON(&msgs)
		events = append(events, msgs...)
	}
	require.Len(t, events, 1)
	require.Equal(t, granted.SpaceID, *eventOf(t, events[0]).SpaceID)
	// The hidden Space's later events never arrive either.
	admin.Post("/api/space/"+hidden.SpaceID.String()+"/unit", map[string]any{"Slug": "late", "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK)
	bot.Post(base+"/poll", map[string]any{"ClaimToken": l.ClaimToken, "TimeoutSeconds": 1}).Expect(http.StatusNoContent)

	// It sees its own account but cannot raise its role through it.
	bot.Patch("/api/service_account/"+sa.ServiceAccountID.String(), map[string]any{"OrgRole": "admin"}).
		ExpectError(http.StatusForbidden, api.ErrorTypePermission)
}

// TestGuestWorkerEvents: a BridgeWorker with the guest role sees itself and reads, through its event
// cursor, only the events of the Spaces its bot User may view; a grant given later applies from then on.
func TestGuestWorkerEvents(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	home := createSpace(t, admin, map[string]any{"Slug": "home"})
	other := createSpace(t, admin, map[string]any{"Slug": "other"})
	var w api.BridgeWorker
	admin.Post("/api/space/"+home.SpaceID.String()+"/bridge_worker", map[string]any{"Slug": "confined", "OrgRole": "guest"}).Expect(http.StatusOK).JSON(&w)
	worker := env.Client(workerToken(t, env, w.BridgeWorkerID, w.Secret))
	base := "/api/space/" + home.SpaceID.String() + "/bridge_worker/" + w.BridgeWorkerID.String()
	worker.Get(base).Expect(http.StatusOK)
	poll := func() []api.EventLogEntry {
		var out []api.EventLogEntry
		worker.Post(base+"/event_cursor/main/poll", map[string]any{"TimeoutSeconds": 0}).Expect(http.StatusOK).JSON(&out)
		return out
	}
	require.Empty(t, poll(), "the first poll places the cursor at the tail")
	unit := func(sp api.Space, slug string) {
		admin.Post("/api/space/"+sp.SpaceID.String()+"/unit", map[string]any{"Slug": slug, "ToolchainType": "AppConfig/Env"}).Expect(http.StatusOK)
	}
	unit(home, "a")
	unit(other, "b")
	require.Empty(t, poll(), "granted nothing, it sees no Space's events, not even its own Space's")

	admin.Patch("/api/space/"+home.SpaceID.String(), map[string]any{"Permissions": map[string]any{
		"View": map[string]any{"UserIDs": map[string]bool{w.UserID.String(): true}}}}).Expect(http.StatusOK)
	unit(home, "c")
	unit(other, "d")
	got := poll()
	var slugs []string
	for _, e := range got {
		require.Equal(t, home.SpaceID, *e.SpaceID)
		if e.EventType == "unit.created" {
			slugs = append(slugs, e.Payload.(map[string]any)["Slug"].(string))
		}
	}
	require.Equal(t, []string{"c"}, slugs)
}
