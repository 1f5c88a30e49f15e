package httpapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// botFixture is a Space with a Channel whose Claim is granted to a bot account (a member), an admin who
// runs commands, and the Channel's paths.
type botFixture struct {
	env     *apitest.Env
	admin   *apitest.Client
	bot     *apitest.Client
	space   api.Space
	channel api.Channel
	base    string // /api/space/{space}/channel/{channel}
}

func newBotFixture(t *testing.T, env *apitest.Env) *botFixture {
	t.Helper()
	admin := env.Client(env.Token("acme", "alice", auth.RoleAdmin))
	botUser := env.Principal("acme", "deploy-bot", auth.RoleMember)
	sp := createSpace(t, admin, map[string]any{"Slug": "ops"})
	var ch api.Channel
	admin.Post("/api/space/"+sp.SpaceID.String()+"/channel", map[string]any{
		"Slug": "deployer",
		"Commands": map[string]any{
			"deploy": map[string]any{"Description": "Deploy", "Options": []map[string]any{
				{"Name": "space", "DataType": "Space", "Required": true}, {"Name": "replicas", "DataType": "int"}, {"Name": "dry", "DataType": "bool"}}},
			"status": map[string]any{"Description": "Report status"},
		},
		"Subscriptions": []map[string]any{{"EventTypes": []string{"unit.created"}}},
		"Permissions":   map[string]any{"Claim": map[string]any{"UserIDs": map[string]bool{botUser.UserID.String(): true}}},
	}).Expect(http.StatusOK).JSON(&ch)
	return &botFixture{env: env, admin: admin, bot: env.Client(env.Token("acme", "deploy-bot", auth.RoleMember)), space: sp, channel: ch,
		base: "/api/space/" + sp.SpaceID.String() + "/channel/" + ch.ChannelID.String()}
}

func (f *botFixture) lease(t *testing.T, c *apitest.Client, body any) api.ChannelLease {
	t.Helper()
	var l api.ChannelLease
	c.Post(f.base+"/lease", body).Expect(http.StatusOK).JSON(&l)
	return l
}

// poll long-polls and returns the messages (none on 204).
func (f *botFixture) poll(t *testing.T, c *apitest.Client, token uuid.UUID, timeout, maxRuns int) []api.ChannelMessage {
	t.Helper()
	r := c.Post(f.base+"/poll", map[string]any{"ClaimToken": token, "TimeoutSeconds": timeout, "MaxRuns": maxRuns})
	if r.Status == http.StatusNoContent {
		return nil
	}
	var msgs []api.ChannelMessage
	r.Expect(http.StatusOK).JSON(&msgs)
	return msgs
}

// messageType is a poll message's Type.
func messageType(t *testing.T, m api.ChannelMessage) string {
	t.Helper()
	kind, err := m.Discriminator()
	require.NoError(t, err)
	return kind
}

// runOf is the CommandRun of a poll message, which must be one.
func runOf(t *testing.T, m api.ChannelMessage) api.CommandRun {
	t.Helper()
	require.Equal(t, string(api.ChannelCommandRunMessageTypeCommandRun), messageType(t, m))
	msg, err := m.AsChannelCommandRunMessage()
	require.NoError(t, err)
	return msg.CommandRun
}

// eventOf is the event of a poll message, which must be one.
func eventOf(t *testing.T, m api.ChannelMessage) api.EventLogEntry {
	t.Helper()
	require.Equal(t, string(api.Event), messageType(t, m))
	msg, err := m.AsChannelEventMessage()
	require.NoError(t, err)
	return msg.Event
}

func (f *botFixture) run(t *testing.T, body map[string]any) api.CommandRun {
	t.Helper()
	var run api.CommandRun
	f.admin.Post("/api/command_run", body).Expect(http.StatusOK).JSON(&run)
	return run
}

func (f *botFixture) getRun(t *testing.T, id uuid.UUID) api.CommandRun {
	t.Helper()
	var ext api.ExtendedCommandRun
	f.admin.Get(f.base + "/command_run/" + id.String()).Expect(http.StatusOK).JSON(&ext)
	return ext.CommandRun
}

func TestChannelLease(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	f := newBotFixture(t, env)

	// Claim is granted, never implied by a role below admin.
	member := env.Client(env.Token("acme", "mo", auth.RoleMember))
	member.Post(f.base+"/lease", nil).ExpectError(http.StatusForbidden, api.ErrorTypePermission)
	f.bot.Post(f.base+"/lease", map[string]any{"Commands": []string{"deploy", "launch"}}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)

	l := f.lease(t, f.bot, map[string]any{"Commands": []string{"deploy"}, "HolderAddress": "pod-1"})
	require.Equal(t, 60, l.LeaseSeconds)
	require.True(t, l.ExpiresAt.After(time.Now()))
	f.bot.Post(f.base+"/lease", nil).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var ch api.ExtendedChannel
	f.admin.Get(f.base).Expect(http.StatusOK).JSON(&ch)
	require.Equal(t, "Connected", ch.Channel.Condition)
	require.Equal(t, "pod-1", ch.Channel.LeaseHolderAddress)
	require.NotNil(t, ch.Channel.LastSeenAt)

	// A poll renews; nothing arrived is 204; a stale token is 409; the holder releases. The protocol
	// paths take Slugs as well as IDs.
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10))
	f.bot.Post("/api/space/ops/channel/deployer/poll", map[string]any{"ClaimToken": l.ClaimToken, "TimeoutSeconds": 0}).Expect(http.StatusNoContent)
	f.bot.Post("/api/space/nope/channel/deployer/poll", map[string]any{"ClaimToken": l.ClaimToken}).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.bot.Post(f.base+"/poll", map[string]any{"ClaimToken": uuid.New(), "TimeoutSeconds": 0}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.bot.Post(f.base+"/poll", map[string]any{"ClaimToken": l.ClaimToken, "TimeoutSeconds": 61}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	f.bot.Delete(f.base+"/lease?claim_token="+uuid.NewString()).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.bot.Delete(f.base + "/lease?claim_token=" + l.ClaimToken.String()).Expect(http.StatusNoContent)
	f.bot.Post(f.base+"/poll", map[string]any{"ClaimToken": l.ClaimToken, "TimeoutSeconds": 0}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	f.admin.Get(f.base).Expect(http.StatusOK).JSON(&ch)
	require.Equal(t, "Disconnected", ch.Channel.Condition)

	// Racing claimers: exactly one wins.
	var wg sync.WaitGroup
	codes := make([]int, 12)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = f.bot.Post(f.base+"/lease", nil).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		require.Contains(t, []int{http.StatusOK, http.StatusConflict}, c)
		if c == http.StatusOK {
			won++
		}
	}
	require.Equal(t, 1, won)

	// Other organizations cannot see the Channel.
	other := env.Client(env.Token("other", "eve", auth.RoleAdmin))
	other.Post(f.base+"/lease", nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	other.Post("/api/space/ops/channel/deployer/lease", nil).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
}

func TestCommandRuns(t *testing.T) { inEachLongPollMode(t, testCommandRuns) }

func testCommandRuns(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newBotFixture(t, env)
	l := f.lease(t, f.bot, nil)

	// Options are parsed by DataType; the Space option is given by Slug and passed as its ID.
	run := f.run(t, map[string]any{"Command": "deploy", "Options": map[string]string{"space": "ops", "replicas": "3", "dry": "true"}})
	require.Equal(t, api.CommandRunStatusWaiting, run.Status)
	require.Equal(t, f.channel.ChannelID, run.ChannelID)
	require.Equal(t, map[string]any{"space": f.space.SpaceID.String(), "replicas": float64(3), "dry": true}, run.Parameters)
	require.WithinDuration(t, run.CreatedAt.Add(5*time.Minute), run.Deadline, 2*time.Second)
	require.Nil(t, run.Result)

	// Bad runs are refused before they exist.
	for _, bad := range []map[string]any{
		{"Command": "deploy", "Options": map[string]string{"replicas": "3"}},                 // missing required
		{"Command": "deploy", "Options": map[string]string{"space": "ops", "replicas": "x"}}, // not an int
		{"Command": "deploy", "Options": map[string]string{"space": "nope"}},                 // unknown Space
		{"Command": "deploy", "Options": map[string]string{"space": "ops", "color": "blue"}}, // not an option
		{"Command": "deploy", "Parameters": map[string]any{"space": "ops", "replicas": 1.5}}, // not an int
		{"Command": "launch"}, // no Channel declares it
		{"Command": "status", "ChannelID": uuid.New()},
	} {
		f.admin.Post("/api/command_run", bad).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	}
	e := f.admin.Post("/api/command_run", map[string]any{"Command": "status", "DeadlineSeconds": 3601}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, 1, strings.Count(e.Message, "DeadlineSeconds"), "the message says it once: %s", e.Message)
	var runs []api.ExtendedCommandRun
	f.admin.Get("/api/command_run").Expect(http.StatusOK).JSON(&runs)
	require.Len(t, runs, 1)

	// A JSON object of parameters is accepted instead; a viewer may not run commands.
	run2 := f.run(t, map[string]any{"Command": "deploy", "Parameters": map[string]any{"space": f.space.SpaceID, "dry": false}, "DeadlineSeconds": 600})
	require.Equal(t, map[string]any{"space": f.space.SpaceID.String(), "dry": false}, run2.Parameters)
	viewer := env.Client(env.Token("acme", "vic", auth.RoleViewer))
	viewer.Post("/api/command_run", map[string]any{"Command": "status"}).ExpectError(http.StatusForbidden, api.ErrorTypePermission)

	// The holder takes runs oldest first; MaxRuns bounds them.
	msgs := f.poll(t, f.bot, l.ClaimToken, 5, 1)
	require.Len(t, msgs, 1)
	require.Equal(t, "CommandRun", messageType(t, msgs[0]))
	require.Equal(t, run.CommandRunID, runOf(t, msgs[0]).CommandRunID)
	require.Equal(t, api.CommandRunStatusDelivered, runOf(t, msgs[0]).Status)
	require.NotNil(t, runOf(t, msgs[0]).DeliveredAt)

	// A delivered run cannot be cancelled; a waiting one can.
	f.admin.Post(f.base+"/command_run/"+run.CommandRunID.String()+"/cancel", nil).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	var cancelled api.CommandRun
	f.admin.Post(f.base+"/command_run/"+run2.CommandRunID.String()+"/cancel", nil).Expect(http.StatusOK).JSON(&cancelled)
	require.Equal(t, api.CommandRunStatusCancelled, cancelled.Status)
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10), "a cancelled run is never delivered")

	// The first answer wins.
	result := f.base + "/command_run/" + run.CommandRunID.String() + "/result"
	f.admin.Post(result, map[string]any{"Status": "Completed"}).Expect(http.StatusOK) // admins hold Claim
	run3 := f.run(t, map[string]any{"Command": "status", "SpaceID": f.space.SpaceID})
	msgs = f.poll(t, f.bot, l.ClaimToken, 5, 10)
	require.Len(t, msgs, 1)
	var done api.CommandRun
	result = f.base + "/command_run/" + run3.CommandRunID.String() + "/result"
	f.bot.Post(result, map[string]any{"Status": "Completed", "Result": map[string]any{"healthy": true}}).Expect(http.StatusOK).JSON(&done)
	require.Equal(t, api.CommandRunStatusCompleted, done.Status)
	require.Equal(t, map[string]any{"healthy": true}, done.Result)
	f.bot.Post(result, map[string]any{"Status": "Failed", "ErrorMessage": "late"}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	run4 := f.run(t, map[string]any{"Command": "status", "SpaceID": f.space.SpaceID})
	require.Len(t, f.poll(t, f.bot, l.ClaimToken, 5, 10), 1)
	f.bot.Post(f.base+"/command_run/"+run4.CommandRunID.String()+"/result", map[string]any{"Status": "Completed", "Result": nil}).Expect(http.StatusOK)
	f.bot.Post(result, map[string]any{"Status": "Waiting"}).ExpectError(http.StatusBadRequest, api.ErrorTypeUserInput)
	require.Equal(t, api.CommandRunStatusCompleted, f.getRun(t, run3.CommandRunID).Status)

	// Lists: the Channel's runs, filtered by Status; other organizations see none.
	f.admin.Get(f.base + "/command_run?" + where("Status = 'Completed'").Encode()).Expect(http.StatusOK).JSON(&runs)
	require.Len(t, runs, 3)
	f.admin.Get("/api/command_run?include=SpaceID&order_by=CreatedAt").Expect(http.StatusOK).JSON(&runs)
	require.Len(t, runs, 4)
	require.Equal(t, "ops", runs[0].Space.Slug)
	other := env.Client(env.Token("other", "eve", auth.RoleAdmin))
	other.Get("/api/command_run").Expect(http.StatusOK).JSON(&runs)
	require.Empty(t, runs)
	other.Get(f.base+"/command_run/"+run3.CommandRunID.String()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)
	f.admin.Get(f.base+"/command_run/"+uuid.NewString()).ExpectError(http.StatusNotFound, api.ErrorTypeNotFound)

	// Two Channels declaring a command make it ambiguous unless the Channel is named.
	var second api.Channel
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/channel", map[string]any{"Slug": "second", "Commands": map[string]any{"status": map[string]any{}}}).
		Expect(http.StatusOK).JSON(&second)
	f.admin.Post("/api/command_run", map[string]any{"Command": "status"}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	require.Equal(t, second.ChannelID, f.run(t, map[string]any{"Command": "status", "ChannelID": second.ChannelID}).ChannelID)
}

func TestCommandRunTimeouts(t *testing.T) { inEachLongPollMode(t, testCommandRunTimeouts) }

func testCommandRunTimeouts(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newBotFixture(t, env)

	// A run no bot takes expires at its deadline.
	run := f.run(t, map[string]any{"Command": "status", "DeadlineSeconds": 1})
	require.Eventually(t, func() bool { return f.getRun(t, run.CommandRunID).Status == api.CommandRunStatusExpired }, 20*time.Second, 200*time.Millisecond)
	require.NotEmpty(t, f.getRun(t, run.CommandRunID).ErrorMessage)

	// A run delivered to a holder that loses its lease is delivered again to the next holder.
	first := f.lease(t, f.bot, nil)
	run = f.run(t, map[string]any{"Command": "status"})
	msgs := f.poll(t, f.bot, first.ClaimToken, 5, 10)
	require.Len(t, msgs, 1)
	f.bot.Delete(f.base + "/lease?claim_token=" + first.ClaimToken.String()).Expect(http.StatusNoContent)
	next := f.lease(t, f.bot, nil)
	msgs = f.poll(t, f.bot, next.ClaimToken, 5, 10)
	require.Len(t, msgs, 1)
	require.Equal(t, run.CommandRunID, runOf(t, msgs[0]).CommandRunID)
	require.Empty(t, f.poll(t, f.bot, next.ClaimToken, 0, 10), "the current holder does not get its own runs again")
}
