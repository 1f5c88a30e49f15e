package httpapi_test

import (
	"context"
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

func TestChannelEvents(t *testing.T) { inEachLongPollMode(t, testChannelEvents) }

func testChannelEvents(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newBotFixture(t, env)
	l := f.lease(t, f.bot, nil)
	units := "/api/space/" + f.space.SpaceID.String() + "/unit"

	// Subscribed events arrive in log order, once; others (space.created) are skipped.
	f.admin.Post("/api/space", map[string]any{"Slug": "elsewhere"}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "a", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "b", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	other := env.Client(env.Token("other", "eve", auth.RoleAdmin))
	osp := createSpace(t, other, map[string]any{"Slug": "ops"})
	other.Post("/api/space/"+osp.SpaceID.String()+"/unit", map[string]any{"Slug": "x", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)

	msgs := f.poll(t, f.bot, l.ClaimToken, 5, 10)
	require.Len(t, msgs, 2, "only this organization's subscribed events")
	for _, m := range msgs {
		require.Equal(t, "Event", messageType(t, m))
		require.Equal(t, "unit.created", eventOf(t, m).EventType)
		require.Equal(t, f.space.SpaceID, *eventOf(t, m).SpaceID)
	}
	require.Less(t, eventOf(t, msgs[0]).CursorID, eventOf(t, msgs[1]).CursorID)
	require.Equal(t, "a", eventOf(t, msgs[0]).Payload.(map[string]any)["Slug"])
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10), "at most once")

	// The bookmark advanced; moving it back replays.
	var ch api.ExtendedChannel
	f.admin.Get(f.base).Expect(http.StatusOK).JSON(&ch)
	require.GreaterOrEqual(t, ch.Channel.EventBookmark, eventOf(t, msgs[1]).CursorID)
	f.admin.Patch(f.base, map[string]any{"EventBookmark": eventOf(t, msgs[0]).CursorID}).Expect(http.StatusOK)
	replay := f.poll(t, f.bot, l.ClaimToken, 5, 10)
	require.Len(t, replay, 1)
	require.Equal(t, eventOf(t, msgs[1]).CursorID, eventOf(t, replay[0]).CursorID)

	// A PUT of what a GET returned keeps the bookmark polls have moved since (no double delivery); a
	// bookmark past the tail is refused; null moves it to the tail.
	f.admin.Get(f.base).Expect(http.StatusOK).JSON(&ch)
	stale := ch.Channel
	f.admin.Post(units, map[string]any{"Slug": "c", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	require.Len(t, f.poll(t, f.bot, l.ClaimToken, 5, 10), 1)
	stale.DisplayName = "Deployer"
	var put api.Channel
	f.admin.Put(f.base, stale).Expect(http.StatusOK).JSON(&put)
	require.Greater(t, put.EventBookmark, stale.EventBookmark)
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10))
	f.admin.Patch(f.base, map[string]any{"EventBookmark": put.EventBookmark + 1_000_000}).ExpectError(http.StatusBadRequest, api.ErrorTypeValidation)
	f.admin.Patch(f.base, map[string]any{"EventBookmark": 0}).Expect(http.StatusOK)
	var tail api.Channel
	f.admin.Patch(f.base, map[string]any{"EventBookmark": nil}).Expect(http.StatusOK).JSON(&tail)
	require.GreaterOrEqual(t, tail.EventBookmark, put.EventBookmark)
	require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 0, 10))

	// A subscription to a Target selects the events of its Units (any type when EventTypes is empty).
	var target api.Target
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/target", map[string]any{"Slug": "cluster", "ToolchainType": "Kubernetes/YAML", "ProviderType": "ArgoCDOCI"}).
		Expect(http.StatusOK).JSON(&target)
	f.admin.Patch(f.base, map[string]any{"Subscriptions": []map[string]any{{"EventTypes": []string{}, "TargetID": target.TargetID}}}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "untargeted", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	f.admin.Post(units, map[string]any{"Slug": "targeted", "ToolchainType": "Kubernetes/YAML", "TargetID": target.TargetID}).Expect(http.StatusOK)
	msgs = f.poll(t, f.bot, l.ClaimToken, 5, 10)
	require.Len(t, msgs, 2, "the Target's own creation and its Unit's; not the other Unit's")
	require.Equal(t, "target.created", eventOf(t, msgs[0]).EventType)
	require.Equal(t, "unit.created", eventOf(t, msgs[1]).EventType)
	require.Equal(t, target.TargetID, *eventOf(t, msgs[1]).TargetID)
	require.Equal(t, "targeted", eventOf(t, msgs[1]).Payload.(map[string]any)["Slug"])
}

// TestPollEndsAtShutdown: a replica shutting down answers its waiting polls at once (204), so bots move
// to another replica instead of being cut off.
func TestPollEndsAtShutdown(t *testing.T) { inEachLongPollMode(t, testPollEndsAtShutdown) }

func testPollEndsAtShutdown(t *testing.T, opts apitest.Options) {
	t.Parallel()
	env := apitest.New(t, opts)
	f := newBotFixture(t, env)
	l := f.lease(t, f.bot, nil)
	done := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		defer func() { done <- time.Since(start) }() // also when the poll fails the test, which then ends
		require.Empty(t, f.poll(t, f.bot, l.ClaimToken, 50, 10))
	}()
	waitPolls(t, env, 1, 1)
	env.App.Notifier.StopWaiters()
	require.Less(t, <-done, 25*time.Second, "answered at shutdown, not at its timeout")
}

// TestLongPollAcrossReplicas: a poll held on one replica wakes when a run is created, or an event
// committed, on another.
func TestLongPollAcrossReplicas(t *testing.T) { inEachLongPollMode(t, testLongPollAcrossReplicas) }

func testLongPollAcrossReplicas(t *testing.T, opts apitest.Options) {
	t.Parallel()
	envA := apitest.New(t, opts)
	envB := apitest.New(t, onDatabase(opts, envA.DBURL))
	f := newBotFixture(t, envA)
	botB := envB.Client(envB.Token("acme", "deploy-bot", auth.RoleMember))
	l := f.lease(t, botB, nil)

	type polled struct {
		msgs    []api.ChannelMessage
		elapsed time.Duration
	}
	const timeout = 50
	waitOnB := func() <-chan polled {
		out := make(chan polled, 1)
		go func() {
			start := time.Now()
			msgs := f.poll(t, botB, l.ClaimToken, timeout, 10)
			out <- polled{msgs, time.Since(start)}
		}()
		return out
	}

	// The run arrives while the poll waits rather than before.
	done := waitOnB()
	waitPolls(t, envB, 1, 1)
	run := f.run(t, map[string]any{"Command": "status"})
	got := <-done
	require.Len(t, got.msgs, 1)
	require.Equal(t, run.CommandRunID, runOf(t, got.msgs[0]).CommandRunID)
	require.Less(t, got.elapsed, timeout*time.Second/2, "woken by the commit, not by the timeout")

	done = waitOnB()
	waitPolls(t, envB, 1, 1)
	f.admin.Post("/api/space/"+f.space.SpaceID.String()+"/unit", map[string]any{"Slug": "late", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	got = <-done
	require.NotEmpty(t, got.msgs)
	require.Equal(t, "unit.created", eventOf(t, got.msgs[len(got.msgs)-1]).EventType)
	require.Less(t, got.elapsed, timeout*time.Second/2)
}

// TestChannelsAcrossReplicas runs the protocol against two servers on one database: racing claimers on
// both get one lease between them; a run delivered on one replica is delivered again on the other after
// the lease moves, and only the first answer counts; events are handed out once and in order across the
// move; a run expires once although both replicas sweep; cancel rules hold whichever replica is asked.
func TestChannelsAcrossReplicas(t *testing.T) { inEachLongPollMode(t, testChannelsAcrossReplicas) }

func testChannelsAcrossReplicas(t *testing.T, opts apitest.Options) {
	t.Parallel()
	envA := apitest.New(t, opts)
	envB := apitest.New(t, onDatabase(opts, envA.DBURL))
	f := newBotFixture(t, envA)
	botA := f.bot
	botB := envB.Client(envB.Token("acme", "deploy-bot", auth.RoleMember))
	adminB := envB.Client(envB.Token("acme", "alice", auth.RoleAdmin))

	// Racing claimers on both replicas: one lease.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []api.ChannelLease
	for i := 0; i < 12; i++ {
		c := botA
		if i%2 == 1 {
			c = botB
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.Post(f.base+"/lease", nil)
			require.Contains(t, []int{http.StatusOK, http.StatusConflict}, r.Status)
			if r.Status == http.StatusOK {
				var l api.ChannelLease
				r.JSON(&l)
				mu.Lock()
				winners = append(winners, l)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, winners, 1)
	botA.Delete(f.base + "/lease?claim_token=" + winners[0].ClaimToken.String()).Expect(http.StatusNoContent)

	// Delivered on A, lease lost, delivered again on B; B's answer wins, A's late one is refused.
	leaseA := f.lease(t, botA, nil)
	run := f.run(t, map[string]any{"Command": "status"})
	require.Len(t, f.poll(t, botA, leaseA.ClaimToken, 5, 10), 1)
	botA.Delete(f.base + "/lease?claim_token=" + leaseA.ClaimToken.String()).Expect(http.StatusNoContent)
	leaseB := f.lease(t, botB, nil)
	msgs := f.poll(t, botB, leaseB.ClaimToken, 5, 10)
	require.Len(t, msgs, 1)
	require.Equal(t, run.CommandRunID, runOf(t, msgs[0]).CommandRunID)
	result := f.base + "/command_run/" + run.CommandRunID.String() + "/result"
	botB.Post(result, map[string]any{"Status": "Completed", "Result": "from B"}).Expect(http.StatusOK)
	botA.Post(result, map[string]any{"Status": "Completed", "Result": "from A"}).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
	require.Equal(t, "from B", f.getRun(t, run.CommandRunID).Result)

	// Events: in order on B, then none again on A after the lease moves, then only what is new.
	units := "/api/space/" + f.space.SpaceID.String() + "/unit"
	for _, slug := range []string{"u1", "u2", "u3"} {
		f.admin.Post(units, map[string]any{"Slug": slug, "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	}
	msgs = f.poll(t, botB, leaseB.ClaimToken, 5, 0)
	require.Len(t, msgs, 3)
	for i, slug := range []string{"u1", "u2", "u3"} {
		require.Equal(t, slug, eventOf(t, msgs[i]).Payload.(map[string]any)["Slug"])
	}
	botB.Delete(f.base + "/lease?claim_token=" + leaseB.ClaimToken.String()).Expect(http.StatusNoContent)
	leaseA = f.lease(t, botA, nil)
	require.Empty(t, f.poll(t, botA, leaseA.ClaimToken, 0, 0))
	adminB.Post(units, map[string]any{"Slug": "u4", "ToolchainType": "Kubernetes/YAML"}).Expect(http.StatusOK)
	msgs = f.poll(t, botA, leaseA.ClaimToken, 5, 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "u4", eventOf(t, msgs[0]).Payload.(map[string]any)["Slug"])

	// Both replicas sweep; the run expires once (one command_run.updated event).
	expiring := f.run(t, map[string]any{"Command": "deploy", "Options": map[string]string{"space": "ops"}, "DeadlineSeconds": 1})
	require.Eventually(t, func() bool { return f.getRun(t, expiring.CommandRunID).Status == api.CommandRunStatusExpired }, 20*time.Second, 200*time.Millisecond)
	var updates int
	require.NoError(t, envA.App.Store.Pool.QueryRow(context.Background(),
		"SELECT count(*) FROM event_log WHERE subject_entity_id = $1 AND event_type = 'command_run.updated'", expiring.CommandRunID).Scan(&updates))
	require.Equal(t, 1, updates)

	// Cancel on the other replica; a second cancel is refused.
	waiting := f.run(t, map[string]any{"Command": "status"})
	cancel := f.base + "/command_run/" + waiting.CommandRunID.String() + "/cancel"
	adminB.Post(cancel, nil).Expect(http.StatusOK)
	f.admin.Post(cancel, nil).ExpectError(http.StatusConflict, api.ErrorTypeConflict)
}
